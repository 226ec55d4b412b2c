"""A run: tasks x agents x k trials, concurrent, resumable, each trial stored as it finishes."""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import uuid
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from ..agents import LLM_PREFIX, agent_factory, model_needs
from ..analysis import load_policy
from ..spec import AgentError, Package, SpecError, StoreError, UsageError, find_packages
from ..store import DB_NAME, RunLock, RunStore, Ungraded, utc_now
from ..workers import MCP_PREFIX, MEMORY_MB, PROCESSES, InProcess, IsolatedAgent, Runner, Sandbox, choose, describe
from ._grader import Grader
from ._manifest import build_manifest
from .seeds import trial_seed
from .trial import Images, attempt_trial, task_template
from .validate import check_package

EXECUTORS = ("local", "dask")
"""Where the trials run: here (an event loop and agent processes), or on a Dask cluster (``_cluster``)."""
DASK_MISSING = "needs Dask's distributed package: pip install 'medagent-forge[dask]' (here and on every worker)"
Attempt = Callable[[Package, str, int, int], Awaitable[Ungraded]]
"""(package, agent name, trial, seed) -> the trial's attempt, ungraded."""
Prepare = Callable[[Package], Awaitable[None]]
"""What is done with a package before each of its trials, outside the trial's clock."""


@dataclass(frozen=True)
class RunSpec:
    """What to run; stored with the run so that a resume runs the same thing."""

    suite: list[str]
    agents: list[str]
    trials: int
    seed: int = 0
    gate: str | None = None
    """A release-gate policy declared before the run: its hash goes into the manifest."""
    trust: list[str] = field(default_factory=list)
    """``module:attribute`` entries to run in process, as registered agent names are (their authors are trusted)."""
    sandbox: str = "namespace"
    """How every other agent is confined: namespace, strict or process (see forge_kernel.workers.sandbox)."""
    endpoints: list[str] = field(default_factory=list)
    """``host:port`` an agent may reach in strict mode."""
    agent_memory_mb: int = MEMORY_MB
    """The most memory one isolated agent process may allocate, and all of an agent's together where forge can make
    cgroups (its sandbox's scratch folders hold a quarter each)."""
    agent_env: list[str] = field(default_factory=list)
    """Environment variables isolated agents get besides PATH, HOME, locale and time zone (a model's API key)."""
    agent_processes: int = PROCESSES
    """The most processes and threads one isolated agent may have at once, where forge can bound them."""
    isolate_reference: bool = False
    """Run registered agents (the bundled reference agents) isolated too, e.g. to measure the isolated path."""


@dataclass(frozen=True)
class RunOutcome:
    run_dir: Path
    run_id: str
    total: int
    ran: int
    skipped: int
    names: dict[str, str] = field(default_factory=dict)
    """Each ``--agent`` entry -> the name its agent declares, which the store holds."""


def agent_card(runner: Runner, spec: str) -> dict[str, Any]:
    """What the manifest says of an agent: name, version, configuration, how it ran and whether it was trusted."""
    card = {
        "name": runner.name,
        "version": runner.version,
        "spec": spec,
        "trusted": runner.isolation == "in-process",
        "isolation": runner.isolation,
    }
    if runner.config is not None:
        card["config"] = runner.config
    return card


def load_suite(paths: list[str]) -> list[Package]:
    """Load and check every package under the paths as ``forge validate`` does, before any agent runs; ids must be
    unique. Hidden halves are checked here but not kept: they are loaded again for grading only."""
    packages = [check_package(p) for p in find_packages(paths)]
    seen: dict[str, Path] = {}
    for package in packages:
        if package.id in seen:
            raise SpecError(package.path / "package.yaml", "id", f"{package.id} also at {seen[package.id]}")
        seen[package.id] = package.path
    return packages


def hidden_from_agents(packages: list[Package], run_dir: Path) -> tuple[str, ...]:
    """What an isolated agent must never see: the run folder, every package folder, every hidden-half folder."""
    paths = {run_dir.resolve()}
    for package in packages:
        paths.add(package.path.resolve())
        paths.add(package.hidden_path.parents[1])
    return tuple(sorted(map(str, paths)))


