"""The compact trajectory: one trial as a front end receives it (the replay player, a static report page).

Everything needed to step through the trial without asking the kernel again: each call, the model turns the agent
reported (their text cut to ``TURN_TEXT`` characters), the verdicts pointing at steps, and for every resource the
trial wrote its version before the first call and after each step that changed it (so "since the start", "this
step only" and "the resource whole" are all a lookup).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Literal

from pydantic import BaseModel

from .trajectory import ARGUMENTS, TURN_TEXT, Event, ModelTurn, asked_steps

SYNTHETIC_BANNER = (
    "SYNTHETIC DATA: every patient and record here is synthetic; figures come from agent trials on a "
    "virtual EHR, not from care."
)
"""What every rendering of a run says first."""
COMPACT_FORMAT: Final = "forge-compact-trajectory/1"


class CompactVerdict(BaseModel):
    id: str
    kind: str
    category: str
    severity: str
    passed: bool
    error: bool = False
    reason: str
    steps: list[int]


class CompactCall(BaseModel):
    """A tool call a model asked for: its name, its arguments as written (cut at ``ARGUMENTS``), and the step it
    became (None: it never reached the tools, e.g. its arguments were not a JSON object)."""

    name: str
    arguments: str
    step: int | None


class CompactTurn(BaseModel):
    """A model turn as the agent reported it (its own account, never graded), its text cut at ``TURN_TEXT``
    characters and ``text_cut`` the characters left out."""

    turn: int
    after_step: int
    """How many calls the record held when it was reported: it led to the calls after."""
    text: str
    text_cut: int = 0
    calls: list[CompactCall]
    finish_reason: str
    refusal: str | None
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    cost: float
    latency_ms: float
    retries: list[str]
    error: str | None


def compact_turns(turns: Sequence[ModelTurn], calls: Sequence[tuple[int, str]]) -> list[CompactTurn]:
    """A trial's model turns as the player receives them, given its recorded calls as (step, tool): each call a turn
    asked for with the step it became (``asked_steps``), texts cut."""
    return [
        CompactTurn(
            turn=turn.turn,
            after_step=turn.after_step,
            text=turn.text[:TURN_TEXT],
            text_cut=max(0, len(turn.text) - TURN_TEXT),
            finish_reason=turn.finish_reason,
            calls=[
                CompactCall(name=call.get("name", ""), arguments=call.get("arguments", "")[:ARGUMENTS], step=step)
                for call, step in zip(turn.tool_calls, steps)
            ],
            refusal=turn.refusal and turn.refusal[:TURN_TEXT],
            prompt_tokens=turn.prompt_tokens,
            completion_tokens=turn.completion_tokens,
            cached_tokens=turn.cached_tokens,
            cost=turn.cost,
            latency_ms=turn.latency_ms,
            retries=[r[:ARGUMENTS] for r in turn.retries],
            error=turn.error,
        )
        for turn, steps in zip(turns, asked_steps(turns, calls))
    ]


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
    cost: float = 0.0
    """US dollars the trial was charged (its model turns' included), every attempt's."""
    answer: str
    output: dict[str, Any]
    confidence: float | None
    self_status: str
    steps: list[Event]
    """Each call as the harness recorded it (JSON-Patch changes with the values they replaced)."""
    turns: list[CompactTurn] = []
    """The model turns the agent reported (``compact_turns``): its own account, never graded."""
    verdicts: list[CompactVerdict]
    resources: dict[str, CompactResource]
    """``Type/id`` -> the resource's versions."""
