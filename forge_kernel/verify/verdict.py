"""The context every verifier reads (verdicts themselves are data: ``spec/grading.py``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..ehr import EHRView, Key, resource_key
from ..spec import AgentResult, Event, Package, Verdict as Verdict  # the face hands Verdict out

T = TypeVar("T")


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
    memo: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """What one grading has derived from the trial, shared by its verifiers (``remember``); emptied by ``grade``
    before and after, so that no grading reuses another's."""

    def remember(self, key: str, build: Callable[[], T]) -> T:
        """``build()``, made once per grading under ``key``."""
        if key not in self.memo:
            self.memo[key] = build()
        made: T = self.memo[key]
        return made

    def written(self) -> list[tuple[Key, dict[str, Any] | None, dict[str, Any] | None]]:
        """(key, initial version, final version) of every resource the trial left other than it found it, found
        once per grading."""
        return self.remember("written", lambda: [(k, old, new) for k, old, new in self.view.touched() if old != new])

    def steps_writing(self, keys: set[Key]) -> tuple[int, ...]:
        """The steps whose changes touch one of these resources, in order."""
        by_key: dict[Key, list[int]] = self.remember("steps_by_key", self._steps_by_key)
        return tuple(sorted({step for key in keys for step in by_key.get(key, ())}))

    def _steps_by_key(self) -> dict[Key, list[int]]:
        found: dict[Key, list[int]] = {}
        for event in self.events:
            for op in event.changes:
                found.setdefault(resource_key(op["path"]), []).append(event.step)
        return found