def trusted_entries(spec: RunSpec) -> set[str]:
    """The --agent entries that run in process: the names of the agent registry (the bundled reference agents
    and any registered in this process, whose code the harness already holds) and those named by ``--trust``."""
    unknown = [name for name in spec.trust if name not in spec.agents]
    if unknown:
        raise UsageError("--trust", unknown[0], "is not one of the --agent entries")
    programs = [name for name in spec.trust if name.startswith(MCP_PREFIX)]
    if programs:
        raise UsageError("--trust", programs[0], "an MCP agent is a program of its own: it runs in the sandbox")
    registered = set() if spec.isolate_reference else {e for e in spec.agents if ":" not in e}
    return set(spec.trust) | registered


async def start_agents(spec: RunSpec, sandbox: Sandbox) -> dict[str, tuple[Runner, str]]:
    """Agent name -> (runner, its --agent entry): trusted ones in process, the others started in their sandboxes.

    An agent that cannot be imported or built is an AgentError, before anything is written.
    """
    if not spec.agents:
        raise UsageError("--agent", "(empty)", "names no agent")
    trusted = trusted_entries(spec)

    async def start(entry: str) -> Runner:
        if entry.startswith(MCP_PREFIX):
            from ..workers import McpAgent  # the MCP SDK, only for runs that have such an agent

            return await McpAgent.start(entry, sandbox)
        if ":" not in entry:
            agent_factory(entry)  # a bundled name: known or not, without starting anything
        if entry not in trusted:
            return await IsolatedAgent.start(entry, for_agent(entry, sandbox))
        factory = agent_factory(entry)
        try:
            return InProcess(factory)
        except Exception as exc:
            raise AgentError("--agent", entry, f"cannot build the agent: {describe(exc)}") from None

    for entry in spec.agents:  # a model's config checked before anything starts
        if entry.startswith(LLM_PREFIX):
            model_needs(entry)
    outcomes = await asyncio.gather(*(start(entry) for entry in spec.agents), return_exceptions=True)
    runners = [r for r in outcomes if not isinstance(r, BaseException)]
    try:
        failed = next((r for r in outcomes if isinstance(r, BaseException)), None)
        if failed is not None:
            raise failed
        by_name: dict[str, tuple[Runner, str]] = {}
        for runner, entry in zip(runners, spec.agents):
            if runner.name in by_name:
                raise AgentError("--agent", entry, f"a second agent named {runner.name!r}")
            by_name[runner.name] = (runner, entry)
        return by_name
    except BaseException:
        await stop_agents(runners)
        raise


def for_agent(entry: str, sandbox: Sandbox) -> Sandbox:
    """The sandbox of one isolated agent: an ``llm`` agent's gets its model's key and reaches its model's endpoint
    (both its own: no other agent's sandbox has them)."""
    if not entry.startswith(LLM_PREFIX):
        return sandbox
    key, endpoint = model_needs(entry)
    return replace(sandbox, env=(*sandbox.env, *([key] if key else [])), endpoints=(*sandbox.endpoints, endpoint))


async def stop_agents(runners: Iterable[Runner]) -> None:
    for runner in runners:
        if isinstance(runner, IsolatedAgent):
            await runner.aclose()


def open_store(
    run_dir: Path,
    spec: RunSpec,
    packages: list[Package],
    agents: list[dict[str, Any]],
    sandbox: Sandbox | None,
    resume: bool,
    accept_sandbox_change: bool = False,
) -> RunStore:
    """A new store, or the existing one when resuming the same spec on the same packages (a change of the
    isolated agents' sandbox only where accepted, and then recorded)."""
    exists = (run_dir / DB_NAME).exists()
    if exists and not resume:
        raise StoreError(run_dir, "--out", "holds a run already; pass --resume to finish it, or choose another folder")
    store = RunStore.open(run_dir) if exists else RunStore.create(run_dir)
    try:
        if store.spec() is None:  # new, or killed before its manifest was written
            start_run(store, spec, packages, agents, sandbox)
        else:
            assert sandbox is not None  # only a run of agents resumes, and they have a sandbox
            check_same_run(store, run_dir, spec, packages, sandbox, accept_sandbox_change)
    except BaseException:
        store.close()
        raise
    return store


