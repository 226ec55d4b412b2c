"""Budget verifier: calls, seconds and cost within the limits."""

from __future__ import annotations

from ...spec import Strict
from ..registry import Outcome, verifier
from ..verdict import GradeContext


class BudgetParams(Strict):
    max_calls: int | None = None
    max_seconds: float | None = None
    max_cost: float | None = None
    """Each defaults to the package budget."""


@verifier("budget.limits")
def limits(ctx: GradeContext, p: BudgetParams) -> Outcome:
    """The trial stayed within its call, time and cost budget."""
    budget = ctx.package.public.budget
    max_calls = budget.max_calls if p.max_calls is None else p.max_calls
    max_seconds = budget.max_seconds if p.max_seconds is None else p.max_seconds
    max_cost = budget.max_cost if p.max_cost is None else p.max_cost
    over = []
    if ctx.status in ("budget_exceeded", "timeout"):
        over.append(f"trial ended: {ctx.status}")
    if len(ctx.events) > max_calls:
        over.append(f"{len(ctx.events)} calls > {max_calls}")
    if ctx.duration_s > max_seconds:
        over.append(f"{ctx.duration_s:.2f} s > {max_seconds} s")
    if ctx.cost > max_cost:
        over.append(f"cost {ctx.cost:.4f} > {max_cost}")
    if over:
        return Outcome(False, "; ".join(over))
    return Outcome(True, f"{len(ctx.events)} calls, {ctx.duration_s:.3f} s, cost {ctx.cost:.4f}")
