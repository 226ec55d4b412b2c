"""One agent's attempt at one task, as the harness sees it, and the in-process way to make it.

Trusted agents (the bundled reference agents, replays, and agents named with ``--trust``) run in the harness
process for speed. Every other agent runs in a worker process (``pool.IsolatedAgent``); both give an
``AgentOutcome`` and an agent cannot tell them apart: it gets a fresh ``AgentTask`` and a client whose replies
are copies.
"""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from time import perf_counter
from typing import Any, Protocol, cast, runtime_checkable

from pydantic import ValidationError

from ..agents import Agent, AgentTask
from ..spec import RESULT, AgentResult, printable
from ..tools import ToolSession
from .client import LocalToolClient, json_copy

COMPLETED, AGENT_ERROR, TIMEOUT, BUDGET_EXCEEDED = "completed", "agent_error", "timeout", "budget_exceeded"
REASON_CHARS = 500
"""The longest reason kept from what an agent raised or sent."""


@dataclass
class AgentOutcome:
    """How an attempt ended: status, reason, the result (an empty error result when there is none), timings."""

    status: str
    """completed, agent_error, timeout or budget_exceeded."""
    reason: str | None
    result: AgentResult = field(default_factory=lambda: AgentResult(status="error"))
    duration_s: float = 0.0
    """Wall time from the task handed over to the attempt's end, measured by the harness."""
    queued_s: float = 0.0
    """Time spent waiting for a free worker (not charged to the agent)."""
    redo: bool = False
    """Another trial spoiled this one (it stalled or lost their shared worker): the trial is run again, unless it
    has acted already (a write made, a call denied: that stays on its record)."""


@runtime_checkable
class Runner(Protocol):
    """Something the engine can hand a task to: an in-process agent or an isolated one."""

    name: str
    version: str
    config: dict[str, Any] | None
    isolation: str
    """``in-process`` (trusted), or the sandbox mode of the worker: ``namespace``, ``strict`` or ``process``."""

    async def attempt(self, task: AgentTask, seed: int, session: ToolSession, max_seconds: float) -> AgentOutcome:
        """One trial of ``task`` (the package's template; the agent gets a copy with ``seed``)."""


def describe(exc: BaseException) -> str:
    """``Type: message (at file:line)`` for what an agent raised, cut to a readable length."""
    try:
        message = str(exc)
    except Exception:  # a hostile __str__
        message = ""
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" (at {frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno})" if frames else ""
    return text[:REASON_CHARS] + where


def checked_result(result: object) -> AgentResult:
    """A copy of what an agent returned, or ValueError saying why it cannot be stored."""
    if not isinstance(result, AgentResult):
        raise ValueError(f"returned {type(result).__name__}, not AgentResult")
    try:
        return RESULT.validate_python(json_copy(RESULT.dump_python(result, mode="json")))
    except (ValueError, TypeError, RecursionError, ValidationError) as exc:
        raise ValueError(f"result cannot be stored: {str(exc)[:200]}") from None


class InProcess:
    """A trusted agent in the harness process: a fresh instance per attempt, its time bounded by ``wait_for``."""

    isolation = "in-process"

    def __init__(self, make: Callable[[], Agent] | Agent):
        is_factory = isinstance(make, type) or not hasattr(make, "run")  # a class or a factory, not an instance
        instance = cast(Agent, make)
        self._make: Callable[[], Agent] = cast("Callable[[], Agent]", make) if is_factory else (lambda: instance)
        probe = self._make()
        self.name, self.version = printable(probe.name), printable(probe.version)  # data: shown as text anywhere
        self.config = getattr(probe, "config", None)

    async def attempt(self, task: AgentTask, seed: int, session: ToolSession, max_seconds: float) -> AgentOutcome:
        started = perf_counter()
        status, reason, result = COMPLETED, None, AgentResult(status="error")
        try:
            returned = await asyncio.wait_for(
                self._make().run(task.for_trial(seed), LocalToolClient(session)), max_seconds
            )
        except TimeoutError:
            status, reason = TIMEOUT, f"no result within {max_seconds} s"
        except asyncio.CancelledError:
            if (current := asyncio.current_task()) is not None and current.cancelling():
                raise  # the run itself is being cancelled
            status, reason = AGENT_ERROR, "CancelledError raised by the agent"
        except (Exception, SystemExit, GeneratorExit) as exc:  # a trusted agent's bug ends only its own trial
            status, reason = AGENT_ERROR, describe(exc)
        else:
            try:
                result = checked_result(returned)
            except ValueError as exc:
                status, reason = AGENT_ERROR, str(exc)
        return AgentOutcome(status, reason, result, perf_counter() - started)
