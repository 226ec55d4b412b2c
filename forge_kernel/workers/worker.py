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
from .wire import encode, read_frame

HARNESS_FRAME_BYTES = 256 * 1024 * 1024
"""Frames from the harness are trusted; the cap only guards against a broken stream."""


class Worker:
    """The worker's side of the socket: the current trial, its tool client, and the frames to and from it."""

    def __init__(self, make: Callable[[], Agent], writer: asyncio.StreamWriter):
        self.make = make
        self.writer = writer
        self.trial: asyncio.Task | None = None
        self.client: RemoteToolClient | None = None
        self.cancelled = False
        """The harness asked to stop the current trial."""

    def send(self, message: dict) -> None:
        self.writer.write(encode(message))

    def start(self, message: dict) -> None:
        trial = message["trial"]
        self.client = RemoteToolClient(self.writer, trial)
        self.trial = asyncio.create_task(self.run(trial, message["task"], self.client))

    async def run(self, trial: int, task: dict, client: RemoteToolClient) -> None:
        try:
            returned = await self.make().run(AgentTask.model_validate(task), client)
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
            if task_ is not asyncio.current_task() and task_ is not self.reader:
                task_.cancel()
        await self.writer.drain()
        self.send({"op": "ready"})

    async def serve(self, reader: asyncio.StreamReader) -> None:
        self.reader = asyncio.current_task()
        self.send({"op": "ready"})
        while (message := await read_frame(reader, HARNESS_FRAME_BYTES)) is not None:
            op = message["op"]
            if op == "run":
                self.start(message)
            elif op == "reply" and self.client is not None:
                self.client.resolve(message)
            elif op == "cancel" and self.trial is not None:
                self.cancelled = True
                self.trial.cancel()


async def serve(sock: socket.socket, make: Callable[[], Agent]) -> None:
    """Serve trials on ``sock`` until the harness closes it."""
    reader, writer = await asyncio.open_unix_connection(sock=sock)
    await Worker(make, writer).serve(reader)
