"""The context every verifier reads (verdicts themselves are data: ``spec/grading.py``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..ehr import EHRView
from ..spec import AgentResult, Event, Package, Verdict as Verdict  # the face hands Verdict out


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