def start_run(
    store: RunStore, spec: RunSpec, packages: list[Package], agents: list[dict[str, Any]], sandbox: Sandbox | None
) -> None:
    """Write the run's manifest; ``sandbox``: how its isolated agents are confined (None where forge runs no agent:
    ``forge mcp serve``)."""
    run_id = uuid.uuid4().hex[:12]
    hashes = {p.id: p.package_hash for p in packages}
    manifest = build_manifest(run_id, asdict(spec), hashes, agents, utc_now())
    if sandbox is not None:
        manifest["sandbox"] = sandbox_record(spec, sandbox)
    if spec.gate:
        manifest["gate_policy"] = {"path": str(Path(spec.gate).resolve()), "hash": load_policy(spec.gate).hash}
    store.start(run_id, asdict(spec), manifest, packages)


def sandbox_record(spec: RunSpec, sandbox: Sandbox) -> dict[str, Any]:
    """How the run's isolated agents are confined, as the manifest records it."""
    return {
        "mode": sandbox.mode,
        "requested": spec.sandbox,
        "endpoints": list(sandbox.endpoints),
        "memory_mb": sandbox.memory_mb,
        "memory_whole": sandbox.memory_whole,
        "env": list(sandbox.env),
        "processes": sandbox.processes,
    }


def sandbox_changes(recorded: dict[str, Any], sandbox: Sandbox) -> list[tuple[str, str]]:
    """(option, what differs) for each way the sandbox here would confine the isolated agents otherwise than the
    stored run's did."""
    found = []
    if recorded.get("mode", sandbox.mode) != sandbox.mode:
        found.append(
            (
                "--sandbox",
                f"the run's agents were isolated in {recorded['mode']!r} mode; here {sandbox.mode!r} isolates them",
            )
        )
    if recorded.get("processes", sandbox.processes) != sandbox.processes:
        found.append(
            (
                "--agent-processes",
                f"the run's agents had at most {recorded['processes']} processes each; "
                + ("here their number cannot be bounded" if sandbox.processes is None else f"here {sandbox.processes}"),
            )
        )
    if recorded.get("memory_whole", sandbox.memory_whole) != sandbox.memory_whole:
        found.append(
            (
                "--agent-memory",
                "the run's agents were bounded in memory with all their processes together; "
                "here only one process at a time"
                if recorded["memory_whole"]
                else "the run's agents were bounded in memory one process at a time; here all together",
            )
        )
    return found


def check_same_run(
    store: RunStore,
    run_dir: Path,
    spec: RunSpec,
    packages: list[Package],
    sandbox: Sandbox,
    accept_sandbox_change: bool = False,
) -> None:
    """A resume must run the same agents, trials, seed and trust on the same packages as the stored run; where some
    of its agents are isolated, in the same sandbox, or in another where accepted, which the manifest then records
    (the trusted agents run in process whatever the sandbox)."""
    stored = store.spec()
    assert stored is not None  # a started run
    for key, value in asdict(spec).items():
        if key not in ("suite", "gate") and stored.get(key, RunSpec.__dataclass_fields__[key].default) != value:
            raise StoreError(run_dir, f"--{key}", f"is {value!r}, the stored run has {stored.get(key)!r}")
    recorded = store.manifest().get("sandbox") or {}
    changed = sandbox_changes(recorded, sandbox) if set(spec.agents) - trusted_entries(spec) else []
    if changed and not accept_sandbox_change:
        option, message = changed[0]
        raise StoreError(
            run_dir,
            option,
            f"{message}: its results could differ; finish it in a new --out folder, "
            "or go on with --accept-sandbox-change (recorded in the run's manifest)",
        )
    if changed:
        store.record_sandbox_change(sandbox_record(spec, sandbox), utc_now())
    current = {p.id: p.package_hash for p in packages}
    stored_hashes = store.package_hashes()
    differ = sorted(k for k, h in stored_hashes.items() if current.get(k) != h)
    if differ or len(stored_hashes) != len(packages):
        named = ", ".join(differ[:3]) + (f" and {len(differ) - 3} more" if len(differ) > 3 else "")
        raise StoreError(
            run_dir,
            "--suite",
            f"packages differ from the stored run ({named or 'the set changed'}): its trials were graded on the "
            "others; run into a new folder (for a release, move its folder away)",
        )


