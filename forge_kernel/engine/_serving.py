"""What ``forge mcp serve`` and ``forge fhir serve`` share: one trial of one package made ready for a client outside
forge (the package checked, the EHR view and tool session opened, the seed drawn), an HTTP server on 127.0.0.1, and,
once the trial has ended, its grading and, with ``--out``, its store as a run of its own."""

from __future__ import annotations

import asyncio
import signal
import socket
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..agents import AgentTask
from ..ehr import EHRView
from ..spec import Package, StoreError, UsageError
from ..store import DB_NAME, OUTSIDE, RunLock, TrialRecord
from ..tools import ToolSession
from ..verify import unit_registry
from ..workers import AgentOutcome
from .run import RunSpec, open_store
from .seeds import trial_seed
from .trial import Attempted, Images, task_template
from .validate import check_package


@dataclass(frozen=True)
class Client:
    """The agent of a served trial, as the client names itself."""

    name: str
    version: str


@dataclass(frozen=True)
class Served:
    record: TrialRecord
    run_id: str | None
    """The run it is stored as, with ``--out``."""


@dataclass(frozen=True)
class ServedPackage:
    """One trial of a package, ready to be served: ``entry`` is the run's ``--agent`` entry."""

    package: Package
    entry: str
    seed: int
    view: EHRView
    session: ToolSession
    task: AgentTask

    @classmethod
    def open(cls, package_path: str, out: Path | None, entry: str) -> ServedPackage:
        """Check the package and that ``out`` holds no run yet; open the trial's view and tool session."""
        package = check_package(package_path)
        if out is not None and (out / DB_NAME).exists():
            raise StoreError(out, "--out", "holds a run already; choose another folder")
        seed = trial_seed(0, package.id, entry, 0)
        view = EHRView(Images()[package])
        session = ToolSession(package.public, view)
        unit_registry()  # grading needs it: built now, so that a client that leaves need not wait for it
        return cls(package, entry, seed, view, session, task_template(package).for_trial(seed))

    @property
    def max_seconds(self) -> float:
        return self.package.public.budget.max_seconds

    def conclude(self, outcome: AgentOutcome, client: Client, spec: str, out: Path | None) -> Served:
        """Grade the ended trial and, with ``out``, store it as a new run whose agent (``spec`` says how it was
        served) ran outside forge."""
        record = Attempted(self.package, client, 0, self.seed, self.view, self.session, outcome, attempts=1).graded()
        if out is None:
            return Served(record, None)
        run_spec = RunSpec(suite=[str(self.package.path)], agents=[self.entry], trials=1)
        card: dict[str, Any] = {
            "name": record.agent,
            "version": record.agent_version,
            "spec": spec,
            "trusted": False,
            "isolation": OUTSIDE,
        }
        with RunLock(out), open_store(out, run_spec, [self.package], [card], None, resume=False) as store:
            store.write_trial(record)
            store.finish()
            return Served(record, store.manifest()["run_id"])


@dataclass(frozen=True)
class Listening:
    """An HTTP server that serves a trial (uvicorn's), and whether forge has been told to stop (SIGINT, SIGTERM)."""

    server: Any
    stopped: asyncio.Event

    def why_stopped(self) -> str | None:
        """Why the trial ends when forge has been told to stop, else None."""
        return "forge was stopped before the trial ended" if self.stopped.is_set() else None

    async def wait(self, event: asyncio.Event) -> str | None:
        """Wait until ``event`` is set (None) or forge is told to stop (why)."""
        waiting = [asyncio.ensure_future(event.wait()), asyncio.ensure_future(self.stopped.wait())]
        try:
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for each in waiting:
                each.cancel()
        return self.why_stopped()


@asynccontextmanager
async def http_server(app: Any, port: int, path: str, say: Callable[[str], None]) -> AsyncIterator[Listening]:
    """Serve the ASGI ``app`` on 127.0.0.1 (``port`` 0: any free port) while inside, its URL (ending in ``path``)
    said once it listens. SIGINT and SIGTERM set ``stopped`` (the trial then ends, and is graded and stored)."""
    import uvicorn

    class Server(uvicorn.Server):
        @contextmanager
        def capture_signals(self) -> Iterator[None]:  # forge's own handlers: the trial ends first
            yield

    try:
        listening = socket.create_server(("127.0.0.1", port))
    except OSError as exc:
        raise UsageError("--port", str(port), f"cannot listen on 127.0.0.1:{port} ({exc.strerror})") from None
    server = Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1))
    serving = asyncio.ensure_future(server.serve(sockets=[listening]))
    loop, stopped = asyncio.get_running_loop(), asyncio.Event()
    for number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(number, stopped.set)
    try:
        while not (server.started or serving.done()):
            await asyncio.sleep(0.01)
        say(f"http://127.0.0.1:{listening.getsockname()[1]}{path}")
        yield Listening(server, stopped)
    finally:
        for number in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(number)
        server.should_exit = True
        await serving
        listening.close()
