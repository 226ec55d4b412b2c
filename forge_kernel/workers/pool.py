"""An untrusted agent behind a pool of worker processes, forked from one sandboxed zygote per agent.

The harness keeps everything that matters (EHR, policy, faults, clock, budgets, the record); a worker only ever
receives its ``AgentTask`` and replies to its calls. A worker runs one trial at a time, so a blocking call or
a busy loop slows only its own trial; it is reused for the next trial when it ends cleanly and retired
(cancelled, then killed) after any fault, timeout or budget breach.
"""
from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from time import perf_counter

from pydantic import ValidationError

from ..spec import AgentResult, SpecError
from ..tools import BudgetExceeded, ToolSession
from .attempt import AGENT_ERROR, BUDGET_EXCEEDED, COMPLETED, REASON_CHARS, TIMEOUT, AgentOutcome
from .egress import hosts_file, serve_harness
from .sandbox import Sandbox
from .wire import HEADER, WireError, decode, encode, finite_number, frame, read_frame

START_SECONDS = 60.0
"""How long an agent's zygote may take to import the agent and say hello."""
SPAWN_SECONDS = 20.0
"""How long forking a worker, and a worker's first ``ready``, may take."""
GRACE_SECONDS = 1.0
"""How long a cancelled worker has to stop before it is killed; also how long a worker may take to be ready
again after a clean trial."""
MAX_TOOL_NAME = 200


class WorkerError(Exception):
    """A worker or zygote that broke the protocol, died or did not answer in time."""


