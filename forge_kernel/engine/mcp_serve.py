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
import stat
from collections.abc import Callable
from pathlib import Path

from ..spec import UsageError
from ..workers import AgentOutcome, TrialServer, streams
from ._serving import Client, Served, ServedPackage, http_server

ENTRY = "mcp serve"
"""The run's ``--agent`` entry: whatever client connects."""


async def serve_mcp(
    package_path: str, out: Path | None, transport: str = "stdio", port: int = 0, say: Callable[[str], None] = print
) -> Served:
    """Serve one trial of the package over ``transport``, grade it and, with ``out``, store it as a new run;
    ``say`` is told where an HTTP server listens."""
    served = ServedPackage.open(package_path, out, ENTRY)
    if transport == "stdio" and not all(
        stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) for mode in (os.fstat(fd).st_mode for fd in (0, 1))
    ):
        raise UsageError(
            "--transport",
            "stdio",
            "stdin and stdout must be pipes: an MCP client starts forge mcp serve (or serve with --transport http)",
        )
    trial = TrialServer(served.task, served.session)
    outcome = await (
        serve_stdio(trial, served.max_seconds)
        if transport == "stdio"
        else serve_http(trial, port, served.max_seconds, say)
    )
    return served.conclude(outcome, Client(*trial.client or ("mcp-client", "")), f"{ENTRY} ({transport})", out)


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
    the client leaves when it ends its session, and the trial ends when forge is stopped."""
    app, gone = trial.server.streamable_http_app(), asyncio.Event()

    async def watched(scope, receive, send) -> None:
        await app(scope, receive, send)
        if scope["type"] == "http" and scope["method"] == "DELETE":
            gone.set()

    async with http_server(watched, port, "/mcp", say) as listening:
        return await trial.run(listening.wait(gone), max_seconds)
