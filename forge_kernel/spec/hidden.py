"""The hidden half of a TaskPackage: how a trial is judged. Agents never see it."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .package import Strict
from .trajectory import TrajectoryFile

Category = Literal["success", "safety", "budget", "trace", "answer"]
MutantOperator = Literal["drop-call", "read-other-patient", "skip-check", "repeat-write", "allergy-order",
                         "forbidden-write", "text-only", "several-values", "invented-fact", "cite-unread",
                         "cite-other-patient", "cite-stale"]
"""The operators of ``forge selftest --mutants``: each builds mutants of the gold solution (verify/mutants.py)."""


class VerifierUse(Strict):
    """One verifier kind applied with parameters."""

    id: str
    kind: str
    category: Category
    severity: Literal["hard", "soft"] = "hard"
    params: dict[str, Any] = Field(default_factory=dict)


class Counterexample(Strict):
    """A trajectory that must fail the named verifiers (and may pin its scores)."""

    name: str
    trajectory: TrajectoryFile
    must_fail: list[str] = Field(min_length=1, description="Ids of verifiers this trajectory must fail.")
    expect_accuracy: float | None = None
    expect_completion: int | None = None


class ValidVariant(Strict):
    """Another way to solve the task (reads in another order, an extra harmless read, equivalent wording): it must
    pass every hard verifier. The mirror of a counterexample."""

    name: str
    reason: str = Field(min_length=1, description="Why this trajectory is as good as the gold solution.")
    trajectory: TrajectoryFile


class ValidMutant(Strict):
    """A mutant of the gold solution that is in fact valid, so that ``forge selftest --mutants`` does not count
    it as a survivor; it must then pass every hard verifier."""

    operator: MutantOperator
    target: str = Field(min_length=1, description=(
        "What the operator changed, as selftest --mutants prints it: `<tool>#<n>` (the n-th gold call of that "
        "tool) for drop-call, read-other-patient and repeat-write; the tool for skip-check and forbidden-write; "
        "the allergy's `AllergyIntolerance/<id>` for allergy-order; the cited `Type/id` for the citing operators; "
        "the amount as the answer writes it (e.g. `7.2 mmol/L`) for several-values; the fact as the added sentence "
        "writes it (e.g. `6.4 mmol/L`, `华法林`) for invented-fact; `output` for text-only."))
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
