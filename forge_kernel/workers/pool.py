"""An untrusted agent behind a pool of worker processes, forked from one sandboxed zygote per agent.

The harness keeps everything that matters (EHR, policy, faults, clock, budgets, the record); a worker only ever
receives its ``AgentTask`` and replies to its calls. A worker runs one trial at a time, so a blocking call or
a busy loop slows only its own trial; it is reused for the next trial when it ends cleanly and retired
(cancelled, then killed) after any fault, timeout or budget breach.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import socket
import subprocess
import tempfile
from time import perf_counter

from ..agents import AgentTask
from ..spec import AgentResult, SpecError
from ..tools import ToolSession
from .attempt import AGENT_ERROR, COMPLETED, REASON_CHARS, TIMEOUT, AgentOutcome
from .egress import hosts_file, serve_harness
from .link import Conversation, Link
from .processes import sandbox_init, sandbox_pid
from .sandbox import Sandbox
from .wire import HEADER, WireError, decode, encode

START_SECONDS = 60.0
"""How long an agent's zygote may take to import the agent and say hello."""
SPAWN_SECONDS = 20.0
"""How long forking a worker, and a worker's first ``ready``, may take."""
GRACE_SECONDS = 1.0
"""How long a cancelled worker has to stop before it is killed; also how long a worker may take to be ready
again after a clean trial."""


class WorkerError(Exception):
    """A worker or zygote that broke the protocol, died or did not answer in time."""


