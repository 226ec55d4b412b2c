"""The rule-based planner of the reference agents; importing it registers every category plan."""
from . import diagnosis, medication, operations  # noqa: F401  (registers the plans)
from .core import PLANS, Features, Plan, PlanContext, Planner, plan

__all__ = ["Features", "PLANS", "Plan", "PlanContext", "Planner", "plan"]
