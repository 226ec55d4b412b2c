"""Trajectories as files (gold solutions, counterexamples, recordings) and the check of an untrusted result."""

from __future__ import annotations

from typing import Any

from pydantic import Field, TypeAdapter

from .package import Strict
from .trajectory import AgentResult, AgentStatus

RESULT = TypeAdapter(AgentResult)
"""Checks what an agent returned, field by field (``RESULT.validate_python``), and writes it as JSON data."""


class ToolCall(Strict):
    """One call an agent asks for."""

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


class TrajectoryFile(Strict):
    """A recorded trajectory on disk: the calls to re-issue and the final result."""

    answer: str = ""
    output: dict[str, Any] = Field(default_factory=dict, description="Structured output, e.g. a criterion assessment.")
    confidence: float | None = Field(None, ge=0, le=1)
    status: AgentStatus = "completed"
    calls: list[ToolCall]
    task_id: str | None = None
    agent: str | None = None

    def result(self) -> AgentResult:
        """The result this trajectory ends with."""
        return AgentResult(self.answer, dict(self.output), self.confidence, self.status)
