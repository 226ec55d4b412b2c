"""Grading: every verifier of the hidden half on one finished trial, then the scores."""
from __future__ import annotations

from ..spec.grading import Grading, Verdict
from .registry import bound_uses, run_verifier
from .scoring import score
from .verdict import GradeContext



def grade(ctx: GradeContext) -> Grading:
    """Run the hidden half's verifiers; a trial that did not end normally also gets a failing verdict."""
    hidden = ctx.package.hidden
    verdicts = [run_verifier(bound, ctx) for bound in bound_uses(ctx.package)]
    if ctx.status != "completed":
        verdicts.append(Verdict("trial.ended", "trial.ended", "trace", "hard", False, f"trial ended: {ctx.status}"))
    scores = score(hidden.expected_tools, ctx.events, verdicts)
    return Grading(verdicts, scores, hidden.version, ctx.package.hidden_hash)
