"""TaskPackage models (public and hidden half), loading, hashing and JSON Schemas."""
from .errors import BudgetExceeded, SpecError
from .hashing import FORMAT_VERSION, canonical_json, content_hash
from .hidden import Counterexample, HiddenHalf, VerifierUse
from .loading import Package, find_packages, load_package, load_trajectory
from .package import (
    Budget,
    Environment,
    Fault,
    Policy,
    Precedence,
    TaskPackage,
    TaskText,
)
from .trajectory import AgentResult, Event, ToolCall, TrajectoryFile

__all__ = [
    "AgentResult", "Budget", "BudgetExceeded", "Counterexample", "Environment", "Event", "FORMAT_VERSION", "Fault",
    "HiddenHalf", "Package", "Policy", "Precedence", "SpecError", "TaskPackage", "TaskText", "ToolCall",
    "TrajectoryFile", "VerifierUse", "canonical_json", "content_hash", "find_packages", "load_package",
    "load_trajectory",
]
