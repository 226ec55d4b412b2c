"""State verifiers: what the trial did to the EHR, compared with the initial state."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ...spec import Strict
from ..matchers import Matcher, matches_all
from ..registry import Outcome, verifier
from ..verdict import GradeContext


class ResourceParams(Strict):
    type: str
    change: Literal["created", "changed", "unchanged"] = "created"
    where: dict[str, Matcher] = Field(default_factory=dict)
    min: int = Field(1, ge=0)
    max: int | None = None
    label: str = ""
    """Words for the reason, e.g. 'ECG request'."""


@verifier("state.resource")
def resource(ctx: GradeContext, p: ResourceParams) -> Outcome:
    """Resources of a type created, changed, or left unchanged by the trial, filtered by field matchers."""
    what = p.label or f"{p.type} {p.change}"
    hits = set()
    for key, before, after in ctx.written():
        if key[0] != p.type:
            continue
        status = "created" if before is None else "changed" if after is not None else "removed"
        if p.change == "unchanged":
            if any(doc is not None and matches_all(doc, p.where) for doc in (before, after)):
                hits.add(key)
        elif status == p.change and matches_all(after, p.where):
            hits.add(key)
    steps = ctx.steps_writing(hits)
    if p.change == "unchanged":
        if hits:
            return Outcome(False, f"{what}: {len(hits)} resource(s) written", steps)
        return Outcome(True, f"{what}: none written")
    if len(hits) < p.min:
        return Outcome(False, f"{what}: found {len(hits)}, need at least {p.min}", steps)
    if p.max is not None and len(hits) > p.max:
        return Outcome(False, f"{what}: found {len(hits)}, at most {p.max} allowed", steps)
    return Outcome(True, f"{what}: found {len(hits)}", steps)
