"""``forge mcp serve`` and ``forge fhir serve``: one trial of a package served to a client outside forge (over MCP,
or as a FHIR REST endpoint), graded and stored."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from ..spec import echo
from ._grading import echo_grading

package_option = click.option("--package", "package_path", required=True, help="Package folder or package.yaml.")
out_option = click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Store the trial as a run in this folder (one that holds no run yet).",
)


def port_option(what: str):
    return click.option(
        "--port",
        default=0,
        show_default=True,
        type=click.IntRange(0, 65535),
        help=f"{what}the port on 127.0.0.1 (0: any free one); the URL is printed.",
    )


@click.group(name="mcp")
def mcp_commands() -> None:
    """Agents over MCP (the Model Context Protocol): forge as the server of a trial."""


@mcp_commands.command(name="serve")
@package_option
@out_option
@click.option(
    "--transport",
    default="stdio",
    show_default=True,
    type=click.Choice(["stdio", "http"]),
    help="stdio: this process's stdin and stdout; http: streamable HTTP on 127.0.0.1.",
)
@port_option("With --transport http: ")
def mcp_serve(package_path, out, transport, port) -> None:
    """Serve one trial of a package's tools and task over MCP; when it ends, grade it and, with --out, store it as a
    run. Over stdio, forge's own lines go to stderr."""
    import asyncio

    from ..engine import serve_mcp

    err = transport == "stdio"  # stdout is the client's connection
    echo_served(asyncio.run(serve_mcp(package_path, out, transport, port, say=echo)), out, err)


@click.group(name="fhir")
def fhir_commands() -> None:
    """Agents that speak FHIR REST: forge as the FHIR server of a trial."""


@fhir_commands.command(name="serve")
@package_option
@out_option
@port_option("")
@click.option(
    "--idle",
    default=30.0,
    show_default=True,
    type=click.FloatRange(min=0.1),
    help="Seconds without a request or an open connection after which the client is taken to have left.",
)
def fhir_serve(package_path, out, port, idle) -> None:
    """Serve one trial of a package's EHR as a FHIR R4 REST endpoint on 127.0.0.1 (its base URL printed): read,
    search and create go through the task's FHIR tools; POST $finish hands in the result. When the trial ends,
    grade it and, with --out, store it as a run."""
    import asyncio

    from ..engine import serve_fhir

    echo_served(asyncio.run(serve_fhir(package_path, out, port, idle, say=echo)), out, err=False)


def echo_served(served, out: Path | None, err: bool) -> None:
    """A served trial's status, its grading and, when stored, where."""
    record = served.record
    echo(
        f"{record.task_id} · {record.agent} {record.agent_version} · {record.status}"
        + (f" ({record.reason})" if record.reason else ""),
        err=err,
    )
    echo_grading(record, err)
    if served.run_id:
        echo(
            f"run {served.run_id}: 1 trial stored in {out} · forge replay {out} --task {record.task_id} --agent "
            f"{shlex.quote(record.agent)}",
            err=err,
        )
