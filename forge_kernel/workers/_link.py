"""The harness's end of one worker's socket, and each trial's conversation over it.

Frames are parsed as they arrive and a trial's tool calls are served at once, inside the protocol callback
(the tools are synchronous), so a call costs one wake-up of the harness, not a task switch per frame; the replies
to the frames of one read go back in one write. Everything the worker sends is checked: a frame that breaks the
protocol ends its trial, or every trial of the worker when the stream itself is broken, as the agent's fault.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import cast

from pydantic import ValidationError

from ..spec import RESULT, AgentResult, BudgetExceeded, compact_json
from ..tools import ToolSession
from .attempt import AGENT_ERROR, BUDGET_EXCEEDED, COMPLETED, REASON_CHARS, TIMEOUT
from .wire import FramedProtocol, Frames, WireError, encode, finite_number, frame

MAX_TOOL_NAME = 200
EXITED = "the worker process exited"
STALL_SECONDS = 0.05
"""A trial that saw its worker's event loop stuck this long, while it shared the worker, is run again alone."""
STRAY_MESSAGES = 1000
"""Messages for no running trial a worker may send before it is cut off."""


class Link(FramedProtocol):
    """One worker's socket. Messages go to their trial's ``Conversation``; ``ready`` and ``free`` are bookkeeping."""

    def __init__(self, on_free: Callable[[Link], None]):
        super().__init__()
        self.frames = Frames()
        self.on_free = on_free
        self.conversations: dict[int, Conversation] = {}
        self.freeing: dict[int, asyncio.Future] = {}
        """Trials that ended but whose leftovers the worker has not reported stopped (``free``) yet."""
        self.ready: asyncio.Future = asyncio.get_running_loop().create_future()
        self.broken: str | None = None
        self.sent_tools: set[str] = set()
        """Keys of the tool definitions this worker has been sent."""
        self.pid = 0
        """The worker's pid as the zygote reported it (in the sandbox's pid namespace)."""
        self.strays = 0
        self.outgoing: list[bytes] | None = None
        """While the frames of one read are served: the replies to them, sent together after the last."""

    @property
    def load(self) -> int:
        """Trials holding a slot of this worker: running, or ended and not yet free."""
        return len(self.conversations) + len(self.freeing)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # a socket's

    def data_received(self, data: memoryview) -> None:
        try:
            messages = self.frames.feed(data)
        except WireError as exc:
            return self.break_off(f"protocol: {exc}")
        self.outgoing = []
        try:
            for message in messages:
                if self.broken:
                    return
                self.route(message)
        finally:
            outgoing, self.outgoing = self.outgoing, None
            if outgoing:
                self.write(b"".join(outgoing))

    def route(self, message: dict) -> None:
        op, trial = message["op"], message.get("trial")
        conversation = self.conversations.get(cast(int, trial))  # any JSON value: only a trial number finds one
        if conversation is not None:
            conversation.receive(message)
        elif op == "ready" and not self.ready.done():
            self.ready.set_result(True)
        elif op == "free" and trial in self.freeing:
            self.freeing.pop(trial).set_result(True)
            self.on_free(self)
        else:  # late messages of an ended trial (its leftovers); a flood of them is a fault
            self.strays += 1
            if self.strays > STRAY_MESSAGES:
                self.break_off("protocol: too many messages outside a running trial")

    def connection_lost(self, exc) -> None:
        self.break_off(EXITED)

    def break_off(self, why: str) -> None:
        """Stop listening to a worker that broke the protocol or went away; its trials end with ``why``."""
        if self.broken is not None:
            return
        self.broken = why
        if not self.transport.is_closing():
            self.transport.pause_reading()
        for conversation in list(self.conversations.values()):
            conversation.end(AGENT_ERROR, why, lost=True)
        if not self.ready.done():
            self.ready.set_result(False)
        for freed in self.freeing.values():
            freed.set_result(False)
        self.freeing.clear()
        self.on_free(self)

    def write(self, data: bytes) -> None:
        if self.outgoing is not None:
            self.outgoing.append(data)
        elif not self.transport.is_closing():
            self.transport.write(data)


