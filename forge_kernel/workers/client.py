"""The narrow tool client an agent is given: ``call`` a tool, ``charge`` what it spent. Nothing else.

``RemoteToolClient`` lives in a worker process and sends every call across the wire to the harness.
``LocalToolClient`` serves trusted in-process agents. Both hand over copies (the reply is JSON text made by the
harness), so an agent never holds a reference to the record, the EHR image or anything else the harness owns.
Arguments JSON cannot carry as they are (bytes, an object, NaN, ...) make a refused call on the record
(``invalid_args``); the tool is not run.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from ..spec import BudgetExceeded, compact_json
from ..tools import ToolSession
from .wire import encode, frame, json_args


def json_copy(value: Any) -> Any:
    """A deep copy through JSON: what crosses to or from an agent, in process or not."""
    return json.loads(compact_json(value))


def raise_for_budget(reply: dict) -> dict:
    """A reply as is, or BudgetExceeded when the harness ended the trial's budget."""
    if not reply.get("ok") and (reply.get("error") or {}).get("code") == "budget_exceeded":
        raise BudgetExceeded(reply["error"].get("message", "budget exceeded"))
    return reply


class LocalToolClient:
    """A trusted agent's client in the harness process: the same replies as over the wire, as copies."""

    __slots__ = ("_session",)

    def __init__(self, session: ToolSession):
        self._session = session

    async def call(self, tool: str, /, **args: Any) -> dict:
        """Run one tool call; ``{"ok": True, "result": ...}`` or ``{"ok": False, "error": {code, message}}``."""
        text, refused = json_args(args)
        return json.loads(self._session.reply(tool, json.loads(text), refused))

    def charge(self, usd: float) -> None:
        """Report money spent (e.g. on model tokens); past the budget the trial ends."""
        self._session.charge(float(usd))

    def model_turn(self, **turn: Any) -> None:
        """Report a model turn (``ToolSession.model_turn``); its cost is charged."""
        self._session.model_turn(json_copy(turn))


class RemoteToolClient:
    """An agent's client inside a worker process; every call is a frame to the harness and back."""

    def __init__(self, transport: asyncio.Transport, trial: int):
        self._writer = transport
        self._trial = trial
        self._pending: dict[int, asyncio.Future] = {}
        self._next_id = 0

    async def call(self, tool: str, /, **args: Any) -> dict:
        """Run one tool call in the harness; the reply as ``LocalToolClient.call`` gives it."""
        self._next_id += 1
        call_id = self._next_id
        text, refused = json_args(args)
        flag = "" if refused is None else f',"refused":{json.dumps(refused)}'
        body = f'{{"op":"call","trial":{self._trial},"id":{call_id},"tool":{json.dumps(tool)},"args":{text}{flag}}}'
        future = self._pending[call_id] = asyncio.get_running_loop().create_future()
        self._writer.write(frame(body.encode()))
        try:
            return raise_for_budget(await future)
        finally:
            self._pending.pop(call_id, None)

    def charge(self, usd: float) -> None:
        """Report money spent; the harness counts it and ends the trial past the budget."""
        self._writer.write(encode({"op": "charge", "trial": self._trial, "usd": float(usd)}))

    def model_turn(self, **turn: Any) -> None:
        """Report a model turn; the harness keeps it and charges its cost (a turn it cannot take ends the trial)."""
        self._writer.write(encode({"op": "turn", "trial": self._trial, "turn": json_copy(turn)}))

    def resolve(self, message: dict) -> None:
        """Deliver the harness's reply to the call waiting for it."""
        call_id: Any = message.get("id")
        future = self._pending.get(call_id)
        if future is not None and not future.done():
            future.set_result(message["reply"])
