"""``forge mcp serve``: one trial of one package served over MCP to a client outside forge, then graded and, with
``--out``, stored as a run of its own.

The tools, the task and ``submit_result`` are ``workers.TrialServer``'s. The trial's clock starts when forge serves
(on stdin and stdout, or once the URL is printed); the trial ends on ``submit_result``, when the client leaves (it
closes stdin; over HTTP, it ends its session, a ``DELETE``), when a budget runs out, or at the package's time
budget. The client runs outside forge: its manifest entry says so, with the name and version of its ``clientInfo``.
"""

from __future__ import annotations

import asyncio
import os
import socket
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..ehr import EHRView
from ..spec import StoreError, UsageError
from ..store import DB_NAME, OUTSIDE, RunLock, TrialRecord
from ..tools import ToolSession
from ..verify import unit_registry
from ..workers import AgentOutcome, TrialServer, streams
from .run import RunSpec, open_store
from .seeds import trial_seed
from .trial import Attempted, Images, task_template
from .validate import check_package

ENTRY = "mcp serve"
"""The run's ``--agent`` entry: whatever client connects."""


@dataclass(frozen=True)
class Client:
    """The agent of a served trial, as its ``clientInfo`` names it."""

    name: str
    version: str


@dataclass(frozen=True)
class Served:
    record: TrialRecord
    run_id: str | None
    """The run it is stored as, with ``--out``."""


async def serve_mcp(
    package_path: str, out: Path | None, transport: str = "stdio", port: int = 0, say: Callable[[str], None] = print
) -> Served:
    """Serve one trial of the package over ``transport``, grade it and, with ``out``, store it as a new run;
    ``say`` is told where an HTTP server listens."""
    package = check_package(package_path)
    if out is not None and (out / DB_NAME).exists():
        raise StoreError(out, "--out", "holds a run already; choose another folder")
    if transport == "stdio" and not all(
        stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) for mode in (os.fstat(fd).st_mode for fd in (0, 1))
    ):
        raise UsageError(
            "--transport",
            "stdio",
            "stdin and stdout must be pipes: an MCP client starts forge mcp serve (or serve with --transport http)",
        )
    seed = trial_seed(0, package.id, ENTRY, 0)
    view = EHRView(Images()[package])
    session = ToolSession(package.public, view)
    trial = TrialServer(task_template(package).for_trial(seed), session)
    unit_registry()  # grading needs it: built now, so that a client that leaves need not wait for it
    max_seconds = package.public.budget.max_seconds
    outcome = await (
        serve_stdio(trial, max_seconds) if transport == "stdio" else serve_http(trial, port, max_seconds, say)
    )
    agent = Client(*trial.client or ("mcp-client", ""))
    record = Attempted(package, agent, 0, seed, view, session, outcome, attempts=1).graded()
    if out is None:
        return Served(record, None)
    spec = RunSpec(suite=[str(package.path)], agents=[ENTRY], trials=1)
    card = {
        "name": record.agent,
        "version": record.agent_version,
        "spec": f"{ENTRY} ({transport})",
        "trusted": False,
        "isolation": OUTSIDE,
    }
    with RunLock(out), open_store(out, spec, [package], [card], None, resume=False) as store:
        store.write_trial(record)
        store.finish()
        return Served(record, store.manifest()["run_id"])


async def serve_stdio(trial: TrialServer, max_seconds: float) -> AgentOutcome:
    """Serve the trial on this process's stdin and stdout (left open, and blocking again, after)."""
    incoming, outgoing = os.fdopen(os.dup(0), "rb", buffering=0), os.fdopen(os.dup(1), "wb", buffering=0)
    reader, writer, reading = await streams(incoming, outgoing)
    try:
        return await trial.run(trial.converse(reader, writer), max_seconds)
    finally:
        writer.close()
        reading.close()
        for fd in (0, 1):
            os.set_blocking(fd, True)


async def serve_http(trial: TrialServer, port: int, max_seconds: float, say: Callable[[str], None]) -> AgentOutcome:
    """Serve the trial over streamable HTTP on 127.0.0.1 (``port`` 0: any free port), the URL said once it listens;
    the client leaves when it ends its session."""
    import uvicorn

    try:
        listening = socket.create_server(("127.0.0.1", port))
    except OSError as exc:
        raise UsageError("--port", str(port), f"cannot listen on 127.0.0.1:{port} ({exc.strerror})") from None
    app, gone = trial.server.streamable_http_app(), asyncio.Event()

    async def watched(scope, receive, send) -> None:
        await app(scope, receive, send)
        if scope["type"] == "http" and scope["method"] == "DELETE":
            gone.set()

    async def left() -> None:
        await gone.wait()

    server = uvicorn.Server(uvicorn.Config(watched, log_level="warning", timeout_graceful_shutdown=1))
    serving = asyncio.ensure_future(server.serve(sockets=[listening]))
    while not (server.started or serving.done()):
        await asyncio.sleep(0.01)
    say(f"http://127.0.0.1:{listening.getsockname()[1]}/mcp")
    try:
        return await trial.run(left(), max_seconds)
    finally:
        server.should_exit = True
        await serving
        listening.close()
