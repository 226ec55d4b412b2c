"""Agent workers: trusted agents in process, every other agent in a sandboxed worker process.

The harness side: ``InProcess`` and ``IsolatedAgent`` (both ``Runner``), ``Sandbox`` and ``choose``. The agent
side, inside a worker: the zygote, the worker loop and ``RemoteToolClient``. What crosses between them is in
``wire``.
"""
from .attempt import AGENT_ERROR, BUDGET_EXCEEDED, COMPLETED, TIMEOUT, AgentOutcome, InProcess, Runner
from .client import LocalToolClient, RemoteToolClient
from .pool import IsolatedAgent
from .sandbox import MODES, Sandbox, bwrap_problem, choose

__all__ = [
    "AGENT_ERROR", "AgentOutcome", "BUDGET_EXCEEDED", "COMPLETED", "InProcess", "IsolatedAgent", "LocalToolClient",
    "MODES", "RemoteToolClient", "Runner", "Sandbox", "TIMEOUT", "bwrap_problem", "choose",
]
