"""Trials on a Dask cluster (``forge run --executor dask``): each worker runs agents' attempts as the harness does
here, the harness grades and stores them.

One Dask task is one attempt of one trial: the worker runs ``attempt_trial`` on its own copy of the package, with
the run's agents started on the worker by the same code as here (``start_agents``: trusted ones in process, every
other in the sandbox ``choose`` makes with the same options, which hides the same folders), and returns the trial
ungraded. The hidden halves never leave the harness: the packages travel without them, and the harness's grader
grades each returned trial and writes it to the store as for a local run, so the store is the same (same seeds,
same verdicts, same hashes) but for timings.

The run's packages travel once per worker: scattered to the workers as one object (a worker that joins later copies
it from another), each worker building the EHR images, the task templates and the agents once per run and keeping
them in ``_Host`` for the run's next trials. The attempts run on a thread of the worker's own (``_Host.loop``), so
that agents' calls do not hold up the worker's messages to its scheduler; a worker runs as many at once as it has
threads (a LocalCluster's: the concurrency over its workers).

A worker lost mid-trial is Dask's to handle: its trials are run again elsewhere (same seed), those already returned
are graded and stored. A task whose workers keep dying, or a lost scheduler, ends the run in one line; the store
holds every trial returned before, and ``--resume`` runs the others. A worker stops the run's agents when the run
ends (its plugin removed) or when it closes (its scheduler lost, the cluster stopped), whichever comes first.
"""

from __future__ import annotations

import asyncio
import math
import os
import threading
from dataclasses import dataclass, replace
from typing import Any

from distributed import Client, KilledWorker, LocalCluster, WorkerPlugin
from distributed.client import FutureCancelledError

from ..spec import ForgeError, Package, StoreError, UsageError
from ..store import Ungraded
from .trial import Images, attempt_trial, task_template

LOCAL_WORKERS = 2
"""Workers of the LocalCluster started when no scheduler is named."""
CONNECT_SECONDS = 10
"""How long the harness tries to reach a named scheduler."""


class WorkerFailure(RuntimeError):
    """A worker could not run the run's trials (plain message: it pickles back to the harness)."""


@dataclass(frozen=True)
class Setup:
    """What every worker needs to run the run's trials as the harness would; scattered once per run."""

    token: str
    """Names the run on the workers (their caches)."""
    spec: Any
    """The RunSpec."""
    hidden: tuple[str, ...]
    """The folders the agents' sandbox hides, as the harness computed them."""
    mode: str | None
    """The sandbox mode the harness chose (None where every agent is trusted)."""
    agents: dict[str, str]
    """Agent name -> its version, as the harness started them: a worker running others is refused."""
    packages: dict[str, Package]
    """The packages by id, without their hidden halves."""


def public_only(package: Package) -> Package:
    """The package as a worker gets it: no hidden half's text, no parsed hidden half."""
    return replace(package, hidden_source=None, hidden_defaults_source=None)


class DaskTrials:
    """The harness's side: a Dask client (on a LocalCluster of its own when no scheduler is named) that runs
    attempts on the workers. ``await DaskTrials.open(...)``, then ``attempt`` per trial, then ``close``."""

    def __init__(self, client: Any, cluster: Any, where: str):
        self.client, self.cluster, self.where = client, cluster, where
        self.setup: Any = None
        self.token = ""

    @classmethod
    async def open(cls, scheduler: str | None, concurrency: int) -> DaskTrials:
        """Connect (UsageError, one line, when the scheduler cannot be reached), or start a LocalCluster whose
        workers run ``concurrency`` trials at once between them."""
        if scheduler is None:
            cluster = await LocalCluster(
                n_workers=LOCAL_WORKERS,
                threads_per_worker=math.ceil(concurrency / LOCAL_WORKERS),
                dashboard_address=None,
                asynchronous=True,
            )
            return cls(await Client(cluster, asynchronous=True), cluster, "a LocalCluster")
        try:
            client = await Client(scheduler, asynchronous=True, timeout=CONNECT_SECONDS)
        except (OSError, TimeoutError, ValueError) as exc:
            raise UsageError("--scheduler", scheduler, f"cannot reach a Dask scheduler there ({exc})") from None
        return cls(client, None, f"the Dask scheduler at {scheduler}")

    async def share(
        self, token: str, spec: Any, hidden: tuple[str, ...], mode: str | None, packages: list[Package], agents: dict
    ) -> None:
        """Send the run's packages (public halves) and options to the workers, once (a worker that joins later
        copies them from another); ``agents``: name -> version, as the harness started them."""
        self.token = token
        setup = Setup(token, spec, hidden, mode, agents, {p.id: public_only(p) for p in packages})
        self.setup = await self.client.scatter(setup, broadcast=True, hash=False)
        await self.client.register_plugin(RunEnd(token), name=RunEnd.name_of(token))

    async def attempt(self, package: Package, agent: str, trial: int, seed: int) -> Ungraded:
        """Run the trial's attempt on a worker; its ungraded record. StoreError (the run ends, the store keeps what
        it has) when the scheduler is lost or the trial's workers keep dying; UsageError when a worker cannot run
        the run's agents."""
        future = self.client.submit(
            attempt_on_worker,
            self.setup,
            package.id,
            agent,
            trial,
            seed,
            key=f"trial-{self.token}-{package.id}-{agent}-{trial}",
            pure=False,
        )
        try:
            result: Ungraded = await future
            return result
        except WorkerFailure as exc:
            raise UsageError("--executor", "dask", f"a worker cannot run the trials: {exc}") from None
        except KilledWorker:
            raise self._ended(f"the workers running {package.id} trial {trial} of {agent} kept dying") from None
        except FutureCancelledError as exc:  # the scheduler gone, or the workers holding the run's packages
            raise self._ended(f"{self.where} was lost ({exc.reason})") from None
        except OSError as exc:
            raise self._ended(f"{self.where} was lost ({exc})") from None

    def _ended(self, why: str) -> StoreError:
        return StoreError("(run)", "--executor dask", f"{why}; the trials returned are stored: run again with --resume")

    async def close(self) -> None:
        """Stop the run's agents on the workers, then the client (and the LocalCluster)."""
        try:
            if self.token and self.client.status == "running":
                await asyncio.wait_for(
                    self.client.unregister_worker_plugin(RunEnd.name_of(self.token)), CONNECT_SECONDS
                )
        except Exception:
            pass  # a lost cluster: its workers' agents went with it
        finally:
            await self.client.close()
            if self.cluster is not None:
                await self.cluster.close()


