"""What the engine hands the store for one trial."""
from __future__ import annotations

from dataclasses import dataclass

from ..spec import AgentResult
from ..spec.trajectory import Event
from ..verify import Grading


@dataclass
class TrialRecord:
    task_id: str
    agent: str
    agent_version: str
    trial: int
    seed: int
    status: str
    """completed, agent_error, timeout or budget_exceeded."""
    reason: str | None
    result: AgentResult
    events: list[Event]
    duration_s: float
    cost: float
    grading: Grading
    queued_s: float = 0.0
    """Time the trial waited for a concurrency slot (set by the run, 0 for a single grading)."""