async def execute(
    spec: RunSpec,
    run_dir: Path,
    concurrency: int = 4,
    resume: bool = False,
    progress: bool | None = None,
    accept_sandbox_change: bool = False,
    executor: str = "local",
    scheduler: str | None = None,
    prepare: Prepare | None = None,
) -> RunOutcome:
    """Run every (task, agent, trial) not yet stored; return what was done.

    ``executor``: ``local``, or ``dask`` to run the agents' attempts on a Dask cluster (the one whose scheduler is
    at ``scheduler``, else a LocalCluster): the same trials, graded and stored here alike. Everything a user can get
    wrong (packages, the gate policy, the agents, the sandbox, the scheduler's address) is checked before the store
    is written; ``--resume`` while another process writes the run is refused. ``prepare`` is awaited with a
    trial's package before its attempt starts, outside the trial's clock (the local model evaluates the package's
    prompt).
    """
    run_dir = Path(run_dir)
    if executor not in EXECUTORS:
        raise UsageError("--executor", executor, f"is one of {', '.join(EXECUTORS)}")
    if scheduler is not None and executor != "dask":
        raise UsageError("--scheduler", scheduler, "only with --executor dask")
    packages = load_suite(spec.suite)
    if spec.gate:
        load_policy(spec.gate)
    unset = [name for name in spec.agent_env if name not in os.environ]
    if unset:
        raise UsageError("--agent-env", unset[0], "no such variable in this environment")
    try:
        sandbox, notice = choose(
            spec.sandbox,
            hidden_from_agents(packages, run_dir),
            tuple(spec.endpoints),
            spec.agent_memory_mb,
            tuple(spec.agent_env),
            spec.agent_processes,
        )
    except (ValueError, RuntimeError) as exc:
        raise UsageError("--sandbox", spec.sandbox, str(exc)) from None
    if notice and set(spec.agents) - trusted_entries(spec):
        print(notice, file=sys.stderr)
    agents = await start_agents(spec, sandbox)
    cluster = None
    try:
        if executor == "dask":
            cluster = await on_cluster(spec, packages, run_dir, sandbox, agents, scheduler, concurrency)
        with RunLock(run_dir):
            cards = [agent_card(runner, entry) for runner, entry in agents.values()]
            with open_store(run_dir, spec, packages, cards, sandbox, resume, accept_sandbox_change) as store:
                attempt = cluster.attempt if cluster else None
                ran, total = await run_plan(store, spec, packages, agents, concurrency, progress, attempt, prepare)
                store.finish()
                return RunOutcome(
                    run_dir,
                    store.manifest()["run_id"],
                    total,
                    ran,
                    total - ran,
                    {entry: name for name, (_, entry) in agents.items()},
                )
    finally:
        try:
            if cluster is not None:
                await cluster.close()
        finally:
            await stop_agents(runner for runner, _ in agents.values())


async def on_cluster(
    spec: RunSpec,
    packages: list[Package],
    run_dir: Path,
    sandbox: Sandbox,
    agents: dict[str, tuple[Runner, str]],
    scheduler: str | None,
    concurrency: int,
) -> Any:
    """A Dask client with the run's packages and options on its workers (``_cluster.DaskTrials``)."""
    try:
        from ._cluster import DaskTrials
    except ImportError:
        raise UsageError("--executor", "dask", DASK_MISSING) from None
    cluster = await DaskTrials.open(scheduler, concurrency)
    try:
        mode = sandbox.mode if set(spec.agents) - trusted_entries(spec) else None
        versions = {name: runner.version for name, (runner, _) in agents.items()}
        hidden = hidden_from_agents(packages, run_dir)
        await cluster.share(uuid.uuid4().hex, spec, hidden, mode, packages, versions)
    except BaseException:
        await cluster.close()
        raise
    return cluster


