"""Agent workers: trusted agents in process, every other agent in a sandboxed worker process.

The harness side: ``InProcess`` and ``IsolatedAgent`` (both ``Runner``), ``Sandbox`` and ``choose``. The agent
side, inside a worker: the zygote (``python -m forge_kernel.workers.zygote``), the worker loop and
``RemoteToolClient``. What crosses between them is in ``_wire``. The names below are imported on first use."""
from .. import _lazy

_HOMES = {
    "attempt": ("AGENT_ERROR", "AgentOutcome", "BUDGET_EXCEEDED", "COMPLETED", "InProcess", "Runner", "TIMEOUT",
                "describe"),
    "client": ("LocalToolClient", "RemoteToolClient"),
    "pool": ("IsolatedAgent",),
    "sandbox": ("MEMORY_MB", "MODES", "PROCESSES", "Sandbox", "bwrap_problem", "choose"),
}

__all__ = [
    "AGENT_ERROR", "AgentOutcome", "BUDGET_EXCEEDED", "COMPLETED", "InProcess", "IsolatedAgent",
    "LocalToolClient", "MEMORY_MB", "MODES", "PROCESSES", "RemoteToolClient", "Runner", "Sandbox", "TIMEOUT",
    "bwrap_problem", "choose", "describe",
]
__getattr__, __dir__ = _lazy(__name__, _HOMES, __all__)