class IsolatedAgent:
    """An untrusted agent: started with ``await IsolatedAgent.start(spec, sandbox)``, then ``attempt`` per trial."""

    def __init__(self, spec: str, sandbox: Sandbox):
        self.spec = spec
        self.sandbox = sandbox
        self.isolation = sandbox.mode
        self.name = self.version = ""
        self.config: dict | None = None
        self._zygote: subprocess.Popen | None = None
        self._control: socket.socket | None = None
        self._spawning = asyncio.Lock()
        self._gone = False
        """The zygote's control socket closed: it exited or was killed."""
        self._relay: asyncio.Future | None = None
        self._hosts: str | None = None
        self._tool_keys: dict[str, str] = {}
        """Tool definitions (the same string object for every trial of a package) -> a short key."""
        self._idle: list[Link] = []
        self._chores: set[asyncio.Task] = set()
        self._trials = 0

    @classmethod
    async def start(cls, spec: str, sandbox: Sandbox) -> "IsolatedAgent":
        """Start the agent's sandbox; an agent that cannot be imported or built is a SpecError."""
        agent = cls(spec, sandbox)
        hello = await agent._start_zygote()
        if hello.get("op") == "fatal":
            agent.close()
            raise SpecError("--agent", spec, str(hello.get("error"))[:REASON_CHARS])
        name, version = hello.get("name"), hello.get("version")
        if not (isinstance(name, str) and 0 < len(name) <= 100 and isinstance(version, str) and len(version) <= 100):
            agent.close()
            raise SpecError("--agent", spec, "the agent must have a name and a version (strings of up to 100 chars)")
        config = hello.get("config")
        agent.name, agent.version, agent.config = name, version, config if isinstance(config, dict) else None
        return agent

    async def _start_zygote(self) -> dict:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        egress = self._open_egress() if self.sandbox.egress else None
        fds = [theirs.fileno(), *([egress.fileno()] if egress else [])]
        command = self.sandbox.command(self.spec, theirs.fileno(), egress and egress.fileno(), self._hosts)
        try:
            self._zygote = subprocess.Popen(command, pass_fds=fds, env=self.sandbox.environment(),
                                            stdin=subprocess.DEVNULL, stdout=2, start_new_session=True)
        finally:
            theirs.close()
            if egress:
                egress.close()
        ours.setblocking(False)
        self._control, self._gone = ours, False
        try:
            return await self._control_reply(START_SECONDS)
        except WorkerError as exc:
            self.close()
            raise SpecError("--agent", self.spec, f"cannot start: {exc}") from None
        except BaseException:  # cancelled while starting: leave no process behind
            self.close()
            raise

    def _open_egress(self) -> socket.socket:
        """The relay's control socket (the sandbox's end is returned) and the sandbox's /etc/hosts."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        ours.setblocking(False)
        self._relay = asyncio.ensure_future(serve_harness(ours, self.sandbox.endpoints))
        self._relay.add_done_callback(lambda _: ours.close())
        if self._hosts is None:
            with tempfile.NamedTemporaryFile("w", prefix="forge-hosts-", delete=False) as f:
                f.write(hosts_file(self.sandbox.endpoints))
            self._hosts = f.name
        return theirs

    async def _control_reply(self, seconds: float) -> dict:
        loop = asyncio.get_running_loop()
        try:
            data = await asyncio.wait_for(loop.sock_recv(self._control, 65536), seconds)
        except (TimeoutError, OSError) as exc:
            raise WorkerError(f"no answer from the agent's process ({type(exc).__name__})") from None
        if len(data) < HEADER.size:
            self._gone = True
            raise WorkerError("the agent's process exited")
        try:
            return decode(data[HEADER.size:])
        except WireError as exc:
            raise WorkerError(str(exc)) from None

    async def _fork(self) -> tuple[socket.socket, int]:
        """Ask the zygote for a worker (serialised: one control socket); our end of its socket and its pid."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            try:
                socket.send_fds(self._control, [encode({"op": "spawn"})], [theirs.fileno()])
            except OSError as exc:
                self._gone = True
                raise WorkerError(f"the agent's process is gone ({exc.strerror})") from None
            reply = await self._control_reply(SPAWN_SECONDS)
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        pid = reply.get("pid")
        return ours, pid if isinstance(pid, int) and not isinstance(pid, bool) else 0

    def _dead(self) -> bool:
        """The zygote exited or was killed (its end of the control socket is closed)."""
        if self._gone or self._control is None:
            return True
        try:
            self._gone = self._control.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except BlockingIOError:
            pass
        except OSError:
            self._gone = True
        return self._gone

    async def _acquire(self) -> Link:
        """An idle worker, or a new one; the zygote is started again if it died (or the agent killed it)."""
        if self._idle:
            return self._idle.pop()
        try:
            return await self._new_worker()
        except WorkerError:
            if not self._dead():
                raise
        async with self._spawning:
            if self._dead():
                self._kill_zygote()
                if (await self._start_zygote()).get("op") != "hello":
                    raise WorkerError("the agent's process could not be restarted")
        return await self._new_worker()

    async def _new_worker(self) -> Link:
        async with self._spawning:
            sock, pid = await self._fork()
        _, link = await asyncio.get_running_loop().create_unix_connection(Link, sock=sock)
        link.pid = pid
        first = await link.next(SPAWN_SECONDS)
        if not first or first.get("op") != "ready":
            self._retire(link)
            raise WorkerError("a new worker did not get ready")
        return link

    async def attempt(self, task: AgentTask, seed: int, session: ToolSession, max_seconds: float) -> AgentOutcome:
        """Run one trial in a worker; every way it can go wrong ends as this trial's outcome."""
        waited = perf_counter()
        try:
            link = await self._acquire()
        except (WorkerError, SpecError) as exc:
            return AgentOutcome(AGENT_ERROR, f"worker could not start: {exc}", queued_s=perf_counter() - waited)
        queued = perf_counter() - waited
        self._trials += 1
        conversation = Conversation(link, self._trials, session)
        started = perf_counter()
        link.write(self._run_frame(link, self._trials, task, seed))
        await asyncio.wait([conversation.done], timeout=max_seconds)
        conversation.end(TIMEOUT, f"no result within {max_seconds} s")  # unless it has ended already
        status, reason, result = conversation.done.result()
        duration = perf_counter() - started
        if status == COMPLETED:
            self._chore(self._reuse(link))
        else:
            self._retire(link)
        return AgentOutcome(status, reason, result or AgentResult(status="error"), duration, queued)

    def _run_frame(self, link: Link, trial: int, task: AgentTask, seed: int) -> bytes:
        """A trial's task; its tool definitions (the bulk of it) only the first time this worker sees them."""
        definitions = task.tool_definitions
        key = self._tool_keys.get(definitions)
        if key is None:
            key = self._tool_keys[definitions] = hashlib.sha256(definitions.encode()).hexdigest()[:16]
        tools = "" if key in link.sent_tools else f',"tool_definitions":{encode_str(definitions)}'
        link.sent_tools.add(key)
        body = (f'{{"op":"run","trial":{trial},"seed":{seed},"tools_key":"{key}"{tools},'
                f'"task":{task.model_dump_json(exclude={"tool_definitions", "seed"})}}}').encode()
        return HEADER.pack(len(body)) + body

    def _chore(self, coro) -> None:
        task = asyncio.ensure_future(coro)
        self._chores.add(task)
        task.add_done_callback(self._chores.discard)

    async def _reuse(self, link: Link) -> None:
        """Back to the pool once the worker says it is ready again; retired if it does not."""
        message = await link.next(GRACE_SECONDS * 5)
        if message and message.get("op") == "ready":
            self._idle.append(link)
        else:
            self._retire(link)

    def _retire(self, link: Link) -> None:
        self._chore(self._stop(link))

    async def _stop(self, link: Link) -> None:
        """Cancel, give the worker a moment, then kill it."""
        link.write(encode({"op": "cancel"}))
        try:
            async with asyncio.timeout(GRACE_SECONDS):
                while (message := await link.inbox.get()) and message.get("op") not in ("cancelled", "ready"):
                    pass
        except TimeoutError:
            pass
        self._kill(link.pid)
        link.transport.close()

    def _kill(self, pid: int) -> None:
        real = sandbox_pid(pid, self._zygote.pid, self.sandbox.mode) if self._zygote and pid > 0 else None
        if real is not None:
            try:
                os.kill(real, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def _kill_zygote(self) -> None:
        if self._relay is not None:
            self._relay.cancel()
            self._relay = None
        if self._control is not None:
            self._control.close()
            self._control = None
        if self._zygote is not None:  # pid 1 of the sandbox takes every process in it along
            init = sandbox_init(self._zygote.pid) if self.sandbox.mode != "process" else None
            for kill, target in ((os.kill, init), (os.killpg, self._zygote.pid)):
                try:
                    if target:
                        kill(target, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            self._zygote.wait()
            self._zygote = None

    async def aclose(self) -> None:
        """Wait for pending retirements, then end the sandbox and every worker in it."""
        if self._chores:
            await asyncio.gather(*self._chores, return_exceptions=True)
        for link in self._idle:
            link.transport.close()
        self._idle.clear()
        self.close()

    def close(self) -> None:
        """End the sandbox now (outside an event loop, or on a failed start)."""
        self._kill_zygote()
        if self._hosts is not None:
            os.unlink(self._hosts)
            self._hosts = None


def encode_str(text: str) -> str:
    """A JSON string literal."""
    return json.dumps(text, ensure_ascii=False)
