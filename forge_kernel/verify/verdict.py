"""Verdicts and the context every verifier reads."""
from __future__ import annotations

from dataclasses import dataclass

from ..ehr import EHRView
from ..spec import AgentResult, Package
from ..spec.trajectory import Event

ERROR_PREFIX = "error: "
"""How the reason of a verdict whose verifier raised begins (the run store keeps only passed and reason)."""


@dataclass(frozen=True)
class Verdict:
    """The output of one verifier on one trial."""

    verifier_id: str
    kind: str
    category: str
    """success, safety, budget, trace or answer."""
    severity: str
    """hard or soft."""
    passed: bool
    reason: str
    steps: tuple[int, ...] = ()
    """The trajectory steps it points at."""
    error: bool = False
    """The verifier raised: the grading, not the trial, is at fault; never passes, reason prefixed ``error: ``."""


@dataclass
class GradeContext:
    """Everything a verifier may look at: package (both halves), final EHR view, events and result."""

    package: Package
    view: EHRView
    """The trial's final state; ``view.image`` is the initial one."""
    events: list[Event]
    result: AgentResult
    status: str = "completed"
    """How the trial ended: completed, agent_error, timeout or budget_exceeded."""
    duration_s: float = 0.0
    cost: float = 0.0
