"""TaskPackage models (public and hidden half), suite defaults, edits, trajectories, verdicts, the gate policy,
errors, loading and hashing; the JSON Schema files in ``schemas/`` (written by ``forge_kernel.authoring.schemas``).

The names below are imported on first use: the errors, say, load no model.
"""
from .. import _lazy

_HOMES = {
    "catalog_schema": ("hidden_schema", "tool_names"),
    "compact": ("CompactResource", "CompactTrajectory", "CompactVerdict", "SYNTHETIC_BANNER", "compact_turns"),
    "console": ("echo", "printable"),
    "edits": ("Edit", "EditError", "apply_edits", "call_labels", "edits_between"),
    "errors": ("AgentError", "BudgetExceeded", "CatalogError", "ForgeError", "PolicyError", "SpecError",
               "StoreError", "UsageError"),
    "fixtures": ("validate_fixture",),
    "gate_policy": ("DEFAULT_GATE", "GatePolicy", "read_policy"),
    "grading": ("ERROR_PREFIX", "Grading", "Scores", "Verdict"),
    "hashing": ("FORMAT_VERSION", "canonical_json", "content_hash"),
    "hidden": ("Counterexample", "HiddenHalf", "MutantOperator", "RUBRIC", "ValidMutant", "ValidVariant",
               "VerifierUse"),
    "loading": ("PACKAGE_FILE", "Package", "SUITE_DEFAULTS", "bundle_resources", "find_packages", "load_package",
                "load_trajectory", "package_from_files", "parse_model", "read_json", "read_yaml"),
    "package": ("Budget", "Environment", "Fault", "Policy", "Precedence", "Strict", "TaskPackage", "TaskText"),
    "suites": ("HiddenDefaults", "SUITE_FILE", "SuiteDefaults"),
    "trajectory": ("AgentResult", "AgentStatus", "CROSS_PATIENT", "Event", "ModelTurn", "PRECEDENCE", "TURN_TEXT",
                   "UNAUTHORIZED_WRITE", "asked_steps", "compact_json"),
    "trajectory_file": ("RESULT", "ToolCall", "TrajectoryFile"),
}

__all__ = [
    "AgentError", "AgentResult", "AgentStatus", "Budget", "BudgetExceeded", "CROSS_PATIENT", "CatalogError",
    "CompactResource", "CompactTrajectory", "CompactVerdict", "Counterexample", "DEFAULT_GATE", "ERROR_PREFIX",
    "Edit", "EditError", "Environment", "Event", "FORMAT_VERSION", "Fault", "ForgeError", "GatePolicy", "Grading",
    "HiddenDefaults", "HiddenHalf", "ModelTurn", "MutantOperator", "PACKAGE_FILE", "PRECEDENCE", "Package", "Policy",
    "PolicyError", "Precedence", "RESULT", "RUBRIC", "SUITE_DEFAULTS", "SUITE_FILE", "SYNTHETIC_BANNER", "Scores",
    "SpecError", "StoreError", "Strict", "SuiteDefaults", "TURN_TEXT", "TaskPackage", "TaskText", "ToolCall",
    "TrajectoryFile", "UNAUTHORIZED_WRITE", "UsageError", "ValidMutant", "ValidVariant", "Verdict", "VerifierUse",
    "apply_edits", "asked_steps", "bundle_resources", "call_labels", "canonical_json", "compact_json",
    "compact_turns", "content_hash", "echo", "edits_between", "find_packages", "hidden_schema", "load_package",
    "load_trajectory", "package_from_files", "parse_model", "printable", "read_json", "read_policy", "read_yaml",
    "tool_names", "validate_fixture",
]
__getattr__, __dir__ = _lazy(__name__, _HOMES, __all__)
