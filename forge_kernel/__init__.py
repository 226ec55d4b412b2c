"""MedAgent Forge: execution-based evaluation of medical AI agents on a virtual FHIR R4 EHR (synthetic data)."""
from .agents import (
    AGENTS,
    Agent,
    AgentTask,
    Features,
    Planner,
    ReplayAgent,
    agent_factory,
)
from .ehr import EHRImage, EHRView, state_diff
from .engine import RunSpec, execute, load_suite, run_trial
from .engine.grading import grade_trajectory, regrade
from .spec import (
    AgentResult,
    Event,
    HiddenHalf,
    Package,
    SpecError,
    TaskPackage,
    ToolCall,
    TrajectoryFile,
    find_packages,
    load_package,
    load_trajectory,
)
from .store import RunStore, load_events, load_trials, load_verdicts, read_trial
from .tools import TOOLS, ToolSession
from .verify import VERIFIERS, Verdict, grade

__all__ = [
    "AGENTS", "Agent", "AgentResult", "AgentTask", "EHRImage", "EHRView", "Event", "HiddenHalf", "Package",
    "Features", "Planner", "ReplayAgent", "RunSpec", "RunStore", "SpecError", "TOOLS", "TaskPackage", "ToolCall",
    "ToolSession", "TrajectoryFile", "VERIFIERS", "Verdict", "agent_factory", "execute", "find_packages", "grade",
    "grade_trajectory", "load_events", "load_package", "load_suite", "load_trajectory", "load_trials",
    "load_verdicts", "read_trial", "regrade", "run_trial", "state_diff",
]