class Conversation:
    """One trial on one worker: its calls served against the harness's session until the result or a fault."""

    def __init__(self, link: Link, trial: int, session: ToolSession):
        self.link = link
        self.trial = trial
        self.session = session
        self.done: asyncio.Future = asyncio.get_running_loop().create_future()
        """(status, reason, result) once the trial has ended."""
        self.left = 4 * session.package.budget.max_calls + 64
        """Messages the worker may still send in this trial."""
        self.lost = False
        """It ended because its worker failed (or stalled) under it while it shared the worker: run it again."""
        self.overdue: str | None = None
        """Set when the trial ran out of time and was cancelled: whatever the worker answers, it is a timeout
        (unless a neighbour stalled it)."""
        self.shared = bool(link.conversations)
        """Another trial ran in the same worker at some time during this one."""
        for other in link.conversations.values():
            other.shared = True
        link.conversations[trial] = self
        if link.broken:
            self.end(AGENT_ERROR, link.broken, lost=True)

    def end(self, status: str, reason: str | None, result: AgentResult | None = None, lost: bool = False) -> None:
        """Record how the trial ended (the first ending wins); its slot is held until the worker says ``free``."""
        if self.link.conversations.pop(self.trial, None) is not None and not self.link.broken:
            self.link.freeing[self.trial] = asyncio.get_running_loop().create_future()
        if not self.done.done():
            self.lost = lost and self.shared
            self.done.set_result((status, reason, result))

    def cancel(self, overdue: str | None = None) -> None:
        """Ask the worker to stop the trial (``overdue``: the reason, when it ran out of time)."""
        self.overdue = overdue
        self.link.write(encode({"op": "cancel", "trial": self.trial}))

    def finish(self, message: dict, status: str, reason: str | None, result: AgentResult | None = None) -> None:
        """The worker's last word on the trial: a timeout when it came too late, lost when a neighbour stalled it."""
        lost = self.stalled(message)
        if self.overdue:
            status, reason, result = TIMEOUT, self.overdue, None
        self.end(status, reason, result, lost=lost)

    def receive(self, message: dict) -> None:
        self.left -= 1
        if self.left < 0:
            return self.end(AGENT_ERROR, "protocol: too many messages in one trial")
        handler = getattr(self, f"on_{message['op']}", None)
        if handler is None:
            return self.end(AGENT_ERROR, f"protocol: unexpected {message['op'][:40]!r} message")
        handler(message)

    def stalled(self, message: dict) -> bool:
        """The worker reports its loop was stuck while this trial shared it: the result is not this trial's own."""
        stall = message.get("stalled")
        return self.shared and finite_number(stall) and stall > STALL_SECONDS

    def on_call(self, message: dict) -> None:
        """A tool call; one the worker says it ``refused`` (its arguments held what JSON cannot carry) is recorded
        as refused, with the worker's reason (a flag that can only spoil the worker's own trial)."""
        call_id, tool, args = message.get("id"), message.get("tool"), message.get("args")
        refused = message.get("refused")
        if not (
            type(call_id) is int
            and isinstance(tool, str)
            and len(tool) <= MAX_TOOL_NAME
            and isinstance(args, dict)
            and (refused is None or isinstance(refused, str))
        ):
            return self.end(
                AGENT_ERROR,
                "protocol: a call needs an integer id, a tool name, an args object and a refusal, if any, as text",
            )
        try:
            reply = self.session.reply(tool, args, refused and refused[:REASON_CHARS])
        except BudgetExceeded as exc:
            self.send_reply(
                call_id, compact_json({"ok": False, "error": {"code": "budget_exceeded", "message": str(exc)}})
            )
            return self.end(BUDGET_EXCEEDED, str(exc))
        self.send_reply(call_id, reply)

    def send_reply(self, call_id: int, reply: str) -> None:
        body = f'{{"op":"reply","trial":{self.trial},"id":{call_id},"reply":{reply}}}'.encode()
        self.link.write(frame(body))

    def on_charge(self, message: dict) -> None:
        usd = message.get("usd")
        if not finite_number(usd) or usd < 0:
            return self.end(AGENT_ERROR, "protocol: a charge must be a finite number of dollars, not negative")
        try:
            self.session.charge(float(usd))
        except BudgetExceeded as exc:
            self.end(BUDGET_EXCEEDED, str(exc))

    def on_turn(self, message: dict) -> None:
        turn = message.get("turn")
        try:
            self.session.model_turn(turn if isinstance(turn, dict) else {"turn": turn})
        except ValueError as exc:
            return self.end(AGENT_ERROR, f"protocol: {exc}"[:REASON_CHARS])
        except BudgetExceeded as exc:
            self.end(BUDGET_EXCEEDED, str(exc))

    def on_result(self, message: dict) -> None:
        try:
            result = RESULT.validate_python(message.get("result"))
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(map(str, err["loc"])) or "result"
            return self.finish(message, AGENT_ERROR, f"unparseable result: {where}: {err['msg']}"[:REASON_CHARS])
        self.finish(message, COMPLETED, None, result)

    def on_error(self, message: dict) -> None:
        self.finish(message, AGENT_ERROR, str(message.get("error"))[:REASON_CHARS])

    def on_cancelled(self, message: dict) -> None:
        if self.overdue is None:
            return self.end(AGENT_ERROR, "protocol: cancelled without being asked")
        self.finish(message, TIMEOUT, self.overdue)
