"""The rule-based planner of the reference agents; importing it registers every category plan."""
from . import analysis, devices, diagnosis, examination, medication, nsclc, operations, retrieval  # noqa: F401  (registers the plans)
from .core import PLANS, Features, Plan, PlanContext, Planner, plan

__all__ = ["Features", "PLANS", "Plan", "PlanContext", "Planner", "plan"]
