"""A worker process: runs trials of one agent, a few at a time, talking to the harness over one socket.

Messages from the harness: ``run`` (a trial's task), ``reply`` (a tool call's result), ``cancel``.
Messages to it: ``call``, ``charge``, then ``result``, ``error`` (the agent raised) or ``cancelled``, each with
how long the worker's event loop was ever stuck while that trial ran or its ``run`` waited to be read
(``stalled``), then ``free`` once whatever the trial left running is stopped. A synchronous call inside an agent
stalls every trial of its worker; the harness reads ``stalled``, runs those trials again one per worker, and
keeps the agent one trial per worker from then on.

Nothing here is trusted by the harness: the agent shares this process and may rewrite any of it, which can only
spoil its own trials.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import selectors
import socket
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from time import monotonic
from typing import cast

from ..agents import Agent, AgentTask
from ..spec import RESULT, AgentResult
from .attempt import describe
from .client import RemoteToolClient
from .wire import FramedProtocol, Frames, encode

HARNESS_FRAME_BYTES = 256 * 1024 * 1024
"""Frames from the harness are trusted; the cap only guards against a broken stream."""
TRIAL: contextvars.ContextVar[int | None] = contextvars.ContextVar("forge_trial", default=None)
"""The trial a piece of agent code runs for (tasks inherit it from the task that made them)."""
LONG_PASS_SECONDS = 0.005
"""A pass of the event loop longer than this has the process's wait for a CPU taken out of it."""


@dataclass
class Running:
    """One trial in this worker."""

    task: asyncio.Task
    client: RemoteToolClient
    cancelled: bool = False
    """The harness asked to stop it."""
    stalled: float = 0.0
    """The longest the event loop was stuck (running code without returning to select) while it ran, or at most
    while its task waited to be read."""


def cpu_wait_clock() -> Callable[[], float]:
    """Seconds this thread has spent waiting for a CPU so far (Linux's schedstat), or always 0 where the kernel
    does not say."""
    try:
        fd = os.open("/proc/thread-self/schedstat", os.O_RDONLY)
        int(os.pread(fd, 64, 0).split()[1])
    except (OSError, ValueError, IndexError):
        return lambda: 0.0
    return lambda: int(os.pread(fd, 64, 0).split()[1]) / 1e9


@dataclass
class StallClock:
    """Measures how long each pass of the event loop runs code between two waits on its selector: its wall time
    less the time the process waited for a CPU meanwhile (on a busy machine the workers, below the harness, wait
    often; that is no stall of the agent's)."""

    trials: dict = field(default_factory=dict)
    last: float = field(default_factory=monotonic)
    cpu_wait: Callable[[], float] = field(default_factory=cpu_wait_clock)
    waited: float = 0.0
    """The CPU wait when the pass began."""
    previous: float = 0.0
    """How long the last whole pass ran."""

    def busy(self) -> float:
        """How long this pass has run so far, its CPU waits taken out."""
        busy = monotonic() - self.last
        if busy > LONG_PASS_SECONDS:  # a short pass is no stall, waited or not: it is spared the read
            busy -= self.cpu_wait() - self.waited
        return busy

    def leave(self) -> float:
        busy = self.busy()
        for running in self.trials.values():
            running.stalled = max(running.stalled, busy)
        return busy

    def unread(self) -> float:
        """The longest a frame read now may have waited in the socket for the loop: the last pass and this one so
        far (a trial whose task waited through a neighbour's stall saw that stall)."""
        return self.previous + self.busy()

    def enter(self) -> None:
        self.last = monotonic()
        self.waited = self.cpu_wait()


class TimedSelector(selectors.DefaultSelector):
    """The default selector, telling a StallClock when the loop goes to wait and when it comes back."""

    def __init__(self, clock: StallClock):
        super().__init__()
        self.clock = clock

    def select(self, timeout=None):
        self.clock.previous = self.clock.leave()
        try:
            return super().select(timeout)
        finally:
            self.clock.enter()


