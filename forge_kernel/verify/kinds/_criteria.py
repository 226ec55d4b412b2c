"""Criterion verifier: one criterion's status in the structured output and in every assessment the trial wrote."""

from __future__ import annotations

from functools import cached_property

from pydantic import Field

from ...spec import Strict
from .._text import normal
from ..matchers import values_at
from ..registry import Outcome, verifier
from ..verdict import GradeContext
from .answer import choice_key
from .evidence import assessed_protocol, written_assessments


class CriterionParams(Strict):
    protocol: str
    """The protocol id of the assessment that holds the criterion."""
    criterion: str
    """The criterion id, e.g. I3."""
    choice: list[str] = Field(min_length=1)
    """The statuses that are right (met, not_met, unknown, conflict)."""

    @cached_property
    def key(self) -> tuple[str, str]:
        """(protocol, criterion) as ``output_statuses`` keys them."""
        return normal(self.protocol), normal(self.criterion)

    @cached_property
    def right(self) -> frozenset[str]:
        """The right statuses as choices compare (``choice_key``)."""
        return frozenset(map(choice_key, self.choice))


def written_statuses(ctx: GradeContext) -> dict[str, list[tuple[str, dict[str, list[str]]]]]:
    """Protocol id -> (``Observation/id``, criterion -> its statuses) of each assessment of that protocol the trial
    wrote (the values of its components of that code), found once per grading for all the criterion checks."""

    def found() -> dict[str, list[tuple[str, dict[str, list[str]]]]]:
        by_protocol: dict[str, list[tuple[str, dict[str, list[str]]]]] = {}
        for source, written in written_assessments(ctx):
            statuses: dict[str, list[str]] = {}
            for c in written.get("component", []):
                criterion = str((c.get("code") or {}).get("text"))
                statuses.setdefault(criterion, []).append(str((c.get("valueCodeableConcept") or {}).get("text")))
            by_protocol.setdefault(assessed_protocol(written)[0], []).append((source, statuses))
        return by_protocol

    return ctx.remember("written_statuses", found)


def status_problem(statuses: list[str], p: CriterionParams, said: list[str]) -> str | None:
    """Why the statuses one source gives the criterion are wrong: none given, one not among the right ones, or one
    that the structured output does not give (``said``); None when they are right."""
    if not statuses:
        return "does not assess it"
    right = p.right  # every status and choice is a text: they are the same choice by key
    wrong = next((s for s in statuses if choice_key(s) not in right), None)
    if wrong is not None:
        return f"gives {wrong}, expected {' or '.join(p.choice)}"
    given = {choice_key(o) for o in said}
    differs = next((s for s in statuses if said and choice_key(s) not in given), None)
    return f"gives {differs}, the output {' / '.join(said)}" if differs else None


def output_statuses(ctx: GradeContext) -> dict[tuple[str, str], list[str]]:
    """(protocol id, criterion id), each as ``normal`` reads it -> the statuses the structured output gives it
    (``assessments[protocol_id=...].criteria[criterion_id=...].status``), found once per grading for all the
    criterion checks."""

    def found() -> dict[tuple[str, str], list[str]]:
        statuses: dict[tuple[str, str], list[str]] = {}
        for assessment in values_at(ctx.result.output, "assessments"):
            if not isinstance(assessment, dict):
                continue
            protocol = normal(str(assessment.get("protocol_id")))
            for item in values_at(assessment, "criteria"):
                if isinstance(item, dict):
                    key = (protocol, normal(str(item.get("criterion_id"))))
                    statuses.setdefault(key, []).extend(str(s) for s in values_at(item, "status"))
        return statuses

    return ctx.remember("output_statuses", found)


@verifier("answer.criterion")
def criterion(ctx: GradeContext, p: CriterionParams) -> Outcome:
    """A criterion of a protocol's assessment has a right status in the structured output and in every assessment
    of that protocol the trial wrote (its component of the criterion's code), and the written status agrees with the
    output's."""
    what = f"{p.protocol} {p.criterion}"
    said = output_statuses(ctx).get(p.key, [])
    why = status_problem(said, p, [])
    if why:
        return Outcome(False, f"output {why} ({what})")
    for source, statuses in written_statuses(ctx).get(p.protocol, []):
        why = status_problem(statuses.get(p.criterion, []), p, said)
        if why:
            return Outcome(False, f"{source} {why} ({what})")
    return Outcome(True, f"{what}: {' / '.join(said)} in the output and in every written assessment")
