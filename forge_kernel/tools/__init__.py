"""Tools: the registry, the catalog, knowledge tables, the policy engine, fault injection and the tool session."""
from ..spec.trajectory import CROSS_PATIENT, PRECEDENCE, UNAUTHORIZED_WRITE
from . import _calculators, _control, _lists, _nursing, _reads, _writes, knowledge, protocols  # noqa: F401  (registers the catalog)
from .base import TOOLS, Args, Tool, ToolContext, ToolError, tool
from .session import BudgetExceeded, ToolSession

__all__ = [
    "Args", "BudgetExceeded", "CROSS_PATIENT", "PRECEDENCE", "TOOLS", "Tool", "ToolContext", "ToolError",
    "ToolSession", "UNAUTHORIZED_WRITE", "tool",
]
