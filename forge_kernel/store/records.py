"""One trial as the engine hands it to the store and as the store gives it back: the same model both ways."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..spec import AgentResult, Event, Grading, ModelTurn


@dataclass
class Ungraded:
    """A trial as its agent left it: what it did, nothing graded yet (plain data: it pickles, for the grader)."""

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
    queued_s: float = 0.0
    """Time the trial waited for a worker (0 for one in process or a single grading)."""
    turns: list[ModelTurn] = field(default_factory=list, kw_only=True)
    """The model turns the agent reported (the ``llm`` agent's): its own account, never graded."""
    attempts: int = field(default=1, kw_only=True)
    """How often the agent was run for it: more than 1 when a stall of the worker it shared spoiled an attempt that
    had not acted yet. The events and duration are the last attempt's; the budgets and the cost count every one's."""


@dataclass
class TrialRecord(Ungraded):
    """A graded trial (``grading`` is passed by name)."""

    grading: Grading = field(kw_only=True)
    trial_id: int | None = None
    """Its row in the store (None until stored)."""
    finished_at: str | None = None
    grading_id: int | None = None
    """Which grading ``grading`` is (1: the run's own; later ones: regrades)."""
