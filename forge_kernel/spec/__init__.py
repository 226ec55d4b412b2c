"""TaskPackage models (public and hidden half), loading, hashing and JSON Schemas.

The names below are imported on first use: the errors, say, load no model.
"""
from .. import _lazy

_HOMES = {
    "errors": ("AgentError", "BudgetExceeded", "CatalogError", "ForgeError", "PolicyError", "SpecError", "StoreError",
               "UsageError"),
    "hashing": ("FORMAT_VERSION", "canonical_json", "content_hash"),
    "hidden": ("Counterexample", "HiddenHalf", "VerifierUse"),
    "loading": ("Package", "find_packages", "load_package", "load_trajectory"),
    "package": ("Budget", "Environment", "Fault", "Policy", "Precedence", "TaskPackage", "TaskText"),
    "trajectory": ("AgentResult", "Event"),
    "trajectory_file": ("ToolCall", "TrajectoryFile"),
}

__all__ = [
    "AgentError", "AgentResult", "Budget", "BudgetExceeded", "CatalogError", "Counterexample", "Environment", "Event",
    "FORMAT_VERSION", "Fault", "ForgeError", "HiddenHalf", "Package", "Policy", "PolicyError", "Precedence",
    "SpecError", "StoreError", "TaskPackage", "TaskText", "ToolCall", "TrajectoryFile", "UsageError", "VerifierUse",
    "canonical_json", "content_hash", "find_packages", "load_package", "load_trajectory",
]
__getattr__ = _lazy(__name__, _HOMES)


def __dir__() -> list[str]:
    return __all__
