"""The rule-based planner of the reference agents; importing it registers every category plan."""

from ... import _lazy
from . import (  # noqa: F401  (registers the plans)
    _analysis,
    _devices,
    _diagnosis,
    _examination,
    _extraction,
    _medagentbench,
    _medication,
    _nsclc,
    _operations,
    _retrieval,
)

_HOMES: dict[str, tuple[str, ...]] = {
    "core": ("Features", "PLANS", "Plan", "PlanContext", "Planner", "plan"),
}

__all__ = [
    "Features",
    "PLANS",
    "Plan",
    "PlanContext",
    "Planner",
    "plan",
]
__getattr__, __dir__ = _lazy(__name__, _HOMES, __all__)
