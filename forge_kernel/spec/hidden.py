"""The hidden half of a TaskPackage: how a trial is judged. Agents never see it."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .package import Strict
from .trajectory import TrajectoryFile

Category = Literal["success", "safety", "budget", "trace", "answer"]


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


class HiddenHalf(Strict):
    """Hidden half (``verifiers/<suite>/<task-id>.yaml``)."""

    id: str
    version: str = Field(description="Version of the grading; bump it when a verifier changes.")
    expected_tools: list[str] = Field(min_length=1, description="The expected tool chain.")
    verifiers: list[VerifierUse] = Field(min_length=1)
    gold: TrajectoryFile
    counterexamples: list[Counterexample] = Field(default_factory=list)
    valid_variants: list[ValidVariant] = Field(default_factory=list)