class WorkerEnd(FramedProtocol):
    """The worker's end of the socket: its running trials, their clients, and the frames to and from them."""

    def __init__(self, make: Callable[[], Agent], clock: StallClock, closed: asyncio.Future):
        super().__init__()
        self.make = make
        self.clock = clock
        self.closed = closed
        self.frames = Frames(HARNESS_FRAME_BYTES)
        self.tools: dict[str, str] = {}
        """Tool definitions by key: the harness sends a package's once per worker."""
        self.owners: weakref.WeakKeyDictionary[asyncio.Task, int | None] = weakref.WeakKeyDictionary()
        """The trial each task was made for."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # a socket's
        self.send({"op": "ready"})

    def connection_lost(self, exc) -> None:
        if not self.closed.done():
            self.closed.set_result(None)

    def send(self, message: dict) -> None:
        self.transport.write(encode(message))

    def make_task(self, loop, coro, context=None) -> asyncio.Task:
        """The loop's task factory: remembers which trial made each task."""
        task = asyncio.Task(coro, loop=loop, context=context)
        self.owners[task] = context.get(TRIAL) if context is not None else TRIAL.get()
        return task

    def data_received(self, data: memoryview) -> None:
        for message in self.frames.feed(data):
            running = self.clock.trials.get(message.get("trial"))
            op = message["op"]
            if op == "run":
                self.start(message)
            elif op == "reply" and running is not None:
                running.client.resolve(message)
            elif op == "cancel" and running is not None:
                running.cancelled = True
                running.task.cancel()

    def start(self, message: dict) -> None:
        trial = message["trial"]
        definitions = self.tools.setdefault(message["tools_key"], message.get("tool_definitions", ""))
        task = AgentTask.model_validate({**message["task"], "seed": message["seed"], "tool_definitions": definitions})
        client = RemoteToolClient(self.transport, trial)
        context = contextvars.copy_context()
        context.run(TRIAL.set, trial)
        running = asyncio.get_running_loop().create_task(self.run(trial, task, client), context=context)
        self.clock.trials[trial] = Running(running, client, stalled=self.clock.unread())

    async def run(self, trial: int, task: AgentTask, client: RemoteToolClient) -> None:
        try:
            returned = await self.make().run(task, client)
        except asyncio.CancelledError:
            reply = (
                {"op": "cancelled"}
                if self.clock.trials[trial].cancelled
                else {"op": "error", "error": "CancelledError raised by the agent"}
            )
        except BaseException as exc:  # SystemExit, KeyboardInterrupt, ...: this trial's failure, reported
            reply = {"op": "error", "error": describe(exc)}
        else:
            reply = result_message(returned)
        self.clock.leave()
        running = self.clock.trials.pop(trial)
        self.send({**reply, "trial": trial, "stalled": round(running.stalled, 4)})
        for leftover in [t for t, owner in self.owners.items() if owner == trial and t is not asyncio.current_task()]:
            leftover.cancel()  # what the agent left running does not outlive its trial
        self.send({"op": "free", "trial": trial})


def result_message(returned: object) -> dict:
    """What the agent returned, as it crosses to the harness (which validates it again), or why it cannot."""
    if not isinstance(returned, AgentResult):
        return {"op": "error", "error": f"returned {type(returned).__name__}, not AgentResult"}
    try:
        result = RESULT.dump_python(returned, mode="json")
        encode(result)
    except (ValueError, TypeError, RecursionError) as exc:
        return {"op": "error", "error": f"result cannot be stored: {str(exc)[:200]}"}
    return {"op": "result", "result": result}


async def serve(sock: socket.socket, make: Callable[[], Agent], clock: StallClock) -> None:
    """Serve trials on ``sock`` until the harness closes it."""
    loop = asyncio.get_running_loop()
    closed = loop.create_future()
    end = WorkerEnd(make, clock, closed)
    loop.set_task_factory(end.make_task)
    await loop.create_unix_connection(lambda: end, sock=sock)
    await closed


def run_worker(sock: socket.socket, make: Callable[[], Agent]) -> None:
    """A worker's whole life: an event loop whose stalls are measured, serving until the harness hangs up."""
    clock = StallClock()
    loop = asyncio.SelectorEventLoop(TimedSelector(clock))
    try:
        loop.run_until_complete(serve(sock, make, clock))
    finally:
        loop.close()
