"""What an agent did, as records: the events of its calls, the model turns it reported and the result it returned.
Plain dataclasses, so reading a stored trial needs no model library; the files that hold trajectories are in
``trajectory_file``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, get_args

CROSS_PATIENT = "cross_patient"
"""Event.denied: a call about another patient than the task's."""
UNAUTHORIZED_WRITE = "unauthorized_write"
"""Event.denied: a write of a resource type the policy does not allow."""
UNAUTHORIZED_READ = "unauthorized_read"
"""Event.denied: a read of a resource type the policy does not let the generic FHIR tools read."""
PRECEDENCE = "precedence"
"""Event.denied (enforced) or flag prefix (recorded): a required check had not happened yet."""

AgentStatus = Literal["completed", "escalated", "gave_up", "error"]
"""How an agent says it stopped."""

compact_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode
"""JSON as the record stores it and the wire carries it: UTF-8 text, no spaces, odd values as strings."""


@dataclass
class AgentResult:
    """What an agent returns when it stops. What an untrusted agent returns is checked field by field
    (``trajectory_file.RESULT``) before it is stored."""

    answer: str = ""
    output: dict[str, Any] = field(default_factory=dict)
    """Structured output, e.g. a criterion assessment."""
    confidence: float | None = None
    """Between 0 and 1."""
    status: AgentStatus = "completed"

    __pydantic_config__: ClassVar[dict[str, Any]] = {"extra": "forbid"}  # unknown fields are errors when checked

    def __post_init__(self) -> None:
        if self.confidence is not None and not 0 <= self.confidence <= 1:
            raise ValueError(f"confidence must be between 0 and 1, not {self.confidence}")
        if self.status not in get_args(AgentStatus):
            raise ValueError(f"status must be one of {', '.join(get_args(AgentStatus))}, not {self.status!r}")


@dataclass
class Event:
    """One tool call as it happened."""

    step: int
    """1-based position in the trajectory."""
    tool: str
    args: dict[str, Any]
    kind: str
    """read, write, compute or unknown."""
    ok: bool
    result: Any = None
    """What the agent got back (None on error)."""
    error: dict[str, str] | None = None
    """``{"code", "message"}`` when the call failed."""
    denied: str | None = None
    """Policy reason when the call was refused (e.g. cross_patient, unauthorized_write)."""
    flags: list[str] = field(default_factory=list)
    """Policy findings on an allowed call (e.g. precedence:medication_request_create)."""
    fault: str | None = None
    """Injected fault kind, if one fired."""
    latency_ms: float = 0.0
    started_ms: float | None = None
    """When the call began, in ms after the trial began (measured by the harness)."""
    changes: list[dict[str, Any]] = field(default_factory=list)
    """JSON-Patch operations (with ``replaced``) this call made to the EHR."""

    __pydantic_config__: ClassVar[dict[str, Any]] = {"extra": "forbid"}


@dataclass
class ModelTurn:
    """One model turn as the agent reported it (the ``llm`` agent does): what the model said and asked for before
    forge ran anything, and what it used. The agent's own account, kept beside the calls: shown, counted in cost and
    latency, never read by a verifier."""

    turn: int = 0
    """1-based, numbered by the harness (0 until it does)."""
    after_step: int = 0
    """How many calls the record held when it was reported (the harness's count): it led to the calls after."""
    text: str = ""
    tool_calls: list[dict[str, str]] = field(default_factory=list)
    """``{"id", "name", "arguments"}`` as the model wrote them."""
    finish_reason: str = ""
    refusal: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost: float = 0.0
    """US dollars, by the agent's price table; charged against the trial's cost budget."""
    latency_ms: float = 0.0
    """The model's time for the turn, retries included, as the agent measured it."""
    retries: list[str] = field(default_factory=list)
    """Why earlier tries of the turn failed (a rate limit, a timeout)."""
    error: str | None = None
    """Why the turn failed for good (the trial then ends as the agent's error)."""

    __pydantic_config__: ClassVar[dict[str, Any]] = {"extra": "forbid"}


TURN_TEXT = 600
"""The characters of a model turn's text (or refusal) that a replay shows (the player, ``forge replay``); the rest
is counted, not shown."""
ARGUMENTS = 300
"""The characters of a call's arguments, as a model wrote them, that the player receives."""


def sendable(arguments: str) -> bool:
    """Whether arguments as a model wrote them are a JSON object (or nothing), which a tool can be called with."""
    try:
        return isinstance(json.loads(arguments or "{}"), dict)
    except ValueError:
        return False


def asked_steps(turns: Sequence[ModelTurn], calls: Sequence[tuple[int, str]]) -> list[list[int | None]]:
    """For each model turn, the step each call it asked for became, given the trial's recorded calls as (step, tool):
    matched in order to the next recorded call of that tool among those the turn led to (the calls after its
    ``after_step``, up to the next turn's). None: it never reached the tools (its arguments were not a JSON object,
    or no call matches)."""
    out = []
    for i, turn in enumerate(turns):
        end = turns[i + 1].after_step if i + 1 < len(turns) else len(calls)
        led = list(calls[turn.after_step : max(end, turn.after_step)])
        steps = []
        for call in turn.tool_calls:
            reached = sendable(call.get("arguments", "")) and led and led[0][1] == call.get("name")
            steps.append(led.pop(0)[0] if reached else None)
        out.append(steps)
    return out
