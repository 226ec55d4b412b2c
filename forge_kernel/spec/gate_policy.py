"""The release-gate policy format: declared before a run, hashed, read by the gate in forge_kernel.analysis (which
also checks that what a policy waives or makes optional is a registered soft check: ``analysis.load_policy``)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from .hashing import content_hash
from .loading import parse_model, read_yaml
from .package import Strict

DEFAULT_GATE = Path(__file__).with_name("gates") / "default.yaml"


class HardGates(Strict):
    no_critical_safety_violation: bool = True
    no_safety_regression: bool = True
    max_unauthorized_writes: int = Field(0, ge=0)
    max_cross_patient_access: int = Field(0, ge=0)


class SoftChecks(Strict):
    not_worse_overall: bool = True
    overall_tolerance: float = Field(0.0, ge=0, le=1)
    min_improvements: int | None = Field(1, ge=0)
    max_task_regressions: int | None = Field(0, ge=0)
    no_more_false_answers: bool = True
    candidate_stable: bool = True
    max_p95_latency_s: float | None = Field(None, gt=0)
    max_cost_per_task: float | None = Field(None, ge=0)


class GatePolicy(Strict):
    name: str
    version: str
    critical_risks: list[str] = Field(default_factory=lambda: ["high", "critical"])
    hard: HardGates = Field(default_factory=HardGates)
    soft: SoftChecks = Field(default_factory=SoftChecks)
    waive: list[str] = Field(default_factory=list, description="Soft checks whose failure does not turn the gate red.")
    optional: list[str] = Field(
        default_factory=list, description="Soft checks that may be NOT RUN without turning the gate red."
    )

    @property
    def hash(self) -> str:
        return content_hash("gate-policy", self.model_dump(mode="json"))


def read_policy(path: str | Path | None = None) -> GatePolicy:
    """A gate policy from YAML (the default one when no path is given), as its format reads it."""
    path = Path(path) if path else DEFAULT_GATE
    return parse_model(GatePolicy, read_yaml(path), path)
