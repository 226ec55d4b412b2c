"""The compact trajectory: one trial as a front end receives it (the replay player, a static report page).

Everything needed to step through the trial without asking the kernel again: each call, the verdicts pointing at
steps, and for every resource the trial wrote its version before the first call and after each step that changed
it (so "since the start", "this step only" and "the resource whole" are all a lookup).
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from .trajectory import Event, ModelTurn

SYNTHETIC_BANNER = ("SYNTHETIC DATA: every patient and record here is synthetic; figures come from agent trials on a "
                    "virtual EHR, not from care.")
"""What every rendering of a run says first."""
COMPACT_FORMAT = "forge-compact-trajectory/1"


class CompactVerdict(BaseModel):
    id: str
    kind: str
    category: str
    severity: str
    passed: bool
    error: bool = False
    reason: str
    steps: list[int]


class CompactResource(BaseModel):
    """One resource the trial wrote: as it was before the first call (None: it did not exist), then after each step
    that changed it (None: removed)."""

    initial: dict[str, Any] | None
    versions: list[tuple[int, dict[str, Any] | None]]


class CompactTrajectory(BaseModel):
    format: Literal["forge-compact-trajectory/1"] = COMPACT_FORMAT
    banner: str = SYNTHETIC_BANNER
    run_id: str
    task_id: str
    task_version: str
    title: str
    instruction: str
    agent: str
    agent_version: str
    isolation: str
    """How the agent ran: trusted, in process, or which sandbox."""
    trial: int
    seed: int
    status: str
    reason: str | None
    passed: bool
    scores: dict[str, Any]
    hidden_version: str
    duration_ms: float
    """The last attempt's (see ``attempts``)."""
    attempts: int = 1
    """How often the agent was run for this trial: more than 1 when a stall of the worker it shared spoiled an
    attempt that had not acted yet. The steps and duration are the last attempt's; the cost counts every one's."""
    answer: str
    output: dict[str, Any]
    confidence: float | None
    self_status: str
    steps: list[Event]
    """Each call as the harness recorded it (JSON-Patch changes with the values they replaced)."""
    turns: list[ModelTurn] = []
    """The model turns the agent reported (the ``llm`` agent's), each with ``after_step``: its own account."""
    verdicts: list[CompactVerdict]
    resources: dict[str, CompactResource]
    """``Type/id`` -> the resource's versions."""
