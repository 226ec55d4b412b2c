"""MedAgent Forge: execution-based evaluation of medical AI agents on a virtual FHIR R4 EHR (synthetic data).

The public names below are imported on first use, so that ``import forge_kernel`` (and an agent worker, or the
``forge`` command) pays only for what it touches.
"""

import sys
from collections.abc import Callable
from importlib import import_module
from typing import Any


def _lazy(package: str, homes: dict[str, tuple[str, ...]], listed: list[str]) -> tuple[Callable, Callable]:
    """A module's ``__getattr__`` and ``__dir__`` for ``package`` (this one, and subpackages that do the same): each
    name of ``homes`` (submodule -> names) is imported from its submodule when first asked for, then kept in the
    package; ``dir()`` gives ``listed`` (the package's ``__all__``)."""
    where = {name: module for module, names in homes.items() for name in names}

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f".{where[name]}", package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return listed

    return __getattr__, __dir__


_HOMES = {
    "agents": ("AGENTS", "Agent", "AgentTask", "ReplayAgent", "ToolClient", "agent_factory"),
    "analysis": (
        "AblationCard",
        "Comparison",
        "GatePolicy",
        "GateResult",
        "ablation_card",
        "compare",
        "evaluate",
        "ablation_cards",
        "failure_ledger",
        "load_policy",
        "load_triage",
        "pass_rates",
        "run_summary",
    ),
    "ehr": ("EHRImage", "EHRView", "Timeline"),
    "engine": ("RunSpec", "execute", "grade_trajectory", "load_suite", "regrade", "run_trial", "write_bundles"),
    "spec": (
        "AgentError",
        "AgentResult",
        "CatalogError",
        "Event",
        "ForgeError",
        "HiddenHalf",
        "Package",
        "PolicyError",
        "SpecError",
        "StoreError",
        "TaskPackage",
        "ToolCall",
        "TrajectoryFile",
        "UsageError",
        "find_packages",
        "load_package",
        "load_trajectory",
    ),
    "store": ("Run", "RunStore", "Trial", "load_events", "load_trials", "load_verdicts", "open_run", "read_trial"),
    "tools": ("TOOLS", "ToolSession"),
    "verify": ("VERIFIERS", "Verdict", "grade"),
    "workers": ("InProcess", "IsolatedAgent", "Sandbox"),
}

__all__ = [
    "AGENTS",
    "AblationCard",
    "Agent",
    "AgentError",
    "AgentResult",
    "AgentTask",
    "CatalogError",
    "Comparison",
    "EHRImage",
    "EHRView",
    "Event",
    "ForgeError",
    "GatePolicy",
    "GateResult",
    "HiddenHalf",
    "InProcess",
    "IsolatedAgent",
    "Package",
    "PolicyError",
    "ReplayAgent",
    "Run",
    "RunSpec",
    "RunStore",
    "Sandbox",
    "SpecError",
    "StoreError",
    "TOOLS",
    "TaskPackage",
    "Timeline",
    "ToolCall",
    "ToolClient",
    "ToolSession",
    "TrajectoryFile",
    "Trial",
    "UsageError",
    "VERIFIERS",
    "Verdict",
    "ablation_card",
    "ablation_cards",
    "agent_factory",
    "compare",
    "evaluate",
    "execute",
    "failure_ledger",
    "find_packages",
    "grade",
    "grade_trajectory",
    "load_events",
    "load_package",
    "load_policy",
    "load_suite",
    "load_trajectory",
    "load_triage",
    "load_trials",
    "load_verdicts",
    "open_run",
    "pass_rates",
    "read_trial",
    "regrade",
    "run_summary",
    "run_trial",
    "write_bundles",
]


__getattr__, __dir__ = _lazy(__name__, _HOMES, __all__)
