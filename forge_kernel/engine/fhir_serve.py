"""``forge fhir serve``: one trial of one package served as a FHIR R4 REST endpoint on 127.0.0.1 to a client outside
forge, then graded and, with ``--out``, stored as a run of its own.

The endpoint is ``workers.FhirTrial``'s: every read, search and create is a call of the generic FHIR tools through the
trial's tool session. The trial's clock starts once the base URL is printed; the trial ends on a POST to
``$finish``, when a budget runs out, at the package's time budget, or when the client has left: after its first
request, no connection open and no request for ``idle`` seconds; or when forge is stopped (SIGINT, SIGTERM). The
client is named by its User-Agent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from time import perf_counter

from ..workers import FhirTrial
from ._serving import Client, Listening, Served, ServedPackage, http_server

ENTRY = "fhir serve"
"""The run's ``--agent`` entry: whatever client connects."""
IDLE_SECONDS = 30.0
"""How long a client may keep no connection open and send no request before it is taken to have left."""


async def serve_fhir(
    package_path: str,
    out: Path | None,
    port: int = 0,
    idle: float = IDLE_SECONDS,
    say: Callable[[str], None] = print,
) -> Served:
    """Serve one trial of the package as a FHIR REST endpoint, grade it and, with ``out``, store it as a new run;
    ``say`` is told the base URL once the server listens."""
    served = ServedPackage.open(package_path, out, ENTRY)
    trial = FhirTrial(served.task, served.session)
    async with http_server(trial.app(), port, "/fhir", say) as listening:
        outcome = await trial.run(gone(trial, listening, idle), served.max_seconds)
    return served.conclude(outcome, Client(*trial.client or ("fhir-client", "")), ENTRY, out)


async def gone(trial: FhirTrial, listening: Listening, idle: float) -> str | None:
    """Return once the client has left: it has made a request, and since then has had no connection open and sent
    no request for ``idle`` seconds; or once forge is stopped (why)."""
    while not listening.stopped.is_set():
        await asyncio.sleep(min(idle, 0.1))
        last = trial.last_request
        if last is not None and not listening.server.server_state.connections and perf_counter() - last >= idle:
            return None
    return listening.why_stopped()
