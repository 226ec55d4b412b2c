"""The harness's end of one worker's socket, and one trial's conversation over it.

Frames are parsed as they arrive and a trial's tool calls are served at once, inside the protocol callback
(the tools are synchronous), so a call costs one wake-up of the harness, not a task switch per frame. Everything
the worker sends is checked: a frame that breaks the protocol ends the trial as the agent's fault.
"""
from __future__ import annotations

import asyncio

from pydantic import ValidationError

from ..spec import AgentResult, BudgetExceeded
from ..spec.trajectory import compact_json
from ..tools import ToolSession
from .attempt import AGENT_ERROR, BUDGET_EXCEEDED, COMPLETED, REASON_CHARS
from .wire import HEADER, Frames, WireError, finite_number

MAX_TOOL_NAME = 200
EXITED = "the worker process exited"


class Link(asyncio.Protocol):
    """One worker's socket. Messages go to the current trial's ``Conversation``, or to ``inbox`` between trials."""

    def __init__(self):
        self.frames = Frames()
        self.inbox: asyncio.Queue = asyncio.Queue()
        """Messages outside a trial (``ready``, ``cancelled``); None once the link is broken or closed."""
        self.conversation: Conversation | None = None
        self.broken: str | None = None
        self.sent_tools: set[str] = set()
        """Keys of the tool definitions this worker has been sent."""
        self.pid = 0
        """The worker's pid as the zygote reported it (in the sandbox's pid namespace)."""

    def connection_made(self, transport: asyncio.Transport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        try:
            messages = self.frames.feed(data)
        except WireError as exc:
            return self.break_off(f"protocol: {exc}")
        for message in messages:
            if self.broken:
                return
            if self.conversation is not None:
                self.conversation.receive(message)
            else:
                self.inbox.put_nowait(message)

    def connection_lost(self, exc) -> None:
        self.break_off(EXITED)

    def break_off(self, why: str) -> None:
        """Stop listening to a worker that broke the protocol or went away."""
        if self.broken is None:
            self.broken = why
            if not self.transport.is_closing():
                self.transport.pause_reading()
            if self.conversation is not None:
                self.conversation.end(AGENT_ERROR, why)
            self.inbox.put_nowait(None)

    def write(self, data: bytes) -> None:
        if not self.transport.is_closing():
            self.transport.write(data)

    async def next(self, seconds: float) -> dict | None:
        """The next message outside a trial, or None (broken, closed or silent for ``seconds``)."""
        try:
            return await asyncio.wait_for(self.inbox.get(), seconds)
        except TimeoutError:
            return None


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
        link.conversation = self
        if link.broken:
            self.end(AGENT_ERROR, link.broken)

    def end(self, status: str, reason: str | None, result: AgentResult | None = None) -> None:
        if not self.done.done():
            self.done.set_result((status, reason, result))
        self.link.conversation = None

    def receive(self, message: dict) -> None:
        self.left -= 1
        if self.left < 0:
            return self.end(AGENT_ERROR, "protocol: too many messages in one trial")
        if message.get("trial") != self.trial:
            return self.end(AGENT_ERROR, f"protocol: a {message['op'][:40]!r} message outside its trial")
        handler = getattr(self, f"on_{message['op']}", None)
        if handler is None:
            return self.end(AGENT_ERROR, f"protocol: unexpected {message['op'][:40]!r} message")
        handler(message)

    def on_call(self, message: dict) -> None:
        call_id, tool, args = message.get("id"), message.get("tool"), message.get("args")
        if not (type(call_id) is int and isinstance(tool, str) and len(tool) <= MAX_TOOL_NAME and isinstance(args, dict)):
            return self.end(AGENT_ERROR, "protocol: a call needs an integer id, a tool name and an args object")
        try:
            reply = self.session.reply(tool, args)
        except BudgetExceeded as exc:
            self.send_reply(call_id, compact_json({"ok": False, "error": {"code": "budget_exceeded", "message": str(exc)}}))
            return self.end(BUDGET_EXCEEDED, str(exc))
        self.send_reply(call_id, reply)

    def send_reply(self, call_id: int, reply: str) -> None:
        body = f'{{"op":"reply","id":{call_id},"reply":{reply}}}'.encode()
        self.link.write(HEADER.pack(len(body)) + body)

    def on_charge(self, message: dict) -> None:
        usd = message.get("usd")
        if not finite_number(usd) or usd < 0:
            return self.end(AGENT_ERROR, "protocol: a charge must be a finite number of dollars, not negative")
        try:
            self.session.charge(float(usd))
        except BudgetExceeded as exc:
            self.end(BUDGET_EXCEEDED, str(exc))

    def on_result(self, message: dict) -> None:
        try:
            self.end(COMPLETED, None, AgentResult.model_validate(message.get("result")))
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(map(str, err["loc"])) or "result"
            self.end(AGENT_ERROR, f"unparseable result: {where}: {err['msg']}"[:REASON_CHARS])

    def on_error(self, message: dict) -> None:
        self.end(AGENT_ERROR, str(message.get("error"))[:REASON_CHARS])
