"""MedAgent Forge: execution-based evaluation of medical AI agents on a virtual FHIR R4 EHR (synthetic data).

The public names below are imported on first use, so that ``import forge_kernel`` (and an agent worker, or the
``forge`` command) pays only for what it touches.
"""
from importlib import import_module

_HOMES = {
    "agents": ("AGENTS", "Agent", "AgentTask", "ReplayAgent", "ToolClient", "agent_factory"),
    "analysis": ("AblationCard", "Comparison", "GatePolicy", "GateResult", "ablation_card", "compare", "evaluate",
                 "failure_ledger", "load_policy", "load_triage", "pass_rates", "run_summary", "write_bundles"),
    "ehr": ("EHRImage", "EHRView", "Timeline"),
    "engine": ("RunSpec", "execute", "load_suite", "run_trial"),
    "engine.grading": ("grade_trajectory", "regrade"),
    "spec": ("AgentError", "AgentResult", "CatalogError", "Event", "ForgeError", "HiddenHalf", "Package",
             "PolicyError", "SpecError", "StoreError", "TaskPackage", "ToolCall", "TrajectoryFile", "UsageError",
             "find_packages", "load_package", "load_trajectory"),
    "store": ("Run", "RunStore", "Trial", "load_events", "load_trials", "load_verdicts", "open_run", "read_trial"),
    "tools": ("TOOLS", "ToolSession"),
    "verify": ("VERIFIERS", "Verdict", "grade"),
    "workers": ("InProcess", "IsolatedAgent", "Sandbox"),
}
_WHERE = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "AGENTS", "AblationCard", "Agent", "AgentError", "AgentResult", "AgentTask", "CatalogError", "Comparison",
    "EHRImage", "EHRView", "Event", "ForgeError", "GatePolicy", "GateResult", "HiddenHalf", "InProcess",
    "IsolatedAgent", "Package", "PolicyError", "ReplayAgent", "Run", "RunSpec", "RunStore", "Sandbox", "SpecError",
    "StoreError", "TOOLS", "TaskPackage", "Timeline", "ToolCall", "ToolClient", "ToolSession", "TrajectoryFile",
    "Trial", "UsageError", "VERIFIERS", "Verdict", "ablation_card", "agent_factory", "compare", "evaluate", "execute",
    "failure_ledger", "find_packages", "grade", "grade_trajectory", "load_events", "load_package", "load_policy",
    "load_suite", "load_trajectory", "load_triage", "load_trials", "load_verdicts", "open_run", "pass_rates",
    "read_trial", "regrade", "run_summary", "run_trial", "write_bundles",
]


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module 'forge_kernel' has no attribute {name!r}")
    value = getattr(import_module(f".{_WHERE[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
