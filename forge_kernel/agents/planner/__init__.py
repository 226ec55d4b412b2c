"""The rule-based planner of the reference agents; importing it registers every category plan."""
from . import (  # noqa: F401  (registers the plans)
    _analysis,
    _devices,
    _diagnosis,
    _examination,
    _medication,
    _nsclc,
    _operations,
    _retrieval,
)
from .core import PLANS, Features, Plan, PlanContext, Planner, plan

__all__ = ["Features", "PLANS", "Plan", "PlanContext", "Planner", "plan"]
