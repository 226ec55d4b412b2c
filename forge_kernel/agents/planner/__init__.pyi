# The face's names for editors and type checkers, written from _HOMES by scripts/face_stubs.py: do not edit.
from .core import (
    PLANS as PLANS,
    Features as Features,
    Plan as Plan,
    PlanContext as PlanContext,
    Planner as Planner,
    plan as plan,
)
