"""``forge mcp serve``: one trial of a package served over MCP, graded and stored."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from ..spec import echo
from ._grading import echo_grading


@click.group(name="mcp")
def mcp_commands() -> None:
    """Agents over MCP (the Model Context Protocol): forge as the server of a trial."""


@mcp_commands.command(name="serve")
@click.option("--package", "package_path", required=True, help="Package folder or package.yaml.")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Store the trial as a run in this folder (one that holds no run yet).",
)
@click.option(
    "--transport",
    default="stdio",
    show_default=True,
    type=click.Choice(["stdio", "http"]),
    help="stdio: this process's stdin and stdout; http: streamable HTTP on 127.0.0.1.",
)
@click.option(
    "--port",
    default=0,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="With --transport http: the port (0: any free one); the URL is printed.",
)
def mcp_serve(package_path, out, transport, port) -> None:
    """Serve one trial of a package's tools and task over MCP; when it ends, grade it and, with --out, store it as a
    run. Over stdio, forge's own lines go to stderr."""
    import asyncio

    from ..engine import serve_mcp

    err = transport == "stdio"  # stdout is the client's connection
    served = asyncio.run(serve_mcp(package_path, out, transport, port, say=echo))
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
