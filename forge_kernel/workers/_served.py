"""One trial served to a client that speaks a protocol (MCP, FHIR REST): what it handed in, and when it ended."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from time import perf_counter

from pydantic import ValidationError

from ..agents import AgentTask
from ..spec import RESULT, AgentResult
from ..tools import ToolSession
from .attempt import AGENT_ERROR, BUDGET_EXCEEDED, COMPLETED, REASON_CHARS, TIMEOUT, AgentOutcome

GRACE_SECONDS = 1.0
"""How long a client has, once its trial has ended, to read the last reply and leave before it is cut off."""


class ServedTrial:
    """The state of one served trial: its task, its tool session, the result handed in and whether it has ended.
    ``HAND_IN`` names how a client hands in its result (said when it leaves without)."""

    HAND_IN = "a result"

    def __init__(self, task: AgentTask, session: ToolSession):
        self.task = task
        self.session = session
        self.result: AgentResult | None = None
        self.failure: str | None = None
        """Why what the client handed in could not be taken (the trial then ends as agent_error)."""
        self.ended = asyncio.Event()
        """Set once the trial has ended: a result handed in, or a budget used up."""
        self.client: tuple[str, str] | None = None
        """The client's name and version, once a request has carried them."""

    def hand_in(self, arguments: object) -> str | None:
        """Take the client's result (answer, output, confidence, status) and end the trial; why it cannot be taken
        (then the trial ends as agent_error), or None."""
        self.end(result_of(arguments))
        return self.failure

    def end(self, result: AgentResult | str) -> None:
        """End the trial with the client's result, or with why what it handed in could not be taken."""
        if isinstance(result, str):
            self.failure = result
        else:
            self.result = result
        self.ended.set()

    async def run(
        self, client: Awaitable[str | None], max_seconds: float, started: float | None = None
    ) -> AgentOutcome:
        """Serve the trial until it ends, the ``client`` leaves (it gives why, if it broke the protocol) or
        ``max_seconds`` pass since ``started`` (``perf_counter``; by default now); its outcome. A client whose trial
        has ended has ``GRACE_SECONDS`` to read the last reply and leave."""
        started = perf_counter() if started is None else started
        leaving, ending = asyncio.ensure_future(client), asyncio.ensure_future(self.ended.wait())
        try:
            await asyncio.wait(
                [leaving, ending], timeout=max_seconds - (perf_counter() - started), return_when=asyncio.FIRST_COMPLETED
            )
            duration = perf_counter() - started
            if self.ended.is_set():
                await asyncio.wait([leaving], timeout=GRACE_SECONDS)
            left = leaving.done()
            fault = leaving.result() if left else None
        finally:
            await stop(leaving, ending)
        if self.result is not None:
            return AgentOutcome(COMPLETED, None, self.result, duration)
        if self.session.exceeded:
            return AgentOutcome(BUDGET_EXCEEDED, self.session.exceeded, duration_s=duration)
        if self.failure or left:
            reason = self.failure or fault or f"the client left without {self.HAND_IN}"
            return AgentOutcome(AGENT_ERROR, reason[:REASON_CHARS], duration_s=duration)
        return AgentOutcome(TIMEOUT, f"no result within {max_seconds} s", duration_s=max_seconds)


def result_of(arguments: object) -> AgentResult | str:
    """The result a client hands in, or why it is none."""
    try:
        result: AgentResult = RESULT.validate_python(arguments)
    except (ValidationError, ValueError) as exc:
        err = exc.errors()[0] if isinstance(exc, ValidationError) else {"loc": (), "msg": str(exc)}
        return f"unparseable result: {'.'.join(map(str, err['loc'])) or 'result'}: {err['msg']}"
    return result


async def stop(*tasks: asyncio.Future) -> None:
    """Cancel tasks and wait until they have ended."""
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
