"""An untrusted agent behind a pool of worker processes, forked from one sandboxed zygote per agent.

The harness keeps everything that matters (EHR, policy, faults, clock, budgets, the record); a worker only ever
receives its ``AgentTask`` and replies to its calls. A worker hosts up to ``PER_WORKER`` trials of its agent at
once (hundreds of processes would cost more than the trials themselves); a trial that saw its worker's event loop
stuck by a neighbour (a synchronous call inside ``async def``) is run again, and from then on the agent gets one
worker per trial. A trial over its time or call budget is cancelled, then, if its worker does not stop it, the
worker is killed and its trials are run again (that one too, unless it had the worker to itself: its neighbour
may be what kept the worker from answering). Workers are reused across trials.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Coroutine
from time import perf_counter
from typing import Any

from ..agents import AgentTask
from ..spec import AgentError, AgentResult, printable
from ..tools import ToolSession
from ._link import Conversation, Link
from ._zygote_process import SPAWN_SECONDS, WorkerError, ZygoteProcess
from .attempt import AGENT_ERROR, BUDGET_EXCEEDED, REASON_CHARS, TIMEOUT, AgentOutcome
from .sandbox import Sandbox
from .wire import frame

PER_WORKER = 16
"""Trials one worker process hosts at once (1 once the agent is seen to block its event loop)."""
GRACE_SECONDS = 1.0
"""How long a worker has to stop a cancelled trial before it is killed."""
FREE_SECONDS = 5.0
"""How long a worker may take to report a finished trial's leftovers stopped."""