# --- the worker's side ---------------------------------------------------------------------------------------------


@dataclass
class _Run:
    """One run's state on a worker."""

    images: Images
    tasks: dict[str, Any]
    agents: dict[str, Any]


class _Host:
    """Per worker process: a thread with an event loop of its own for the attempts, and each run's state."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, name="forge-trials", daemon=True).start()
        self.runs: dict[str, _Run] = {}
        self.starting: dict[str, asyncio.Lock] = {}

    async def attempt(self, setup: Setup, task_id: str, agent: str, trial: int, seed: int) -> Ungraded:
        run = await self.run_of(setup)
        package = setup.packages[task_id]
        attempted = await attempt_trial(
            package, run.images[package], run.agents[agent][0], trial, seed, run.tasks[task_id]
        )
        return attempted.ungraded()

    async def run_of(self, setup: Setup) -> _Run:
        """The run's state, made by the first of its trials on this worker."""
        async with self.starting.setdefault(setup.token, asyncio.Lock()):
            if setup.token not in self.runs:
                self.runs[setup.token] = await start_run_here(setup)
            return self.runs[setup.token]

    async def forget(self, token: str) -> None:
        from .run import stop_agents

        run = self.runs.pop(token, None)
        self.starting.pop(token, None)
        if run is not None:
            await stop_agents(runner for runner, _ in run.agents.values())


async def start_run_here(setup: Setup) -> _Run:
    """Start the run's agents on this worker as the harness started them; WorkerFailure when this worker cannot
    (a variable of ``--agent-env`` unset, a sandbox it cannot make, another version of an agent)."""
    from ..workers import choose
    from .run import start_agents, stop_agents, trusted_entries

    spec = setup.spec
    unset = [name for name in spec.agent_env if name not in os.environ]
    if unset:
        raise WorkerFailure(f"--agent-env: {unset[0]} is not set in the worker's environment")
    try:
        sandbox, _ = choose(
            spec.sandbox,
            setup.hidden,
            tuple(spec.endpoints),
            spec.agent_memory_mb,
            tuple(spec.agent_env),
            spec.agent_processes,
        )
        if set(spec.agents) - trusted_entries(spec) and sandbox.mode != setup.mode:
            raise WorkerFailure(f"it isolates agents in {sandbox.mode!r} mode, the harness in {setup.mode!r}")
        agents = await start_agents(spec, sandbox)
    except (ValueError, RuntimeError, ForgeError) as exc:
        raise WorkerFailure(str(exc)) from None
    versions = {name: runner.version for name, (runner, _) in agents.items()}
    if versions != setup.agents:
        await stop_agents(runner for runner, _ in agents.values())
        raise WorkerFailure(f"its agents are {versions}, the harness's {setup.agents}: install the same everywhere")
    packages = list(setup.packages.values())
    return _Run(Images(), {p.id: task_template(p) for p in packages}, agents)


_HOST: _Host | None = None
_HOST_MADE = threading.Lock()


def host() -> _Host:
    """This worker process's host, made on first use."""
    global _HOST
    with _HOST_MADE:
        if _HOST is None:
            _HOST = _Host()
        return _HOST


async def attempt_on_worker(setup: Setup, task_id: str, agent: str, trial: int, seed: int) -> Ungraded:
    """The Dask task: one attempt, run on the worker's trial thread."""
    here = host()
    coroutine = here.attempt(setup, task_id, agent, trial, seed)
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coroutine, here.loop))


class RunEnd(WorkerPlugin):
    """On each worker, for one run: stops the run's agents there when the plugin is removed (the run is over) or
    the worker closes (its scheduler lost, the cluster stopped)."""

    def __init__(self, token: str):
        self.token = token

    @staticmethod
    def name_of(token: str) -> str:
        return f"forge-run-{token}"

    async def teardown(self, worker: Any) -> None:
        if _HOST is not None:
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(_HOST.forget(self.token), _HOST.loop))