@dataclass
class Worker:
    """The harness's end of one worker process."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    pid: int
    """As the zygote reported it (in the sandbox's pid namespace)."""

    def send(self, data: bytes) -> None:
        self.writer.write(data)


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
        self._idle: list[Worker] = []
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

    async def _acquire(self) -> Worker:
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

    async def _new_worker(self) -> Worker:
        async with self._spawning:
            sock, pid = await self._fork()
        reader, writer = await asyncio.open_unix_connection(sock=sock)
        worker = Worker(reader, writer, pid)
        try:
            first = await asyncio.wait_for(read_frame(reader), SPAWN_SECONDS)
        except (TimeoutError, WireError):
            first = None
        if not first or first.get("op") != "ready":
            self._retire(worker)
            raise WorkerError("a new worker did not get ready")
        return worker

    async def attempt(self, task_json: str, session: ToolSession, max_seconds: float) -> AgentOutcome:
        """Run one trial in a worker; every way it can go wrong ends as this trial's outcome."""
        waited = perf_counter()
        try:
            worker = await self._acquire()
        except (WorkerError, SpecError) as exc:
            return AgentOutcome(AGENT_ERROR, f"worker could not start: {exc}", queued_s=perf_counter() - waited)
        queued = perf_counter() - waited
        self._trials += 1
        trial = self._trials
        started = perf_counter()
        worker.send(frame(f'{{"op":"run","trial":{trial},"task":{task_json}}}'.encode()))
        result = None
        try:
            async with asyncio.timeout(max_seconds):
                status, reason, result = await converse(worker, trial, session)
        except TimeoutError:
            status, reason = TIMEOUT, f"no result within {max_seconds} s"
        duration = perf_counter() - started
        if status == COMPLETED:
            self._chore(self._reuse(worker))
        else:
            self._retire(worker)
        return AgentOutcome(status, reason, result or AgentResult(status="error"), duration, queued)

    def _chore(self, coro) -> None:
        task = asyncio.ensure_future(coro)
        self._chores.add(task)
        task.add_done_callback(self._chores.discard)

    async def _reuse(self, worker: Worker) -> None:
        """Back to the pool once the worker says it is ready again; retired if it does not."""
        try:
            message = await asyncio.wait_for(read_frame(worker.reader), GRACE_SECONDS * 5)
        except (TimeoutError, WireError, OSError):
            message = None
        if message and message.get("op") == "ready":
            self._idle.append(worker)
        else:
            self._retire(worker)

    def _retire(self, worker: Worker) -> None:
        self._chore(self._stop(worker))

    async def _stop(self, worker: Worker) -> None:
        """Cancel, give the worker a moment, then kill it."""
        try:
            worker.send(encode({"op": "cancel"}))
            async with asyncio.timeout(GRACE_SECONDS):
                while (message := await read_frame(worker.reader)) and message.get("op") not in ("cancelled", "ready"):
                    pass
        except (TimeoutError, WireError, OSError):
            pass
        self._kill(worker.pid)
        worker.writer.close()

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
        for worker in self._idle:
            worker.writer.close()
        self._idle.clear()
        self.close()

    def close(self) -> None:
        """End the sandbox now (outside an event loop, or on a failed start)."""
        self._kill_zygote()
        if self._hosts is not None:
            os.unlink(self._hosts)
            self._hosts = None


async def converse(worker: Worker, trial: int, session: ToolSession) -> tuple[str, str | None, AgentResult | None]:
    """Serve one trial's calls until the agent's result, error or a fault; returns (status, reason, result)."""
    limit = 4 * session.package.budget.max_calls + 64
    for _ in range(limit):
        try:
            message = await read_frame(worker.reader)
        except WireError as exc:
            return AGENT_ERROR, f"protocol: {exc}", None
        if message is None:
            return AGENT_ERROR, "the worker process exited", None
        if message.get("trial") != trial:
            return AGENT_ERROR, f"protocol: a {str(message['op'])[:40]!r} message outside its trial", None
        op = message["op"]
        if op == "call":
            call_id, tool, args = message.get("id"), message.get("tool"), message.get("args")
            if not (isinstance(call_id, int) and isinstance(tool, str) and len(tool) <= MAX_TOOL_NAME
                    and isinstance(args, dict)):
                return AGENT_ERROR, "protocol: a call needs an integer id, a tool name and an args object", None
            try:
                reply = await session.call(tool, **args)
            except BudgetExceeded as exc:
                worker.send(encode({"op": "reply", "id": call_id, "ok": False,
                                    "error": {"code": "budget_exceeded", "message": str(exc)}}))
                return BUDGET_EXCEEDED, str(exc), None
            worker.send(encode({"op": "reply", "id": call_id, **reply}))
        elif op == "charge":
            usd = message.get("usd")
            if not finite_number(usd) or usd < 0:
                return AGENT_ERROR, "protocol: a charge must be a finite number of dollars, not negative", None
            try:
                session.charge(float(usd))
            except BudgetExceeded as exc:
                return BUDGET_EXCEEDED, str(exc), None
        elif op == "result":
            try:
                return COMPLETED, None, AgentResult.model_validate(message.get("result"))
            except ValidationError as exc:
                err = exc.errors()[0]
                where = ".".join(map(str, err["loc"])) or "result"
                return AGENT_ERROR, f"unparseable result: {where}: {err['msg']}"[:REASON_CHARS], None
        elif op == "error":
            return AGENT_ERROR, str(message.get("error"))[:REASON_CHARS], None
        else:
            return AGENT_ERROR, f"protocol: unexpected {op[:40]!r} message", None
    return AGENT_ERROR, f"protocol: more than {limit} messages in one trial", None


def sandbox_pid(pid: int, zygote: int, mode: str) -> int | None:
    """The real pid of a worker the zygote reported, if it is one of this sandbox's processes (else None).

    The zygote runs the agent's code, so what it says is checked: in a pid namespace the pid must belong to
    the sandbox's namespace; without one, the process must be the zygote's child.
    """
    if mode == "process":
        return pid if parent_of(pid) == zygote else None
    init = sandbox_init(zygote)
    namespace = pid_namespace(init) if init else None
    if namespace is None:
        return None
    for entry in os.listdir("/proc"):
        if entry.isdigit() and pid_namespace(int(entry)) == namespace and ns_pids(int(entry))[-1:] == [pid]:
            return int(entry)
    return None


def sandbox_init(bwrap: int) -> int | None:
    """The first process inside a bubblewrap sandbox (pid 1 of its namespace): bwrap's child."""
    return next((int(e) for e in os.listdir("/proc") if e.isdigit() and parent_of(int(e)) == bwrap), None)


def pid_namespace(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def parent_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def ns_pids(pid: int) -> list[int]:
    """A process's pid in each pid namespace it is in, outermost first."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("NSpid:"):
                    return [int(x) for x in line.split()[1:]]
    except (OSError, ValueError):
        pass
    return []