class IsolatedAgent:
    """An untrusted agent: started with ``await IsolatedAgent.start(spec, sandbox)``, then ``attempt`` per trial."""

    def __init__(self, spec: str, sandbox: Sandbox):
        self.spec = spec
        self.sandbox = sandbox
        self.isolation = sandbox.mode
        self.name = self.version = ""
        self.config: dict[str, Any] | None = None
        self.per_worker = PER_WORKER
        self._zygote = ZygoteProcess(spec, sandbox)
        self._spawning = asyncio.Lock()
        self._links: list[Link] = []
        self._slot_freed = asyncio.Event()
        self._chores: set[asyncio.Task[Any]] = set()
        self._tool_keys: dict[str, str] = {}
        """Tool definitions (the same string object for every trial of a package) -> a short key."""
        self._trials = 0

    @classmethod
    async def start(cls, spec: str, sandbox: Sandbox) -> IsolatedAgent:
        """Start the agent's sandbox; an agent that cannot be imported or built is an AgentError."""
        agent = cls(spec, sandbox)
        try:
            hello = await agent._zygote.start()
        except WorkerError as exc:
            raise AgentError("--agent", spec, f"cannot start: {exc}") from None
        name, version, config = hello.get("name"), hello.get("version"), hello.get("config")
        if hello.get("op") == "fatal":
            agent.close()
            raise AgentError("--agent", spec, str(hello.get("error"))[:REASON_CHARS])
        if not (isinstance(name, str) and 0 < len(name) <= 100 and isinstance(version, str) and len(version) <= 100):
            agent.close()
            raise AgentError("--agent", spec, "the agent must have a name and a version (strings of up to 100 chars)")
        agent.name, agent.version = printable(name), printable(version)  # data: shown as text wherever it goes
        agent.config = config if isinstance(config, dict) else None
        return agent

    # --- workers -----------------------------------------------------------------------------------------------

    async def _acquire(self) -> Link:
        """A worker with a free slot: the fullest one that has room, else (after a moment, if a slot is about to
        be freed) a new one."""
        while True:
            if link := self._open_link():
                return link
            if any(link.freeing for link in self._links if not link.broken):
                self._slot_freed.clear()
                try:
                    await asyncio.wait_for(self._slot_freed.wait(), FREE_SECONDS)
                    continue
                except TimeoutError:
                    pass
            async with self._spawning:  # one spawn at a time; another may have made room meanwhile
                return self._open_link() or await self._new_worker()

    def _open_link(self) -> Link | None:
        """The fullest worker that still has a free slot (few processes, each kept busy)."""
        best = None
        for link in self._links:
            load = link.load
            if load < self.per_worker and not link.broken and (best is None or load > best[0]):
                best = (load, link)
        return best and best[1]

    def _freed(self, link: Link) -> None:
        if link.broken and link in self._links:
            self._links.remove(link)
        self._slot_freed.set()

    async def _new_worker(self) -> Link:
        """Fork a worker (under the spawning lock); the zygote is started again first if it died (or the agent
        killed it)."""
        if self._zygote.dead():
            self._zygote.close()
            if (await self._zygote.start()).get("op") != "hello":
                raise WorkerError("the agent's process could not be restarted")
        sock, pid = await self._zygote.fork()
        _, link = await asyncio.get_running_loop().create_unix_connection(lambda: Link(self._freed), sock=sock)
        link.pid = pid
        try:
            ready = await asyncio.wait_for(asyncio.shield(link.ready), SPAWN_SECONDS)
        except TimeoutError:
            ready = False
        if not ready:
            self._kill(link)
            raise WorkerError("a new worker did not get ready")
        self._links.append(link)
        return link

    def _kill(self, link: Link) -> None:
        """End a worker; trials it still hosts end as lost (they are run again)."""
        self._zygote.kill(link.pid)
        link.transport.close()
        link.break_off("the worker process was stopped")

    # --- trials ------------------------------------------------------------------------------------------------

    async def attempt(self, task: AgentTask, seed: int, session: ToolSession, max_seconds: float) -> AgentOutcome:
        """Run one trial in a worker; every way it can go wrong ends as this trial's outcome (``redo`` when a
        neighbour spoiled it)."""
        waited = perf_counter()
        try:
            link = await self._acquire()
        except (WorkerError, AgentError) as exc:
            return AgentOutcome(AGENT_ERROR, f"worker could not start: {exc}", queued_s=perf_counter() - waited)
        queued = perf_counter() - waited
        self._trials += 1
        conversation = Conversation(link, self._trials, session)
        started = perf_counter()
        link.write(self._run_frame(link, conversation.trial, task, seed))
        await asyncio.wait([conversation.done], timeout=max_seconds)
        overdue = not conversation.done.done()
        if overdue:  # cancel it; the worker's answer says whether a neighbour stalled it
            conversation.cancel(f"no result within {max_seconds} s")
            await asyncio.wait([conversation.done], timeout=GRACE_SECONDS)
            if not conversation.done.done():  # no answer: the worker is stuck, by this trial or a neighbour; the
                conversation.end(TIMEOUT, conversation.overdue, lost=True)  # trials that shared it are run again
                if link.load > 1:
                    self.per_worker = 1
                self._kill(link)
        status, reason, result = conversation.done.result()
        duration = min(perf_counter() - started, max_seconds) if status == TIMEOUT else perf_counter() - started
        if conversation.lost:
            self.per_worker = 1  # it blocks its event loop, or its worker died under shared trials
        self._chore(self._release(link, conversation, cancel=status == BUDGET_EXCEEDED and not overdue))
        return AgentOutcome(
            status, reason, result or AgentResult(status="error"), duration, queued, redo=conversation.lost
        )

    def _run_frame(self, link: Link, trial: int, task: AgentTask, seed: int) -> bytes:
        """A trial's task; its tool definitions (the bulk of it) only the first time this worker sees them."""
        definitions = task.tool_definitions
        key = self._tool_keys.get(definitions)
        if key is None:
            key = self._tool_keys[definitions] = hashlib.sha256(definitions.encode()).hexdigest()[:16]
        tools = "" if key in link.sent_tools else f',"tool_definitions":{json.dumps(definitions, ensure_ascii=False)}'
        link.sent_tools.add(key)
        body = (
            f'{{"op":"run","trial":{trial},"seed":{seed},"tools_key":"{key}"{tools},'
            f'"task":{task.model_dump_json(exclude={"tool_definitions", "seed"})}}}'
        ).encode()
        return frame(body)

    async def _release(self, link: Link, conversation: Conversation, cancel: bool) -> None:
        """Wait for the worker to free the trial's slot (cancelling it first when it overran); kill it if not."""
        freed = link.freeing.get(conversation.trial)
        if freed is None:
            return
        if cancel:
            conversation.cancel()
        await asyncio.wait([freed], timeout=GRACE_SECONDS if cancel else FREE_SECONDS)
        if not freed.done():
            if link.load > 1:
                self.per_worker = 1  # a worker stuck with several trials: its loop is blocked
            self._kill(link)

    def _chore(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._chores.add(task)
        task.add_done_callback(self._chores.discard)

    async def aclose(self) -> None:
        """Wait for pending releases, then end the sandbox and every worker in it."""
        if self._chores:
            await asyncio.gather(*self._chores, return_exceptions=True)
        self.close()

    def close(self) -> None:
        """End the sandbox now (outside an event loop, or on a failed start)."""
        for link in self._links:
            link.transport.close()
        self._links.clear()
        self._zygote.close()
