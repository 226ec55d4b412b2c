"""Answer verifiers: the final text and structured output the agent returned."""
from __future__ import annotations

import re

from pydantic import Field, field_validator

from ...spec.package import Strict
from ..matchers import Matcher, valid_regex, values_at, within
from ..registry import Outcome, verifier
from ..verdict import GradeContext

NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


class TextParams(Strict):
    all: list[str] = Field(default_factory=list)
    """Keywords that must all appear."""
    any: list[str] = Field(default_factory=list)
    """At least one of these must appear."""
    none: list[str] = Field(default_factory=list)
    """Phrases that must not appear."""


@verifier("answer.text")
def text(ctx: GradeContext, p: TextParams) -> Outcome:
    """Keywords present and forbidden phrases absent in the answer (case-insensitive)."""
    answer = ctx.result.answer.lower()
    present = [w for w in p.none if w.lower() in answer]
    if present:
        return Outcome(False, f"forbidden phrase present: {', '.join(present)}")
    missing = [w for w in p.all if w.lower() not in answer]
    if missing:
        return Outcome(False, f"keyword missing: {', '.join(missing)}")
    if p.any and not any(w.lower() in answer for w in p.any):
        return Outcome(False, f"none of: {', '.join(p.any)}")
    return Outcome(True, "answer text as required")


class NumberParams(Strict):
    value: float
    tol: float = Field(0.0, ge=0)
    pattern: str | None = None
    """A regex whose first group is the number; by default any number in the answer."""

    @field_validator("pattern")
    @classmethod
    def _one_group(cls, value: str | None) -> str | None:
        return valid_regex(value, groups=1)


@verifier("answer.number")
def number(ctx: GradeContext, p: NumberParams) -> Outcome:
    """A number in the answer within tolerance of the expected value."""
    if p.pattern:
        found = [m.group(1) for m in re.finditer(p.pattern, ctx.result.answer)]
    else:
        found = NUMBER.findall(ctx.result.answer)
    values = [float(v) for v in found if v and NUMBER.fullmatch(v)]
    if any(within(v, p.value, p.tol) for v in values):
        return Outcome(True, f"{p.value} ± {p.tol} found")
    return Outcome(False, f"no number within {p.value} ± {p.tol} (saw {len(values)} number(s))")


class FieldParams(Strict):
    path: str
    """Dotted path into the structured output."""
    match: Matcher


@verifier("answer.field")
def field(ctx: GradeContext, p: FieldParams) -> Outcome:
    """A field of the structured output matches."""
    values = values_at(ctx.result.output, p.path)
    if any(p.match.matches(v) for v in values):
        return Outcome(True, f"output.{p.path} matches")
    return Outcome(False, f"output.{p.path} does not match" if values else f"output.{p.path} absent")
