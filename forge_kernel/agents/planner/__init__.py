"""The rule-based planner of the reference agents; importing it registers every category plan."""
from . import (  # noqa: F401  (registers the plans)
    analysis,
    devices,
    diagnosis,
    examination,
    medication,
    nsclc,
    operations,
    retrieval,
)
from .core import PLANS, Features, Plan, PlanContext, Planner, plan

__all__ = ["Features", "PLANS", "Plan", "PlanContext", "Planner", "plan"]
