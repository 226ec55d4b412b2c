"""The hidden half of a TaskPackage: how a trial is judged. Agents never see it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from .edits import Edit, EditError, apply_edits
from .errors import SpecError
from .package import Strict
from .trajectory_file import TrajectoryFile

Category = Literal["success", "safety", "budget", "trace", "answer", "rubric"]
RUBRIC = "rubric"
"""The category of a model's judgements (``judge.rubric``): soft only (a use of it that is not is refused when its
hidden half is bound), made only where grading is asked to judge (``forge regrade``, ``forge grade``), and counted
in neither completion nor answer failures."""
MutantOperator = Literal[
    "drop-call",
    "read-other-patient",
    "skip-check",
    "check-other-target",
    "repeat-write",
    "allergy-order",
    "forbidden-write",
    "text-only",
    "unit-swap",
    "date-other-format",
    "several-values",
    "invented-fact",
    "claim-negated",
    "called-stable",
    "value-from-elsewhere",
    "value-linked-from-elsewhere",
    "cite-unread",
    "cite-other-patient",
    "cite-stale",
    "cite-sibling",
    "injected-action",
]
"""The operators of ``forge selftest --mutants``: each builds mutants of the gold solution (verify/mutants.py)."""


class VerifierUse(Strict):
    """One verifier kind applied with parameters."""

    id: str
    kind: str
    category: Category
    severity: Literal["hard", "soft"] = "hard"
    params: dict[str, Any] = Field(default_factory=dict)


class Case(Strict):
    """A trajectory to grade besides the gold, written in full or as edits of the gold (spec/edits.py); the loader
    expands edits into ``trajectory``, so that every reader sees a full one."""

    name: str
    trajectory: TrajectoryFile | None = Field(None, description="The whole trajectory (or give `edits`).")
    edits: list[Edit] | None = Field(None, min_length=1, description="Changes to the gold (or give `trajectory`).")

    @model_validator(mode="after")
    def _one_form(self) -> Case:
        if self.edits is None and self.trajectory is None:
            raise ValueError("give a trajectory or edits of the gold")
        return self


class Counterexample(Case):
    """A trajectory that must fail the named verifiers (and may pin its scores)."""

    must_fail: list[str] = Field(min_length=1, description="Ids of verifiers this trajectory must fail.")
    expect_accuracy: float | None = None
    expect_completion: int | None = None


class ValidVariant(Case):
    """Another way to solve the task (reads in another order, an extra harmless read, equivalent wording): it must
    pass every hard verifier. The mirror of a counterexample."""

    reason: str = Field(min_length=1, description="Why this trajectory is as good as the gold solution.")


class ValidMutant(Strict):
    """A mutant of the gold solution that is in fact valid, so that ``forge selftest --mutants`` does not count
    it as a survivor; it must then pass every hard verifier."""

    operator: MutantOperator
    target: str = Field(
        min_length=1,
        description=(
            "What the operator changed, as selftest --mutants prints it: `<tool>#<n>` (the n-th gold call of that "
            "tool) for drop-call, read-other-patient, repeat-write and check-other-target; the tool for skip-check and "
            "forbidden-write; "
            "the allergy's `AllergyIntolerance/<id>` for allergy-order; the cited `Type/id` for the citing operators; "
            "the amount as the answer writes it (e.g. `7.2 mmol/L`) for several-values; the fact as the added sentence "
            "writes it (e.g. `6.4 mmol/L`, `华法林`) for invented-fact; `output` for text-only; the typed answer's "
            "field for unit-swap; the claim denied (its first name) for claim-negated; the measurement called stable "
            "(its first name) for called-stable; the measurement given the value (its first name) for "
            "value-from-elsewhere and value-linked-from-elsewhere. date-other-format mutants are valid by "
            "construction and are never declared."
        ),
    )
    reason: str = Field(min_length=1)


class HiddenHalf(Strict):
    """Hidden half (``verifiers/<suite>/<task-id>.yaml``)."""

    id: str
    version: str = Field(description="Version of the grading; bump it when a verifier changes.")
    expected_tools: list[str] = Field(min_length=1, description="The expected tool chain.")
    verifiers: list[VerifierUse] = Field(min_length=1)
    gold: TrajectoryFile
    counterexamples: list[Counterexample] = Field(default_factory=list)
    valid_variants: list[ValidVariant] = Field(default_factory=list)
    valid_mutants: list[ValidMutant] = Field(default_factory=list)


CASE_LISTS = ("counterexamples", "valid_variants")


def grading_content(hidden: HiddenHalf) -> dict[str, Any]:
    """The hidden half as grading sees it (edits expanded, so without them): what its hash covers. Writing a case as
    edits or as the copy they expand to gives the same hash."""
    return hidden.model_dump(mode="json", exclude={name: {"__all__": {"edits"}} for name in CASE_LISTS})


def expand_cases(hidden: HiddenHalf, path: object) -> HiddenHalf:
    """The hidden half with every case written as edits expanded against its gold; a case with both forms, or an
    edit that does not fit the gold, is a SpecError naming ``path`` and the field."""
    update = {}
    for name in CASE_LISTS:
        cases = list(getattr(hidden, name))
        for i, case in enumerate(cases):
            if case.edits is None:
                continue
            if "trajectory" in case.model_fields_set:
                raise SpecError(path, f"{name}.{i}", "give a trajectory or edits of the gold, not both")
            try:
                trajectory = apply_edits(hidden.gold, case.edits)
            except EditError as exc:
                raise SpecError(path, f"{name}.{i}.edits.{exc.field}", exc.message) from None
            cases[i] = case.model_copy(update={"trajectory": trajectory})
        update[name] = cases
    return hidden.model_copy(update=update)
