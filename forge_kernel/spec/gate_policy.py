"""The release-gate policy format: declared before a run, hashed, read by the gate in forge_kernel.analysis."""
from __future__ import annotations

from pathlib import Path

from pydantic import Field, ValidationInfo, field_validator

from .hashing import content_hash
from .loading import parse_model, read_yaml
from .package import Strict

DEFAULT_GATE = Path(__file__).with_name("gates") / "default.yaml"


def soft_checks(waivable: bool) -> list[str]:
    """The registered soft gate checks (``analysis/gate_checks.py``): those that may be waived, or made optional."""
    from ..catalog import load  # the checks are registered above this layer; read them when a policy is checked

    return [c.name for c in load().section("gate check").values() if c.level == "soft" and (c.waivable or not waivable)]


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
    optional: list[str] = Field(default_factory=list,
                                description="Soft checks that may be NOT RUN without turning the gate red.")

    @field_validator("waive", "optional")
    @classmethod
    def only_soft_checks(cls, names: list[str], info: ValidationInfo) -> list[str]:
        what = "waived" if info.field_name == "waive" else "optional"
        allowed = soft_checks(waivable=info.field_name == "waive")
        for name in names:
            if name not in allowed:
                raise ValueError(f"{name!r} cannot be {what}: only soft checks can be {what}")
        return names

    @property
    def hash(self) -> str:
        return content_hash("gate-policy", self.model_dump(mode="json"))


def load_policy(path: str | Path | None = None) -> GatePolicy:
    """A gate policy from YAML (the default one when no path is given)."""
    path = Path(path) if path else DEFAULT_GATE
    return parse_model(GatePolicy, read_yaml(path), path)
