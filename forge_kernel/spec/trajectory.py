"""Calls, events and the trajectory file: what an agent did, as data."""
from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .package import Strict

CROSS_PATIENT = "cross_patient"
"""Event.denied: a call about another patient than the task's."""
UNAUTHORIZED_WRITE = "unauthorized_write"
"""Event.denied: a write of a resource type the policy does not allow."""
PRECEDENCE = "precedence"
"""Event.denied (enforced) or flag prefix (recorded): a required check had not happened yet."""


compact_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode
"""JSON as the record stores it and the wire carries it: UTF-8 text, no spaces, odd values as strings."""


class ToolCall(Strict):
    """One call an agent asks for."""

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


class AgentResult(Strict):
    """What an agent returns when it stops."""

    answer: str = ""
    output: dict[str, Any] = Field(default_factory=dict, description="Structured output, e.g. a criterion assessment.")
    confidence: float | None = Field(None, ge=0, le=1)
    status: Literal["completed", "escalated", "gave_up", "error"] = "completed"


class TrajectoryFile(AgentResult):
    """A recorded trajectory on disk: the calls to re-issue and the final result."""

    calls: list[ToolCall]
    task_id: str | None = None
    agent: str | None = None


class Event(BaseModel):
    """One tool call as it happened."""

    model_config = ConfigDict(extra="forbid")

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
    flags: list[str] = Field(default_factory=list)
    """Policy findings on an allowed call (e.g. precedence:medication_request_create)."""
    fault: str | None = None
    """Injected fault kind, if one fired."""
    latency_ms: float = 0.0
    started_ms: float | None = None
    """When the call began, in ms after the trial began (measured by the harness)."""
    changes: list[dict[str, Any]] = Field(default_factory=list)
    """JSON-Patch operations (with ``replaced``) this call made to the EHR."""

