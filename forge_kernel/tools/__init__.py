"""Tools: the registry, the catalog, knowledge tables, the policy engine, fault injection and the tool session.

Importing it registers every built-in tool; the names below are imported on first use."""

from .. import _lazy
from . import _calculators, _control, _fhir, _lists, _nursing, _reads, _writes, knowledge, protocols  # noqa: F401  (registers)

_HOMES = {
    "base": ("ANY_TYPE", "Args", "TOOLS", "Tool", "ToolContext", "ToolError", "tool"),
    "knowledge": ("dose_code", "drug_names", "lookup_key", "table"),
    "protocols": ("code_label", "criterion_codes", "criterion_leaves", "criterion_window"),
    "session": ("BudgetExceeded", "ToolSession"),
}

__all__ = [
    "ANY_TYPE",
    "Args",
    "BudgetExceeded",
    "TOOLS",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolSession",
    "code_label",
    "criterion_codes",
    "criterion_leaves",
    "criterion_window",
    "dose_code",
    "drug_names",
    "lookup_key",
    "table",
    "tool",
]
__getattr__, __dir__ = _lazy(__name__, _HOMES, __all__)
