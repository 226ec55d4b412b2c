"""``forge run``: agents on packages, k trials each, into a run store."""

from __future__ import annotations

import re
from pathlib import Path

import click

from ..spec import echo
from ._common import isolation_line, opened


@click.command()
@click.option("--suite", "suites", multiple=True, required=True, help="Package folder(s); repeat for several.")
@click.option("--agent", "agents", required=True, help="Agent name(s), comma-separated, or module:attribute.")
@click.option("--trials", default=3, show_default=True, type=click.IntRange(1), help="Trials per task and agent.")
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path), help="Run directory.")
@click.option("--concurrency", default=4, show_default=True, type=click.IntRange(1))
@click.option(
    "--executor",
    default="local",
    show_default=True,
    type=click.Choice(["local", "dask"]),
    help="Where the agents' attempts run: here, or on a Dask cluster (the same trials, graded and stored here; "
    "needs the dask extra; docs/distributed.md).",
)
@click.option(
    "--scheduler",
    metavar="ADDRESS",
    help="With --executor dask: the scheduler of the cluster (e.g. tcp://10.0.0.5:8786); without, a LocalCluster "
    "of 2 workers on this machine.",
)
@click.option("--seed", default=0, show_default=True, type=int, help="Run seed.")
@click.option("--resume", is_flag=True, help="Finish a run that stopped; finished trials are not redone.")
@click.option(
    "--accept-sandbox-change",
    "accept_sandbox_change",
    is_flag=True,
    help="With --resume: go on although the isolated agents' sandbox differs from the stored run's (e.g. "
    "bubblewrap installed since); the change is recorded in the run's manifest.",
)
@click.option("--gate", help="Release-gate policy (YAML) declared before the run; its hash goes into the manifest.")
@click.option(
    "--trust",
    "trust",
    multiple=True,
    metavar="AGENT",
    help="Run this module:attribute --agent entry in process, unsandboxed (you trust its author).",
)
@click.option(
    "--sandbox",
    default="namespace",
    show_default=True,
    type=click.Choice(["namespace", "strict", "process"]),
    help="How untrusted agents are confined (docs/trust-model.md).",
)
@click.option(
    "--allow-endpoint",
    "endpoints",
    multiple=True,
    metavar="HOST:PORT",
    help="A service the agents may reach although it is on this machine (a local model server); "
    "with --sandbox strict, the only ones they reach.",
)
@click.option(
    "--agent-memory",
    "agent_memory",
    default=4096,
    show_default=True,
    type=click.IntRange(64),
    metavar="MB",
    help="The most memory an isolated agent may use: each of its processes, and all "
    "of them together where forge can make cgroups.",
)
@click.option(
    "--agent-processes",
    "agent_processes",
    default=4096,
    show_default=True,
    type=click.IntRange(16),
    metavar="N",
    help="The most processes and threads one isolated agent may have at once.",
)
@click.option(
    "--agent-env",
    "agent_env",
    multiple=True,
    metavar="NAME",
    help="An environment variable isolated agents get (e.g. their model's API key); they get no other "
    "but PATH, HOME, locale and time zone.",
)
def run(
    suites,
    agents,
    trials,
    out,
    concurrency,
    executor,
    scheduler,
    seed,
    resume,
    accept_sandbox_change,
    gate,
    trust,
    sandbox,
    endpoints,
    agent_memory,
    agent_processes,
    agent_env,
) -> None:
    """Run agents on packages, k trials each, into a run store."""
    import asyncio

    from ..engine import RunSpec, execute

    spec = RunSpec(
        suite=list(suites),
        agents=agent_entries(agents),
        trials=trials,
        seed=seed,
        gate=gate,
        trust=list(trust),
        sandbox=sandbox,
        endpoints=list(endpoints),
        agent_memory_mb=agent_memory,
        agent_processes=agent_processes,
        agent_env=list(agent_env),
    )
    outcome = asyncio.run(
        execute(
            spec,
            out,
            concurrency=concurrency,
            resume=resume,
            accept_sandbox_change=accept_sandbox_change,
            executor=executor,
            scheduler=scheduler,
        )
    )
    echo_outcome(outcome, out)


def echo_outcome(outcome, out: Path) -> None:
    """What ``forge run`` prints after a run: how many trials ran, how the agents ran, the summary, what next."""
    from ..analysis import run_summary

    echo(f"run {outcome.run_id}: {outcome.ran} trial(s) run, {outcome.skipped} already stored, in {out}")
    with opened(out) as (stored,):
        echo(isolation_line(stored))
        echo(str(run_summary(stored)))
    echo(f"per slice: forge summary {out} --by dimension · one trial: forge replay {out} --task ID --agent NAME")


def agent_entries(value: str) -> list[str]:
    """The entries of ``--agent``, comma-separated; an ``mcp:COMMAND`` entry takes the rest of the value, commas and
    all (a command line may hold them)."""
    from ..workers import MCP_PREFIX

    found = re.search(rf"(?:^|,)\s*{MCP_PREFIX}", value)
    head, command = (value[: found.start()], value[found.start() :].lstrip(", ").strip()) if found else (value, "")
    return [a.strip() for a in head.split(",") if a.strip()] + ([command] if command else [])
