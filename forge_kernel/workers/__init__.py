"""Agent workers: trusted agents in process, every other agent in a sandboxed worker process.

The harness side: ``InProcess``, ``IsolatedAgent`` and ``McpAgent`` (each a ``Runner``), ``TrialServer`` (a trial
served over MCP), ``FhirTrial`` (a trial served as a FHIR REST endpoint), ``Sandbox`` and ``choose``. The agent
side, inside a worker: the zygote (``python -m forge_kernel.workers.zygote``), the worker loop and
``RemoteToolClient``. What crosses between them is in ``wire``. The names below are imported on first use."""

from .. import _lazy

_HOMES = {
    "attempt": (
        "AGENT_ERROR",
        "AgentOutcome",
        "BUDGET_EXCEEDED",
        "COMPLETED",
        "InProcess",
        "Runner",
        "TIMEOUT",
        "describe",
    ),
    "client": ("LocalToolClient", "RemoteToolClient"),
    "fhir_rest": ("FhirTrial",),
    "mcp": ("McpAgent", "TrialServer", "streams"),
    "pool": ("IsolatedAgent",),
    "sandbox": ("MCP_PREFIX", "MEMORY_MB", "MODES", "PROCESSES", "Sandbox", "bwrap_problem", "choose"),
    "wire": ("Frames", "frame"),
}

__all__ = [
    "AGENT_ERROR",
    "AgentOutcome",
    "BUDGET_EXCEEDED",
    "COMPLETED",
    "FhirTrial",
    "Frames",
    "InProcess",
    "IsolatedAgent",
    "LocalToolClient",
    "MCP_PREFIX",
    "MEMORY_MB",
    "MODES",
    "McpAgent",
    "PROCESSES",
    "RemoteToolClient",
    "Runner",
    "Sandbox",
    "TIMEOUT",
    "TrialServer",
    "bwrap_problem",
    "choose",
    "describe",
    "frame",
    "streams",
]
__getattr__, __dir__ = _lazy(__name__, _HOMES, __all__)
