"""TaskPackage models (public and hidden half), loading, hashing and JSON Schemas."""
from .errors import (
    AgentError,
    BudgetExceeded,
    CatalogError,
    ForgeError,
    PolicyError,
    SpecError,
    StoreError,
    UsageError,
)
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
    "AgentError", "AgentResult", "Budget", "BudgetExceeded", "CatalogError", "Counterexample", "Environment", "Event",
    "FORMAT_VERSION", "Fault", "ForgeError", "HiddenHalf", "Package", "Policy", "PolicyError", "Precedence",
    "SpecError", "StoreError", "TaskPackage", "TaskText", "ToolCall", "TrajectoryFile", "UsageError", "VerifierUse",
    "canonical_json", "content_hash", "find_packages", "load_package", "load_trajectory",
]
