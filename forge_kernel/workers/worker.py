"""A worker process: runs one trial at a time for one agent, talking to the harness over one socket.

Messages from the harness: ``run`` (a trial's task), ``reply`` (a tool call's result), ``cancel``.
Messages to it: ``ready`` (free for a trial), ``call``, ``charge``, ``result``, ``error`` (the agent raised),
``cancelled``. Nothing here is trusted by the harness: the agent shares this process and may rewrite any of it.
"""
from __future__ import annotations

import asyncio
import socket
from typing import Callable

from ..agents import Agent, AgentTask
from .attempt import checked_result, describe
from .client import RemoteToolClient
from .wire import Frames, encode

HARNESS_FRAME_BYTES = 256 * 1024 * 1024
"""Frames from the harness are trusted; the cap only guards against a broken stream."""


class WorkerEnd(asyncio.Protocol):
    """The worker's end of the socket: the current trial, its tool client, and the frames to and from it."""

    def __init__(self, make: Callable[[], Agent], closed: asyncio.Future):
        self.make = make
        self.closed = closed
        self.frames = Frames(HARNESS_FRAME_BYTES)
        self.tools: dict[str, str] = {}
        """Tool definitions by key: the harness sends a package's once per worker."""
        self.trial: asyncio.Task | None = None
        self.client: RemoteToolClient | None = None
        self.cancelled = False
        """The harness asked to stop the current trial."""

    def connection_made(self, transport: asyncio.Transport) -> None:
        self.transport = transport
        self.send({"op": "ready"})

    def connection_lost(self, exc) -> None:
        if not self.closed.done():
            self.closed.set_result(None)

    def send(self, message: dict) -> None:
        self.transport.write(encode(message))

    def data_received(self, data: bytes) -> None:
        for message in self.frames.feed(data):
            op = message["op"]
            if op == "run":
                self.start(message)
            elif op == "reply" and self.client is not None:
                self.client.resolve(message)
            elif op == "cancel" and self.trial is not None:
                self.cancelled = True
                self.trial.cancel()

    def start(self, message: dict) -> None:
        definitions = self.tools.setdefault(message["tools_key"], message.get("tool_definitions", ""))
        task = AgentTask.model_validate({**message["task"], "seed": message["seed"], "tool_definitions": definitions})
        self.client, self.cancelled = RemoteToolClient(self.transport, message["trial"]), False
        self.trial = asyncio.ensure_future(self.run(message["trial"], task, self.client))

    async def run(self, trial: int, task: AgentTask, client: RemoteToolClient) -> None:
        try:
            returned = await self.make().run(task, client)
        except asyncio.CancelledError:
            reply = {"op": "cancelled", "trial": trial} if self.cancelled else \
                {"op": "error", "trial": trial, "error": "CancelledError raised by the agent"}
        except BaseException as exc:  # SystemExit, KeyboardInterrupt, ...: this trial's failure, reported
            reply = {"op": "error", "trial": trial, "error": describe(exc)}
        else:
            try:
                reply = {"op": "result", "trial": trial, "result": checked_result(returned).model_dump(mode="json")}
            except ValueError as exc:
                reply = {"op": "error", "trial": trial, "error": str(exc)}
        self.send(reply)
        for task_ in asyncio.all_tasks():  # whatever the agent left running does not outlive its trial
            if task_ is not asyncio.current_task() and task_ is not self.serving:
                task_.cancel()
        self.send({"op": "ready"})


async def serve(sock: socket.socket, make: Callable[[], Agent]) -> None:
    """Serve trials on ``sock`` until the harness closes it."""
    loop = asyncio.get_running_loop()
    closed = loop.create_future()
    _, end = await loop.create_unix_connection(lambda: WorkerEnd(make, closed), sock=sock)
    end.serving = asyncio.current_task()
    await closed