RUN_COLLECTION_THRESHOLDS = (50_000, 20, 10)
"""The collector's thresholds while a run goes (CPython's are 700, 10, 10): a trial's calls make thousands of short-
lived objects, which reference counting frees, and at 700 the young generation was collected several times in
every trial, each time holding up every agent's calls; measured, a point or two of concurrency efficiency
(docs/benchmarks/history.md)."""


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Collect garbage less often while a run goes (the grader, forked in it, too); the thresholds are restored
    after."""
    before = gc.get_threshold()
    gc.set_threshold(*RUN_COLLECTION_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)


async def run_plan(
    store: RunStore,
    spec: RunSpec,
    packages: list[Package],
    agents: dict[str, Any],
    concurrency: int,
    progress: bool | None,
    attempt: Attempt | None = None,
    prepare: Prepare | None = None,
) -> tuple[int, int]:
    """Run what the store does not hold yet; ``attempt``: how a trial's attempt is run elsewhere (a Dask cluster),
    by default here.

    ``concurrency`` lanes each run one agent at a time; a lane hands its finished trial to the grader (a process
    of its own, see ``_grader``, forked while the first trials wait for their agents) and starts the next at once,
    so grading neither waits for nor holds up the agents; the grader writes the trials to the store a batch per
    transaction (each trial whole or not at all). When the run stops otherwise (an error, Ctrl-C), every trial
    handed over is still graded and stored before this ends.
    """
    done = store.done()
    plan = [
        (p, name, k) for p in packages for name in agents for k in range(spec.trials) if (p.id, name, k) not in done
    ]
    total = len(packages) * len(agents) * spec.trials
    if not plan:  # a resumed run that had finished: no grader to fork
        return 0, total
    images, tasks = Images(), {p.id: task_template(p) for p in packages}
    for package in {p.id: p for p, _, _ in plan}.values():
        images[package]  # built before the grader is forked, which then has them too
    todo = iter(plan)

    async def here(package: Package, name: str, k: int, seed: int) -> Ungraded:
        attempted = await attempt_trial(package, images[package], agents[name][0], k, seed, tasks[package.id])
        return attempted.ungraded()

    attempt = attempt or here
    with fewer_collections():
        forked = asyncio.get_running_loop().create_future()
        """The grader, once it is forked."""
        grader: Grader | None = None
        bar: tqdm[Any] | None = None
        started = 0

        def count(n: int) -> None:
            assert bar is not None  # made as the grader starts, before the loop reads any reply
            bar.update(n)

        async def lane() -> None:
            nonlocal started
            for package, name, k in todo:
                started += 1
                if prepare is not None:
                    await prepare(package)
                attempted = await attempt(package, name, k, trial_seed(spec.seed, package.id, name, k))
                (await forked).hand(attempted, last_wave=started == len(plan))

        try:
            async with asyncio.TaskGroup() as group:
                lanes = [group.create_task(lane()) for _ in range(min(concurrency, len(plan)))]
                await asyncio.sleep(0)  # each lane hands its first task out
                grader = await Grader.start(store, packages, images, count)
                bar = tqdm(
                    total=len(plan),
                    unit="trial",
                    desc="trials",  # its thread starts after the fork
                    disable=None if progress is None else not progress,
                )
                forked.set_result(grader)
                watching = group.create_task(grader.watch())
                await asyncio.gather(*lanes)
                await grader.finish()
                await watching
        except BaseExceptionGroup as group_error:
            raise group_error.exceptions[0] from None
        finally:
            stored = await grader.finish() if grader else 0
            if bar:
                bar.close()
    if stored != len(plan):
        raise StoreError(
            store.path.parent, "(run)", f"{len(plan) - stored} trial(s) were not stored; run again with --resume"
        )
    return len(plan), total
