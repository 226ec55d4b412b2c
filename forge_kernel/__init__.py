"""MedAgent Forge: execution-based evaluation of medical AI agents on a virtual FHIR R4 EHR (synthetic data).

The public names below are imported on first use, so that ``import forge_kernel`` (and an agent worker, or the
``forge`` command) pays only for what it touches.
"""
from importlib import import_module

_HOMES = {
    "agents": ("AGENTS", "Agent", "AgentTask", "Features", "Planner", "ReplayAgent", "ToolClient", "agent_factory"),
    "ehr": ("EHRImage", "EHRView", "Timeline"),
    "engine": ("RunSpec", "execute", "load_suite", "run_trial"),
    "engine.grading": ("grade_trajectory", "regrade"),
    "spec": ("AgentResult", "Event", "HiddenHalf", "Package", "SpecError", "TaskPackage", "ToolCall", "TrajectoryFile",
             "find_packages", "load_package", "load_trajectory"),
    "store": ("Run", "RunStore", "load_events", "load_trials", "load_verdicts", "open_run", "read_trial"),
    "tools": ("TOOLS", "ToolSession"),
    "verify": ("VERIFIERS", "Verdict", "grade"),
    "workers": ("InProcess", "IsolatedAgent", "Sandbox"),
}
_WHERE = {name: module for module, names in _HOMES.items() for name in names}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module 'forge_kernel' has no attribute {name!r}")
    value = getattr(import_module(f".{_WHERE[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
