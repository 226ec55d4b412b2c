"""The harness's handle on a process in an agent's sandbox (``SandboxedProcess``), and on a zygote
(``ZygoteProcess``): the sandboxed process that imports a ``module:attribute`` agent and forks its workers.

The zygote runs the agent's code, so nothing it says is trusted: it can only name pids inside its own sandbox
(``processes.sandbox_pid`` checks), and in strict mode it reaches only the endpoints the harness dials for it.
Where the sandbox bounds the agent's processes or their memory in all, the zygote starts in cgroups of its own
(``_cgroup``), and whatever the agent left running is killed with them.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
from collections.abc import Callable, Sequence
from typing import cast

from ._cgroup import AgentCgroups
from ._egress import serve_harness
from ._launch import Launch
from ._output import AgentOutput, Allowance
from ._processes import sandbox_init, sandbox_pid
from .sandbox import Sandbox
from .wire import HEADER, WireError, decode, encode

START_SECONDS = 60.0
"""How long an agent's zygote may take to import the agent and say hello."""
SPAWN_SECONDS = 20.0
"""How long forking a worker may take."""


class WorkerError(Exception):
    """A worker or zygote that broke the protocol, died or did not answer in time."""


class SandboxedProcess:
    """A command started in an agent's sandbox, in cgroups of its own where the sandbox bounds the agent's processes
    or memory, its way out served by the harness and its output shown (``start``); ``close`` ends it and everything
    it left running."""

    def __init__(self, spec: str, sandbox: Sandbox, allowance: Allowance | None = None):
        self.spec = spec
        self.sandbox = sandbox
        self.process: subprocess.Popen | None = None
        self._relay: asyncio.Future | None = None
        self._cgroups: AgentCgroups | None = None
        self._output: asyncio.BaseTransport | None = None
        self._allowance = allowance or Allowance()
        """How much of the agent's output is left to show, across restarts."""

    async def start(
        self, command: Callable[[Launch, int | None], list[str]], fds: Sequence[int] = (), stdio: bool = False
    ) -> None:
        """Start ``command(launch, egress_fd)`` with ``fds`` passed to it. With ``stdio`` its stdin and stdout are
        pipes for the caller (``process.stdin``, ``process.stdout``) and its stderr is shown; else stdout and stderr
        are shown. WorkerError when the sandbox cannot be made."""
        unreadable = self.sandbox.unreadable(self.spec)
        if unreadable is not None:
            raise WorkerError(
                f"{unreadable} cannot be read by the sandbox's user, nobody (forge runs as root): "
                "make it readable by others (chmod -R o+rX), or run forge as another user"
            )
        egress = self._open_egress() if self.sandbox.egress else None
        launch = self.sandbox.launch()
        try:
            line = command(launch, egress.fileno() if egress else None)
            if limits := self.sandbox.cgroup_limits():
                try:
                    self._cgroups = AgentCgroups(limits)
                except OSError as exc:
                    raise WorkerError(f"cannot make its cgroups ({exc.strerror or exc})") from None
                line = [*self._cgroups.prefix(), *line]
            piped = subprocess.PIPE if stdio else subprocess.DEVNULL
            self.process = subprocess.Popen(
                line,
                pass_fds=[*fds, *([egress.fileno()] if egress else []), *launch.passed],
                env=self.sandbox.environment(),
                stdin=piped,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE if stdio else subprocess.STDOUT,
                start_new_session=True,
            )
            launch.started()
            self._output, _ = await asyncio.get_running_loop().connect_read_pipe(
                lambda: AgentOutput(self.spec, self._allowance), self.process.stderr if stdio else self.process.stdout
            )
            await launch.map_users(START_SECONDS)
        except (OSError, TimeoutError) as exc:
            self.close()
            raise WorkerError(
                f"cannot make its sandbox ({getattr(exc, 'strerror', None) or exc or 'no answer'})"
            ) from None
        except BaseException:
            self.close()
            raise
        finally:
            launch.close()
            if egress:
                egress.close()

    def _open_egress(self) -> socket.socket:
        """The relay's control socket (the sandbox's end is returned), served by the harness."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        ours.setblocking(False)
        self._relay = asyncio.ensure_future(
            serve_harness(ours, self.sandbox.endpoints, self.sandbox.mode == "namespace")
        )
        self._relay.add_done_callback(lambda _: ours.close())
        return theirs

    def close(self) -> None:
        """End the sandbox and every process in it (pid 1 of the sandbox takes them along)."""
        if self._relay is not None:
            self._relay.cancel()
            self._relay = None
        if self.process is not None:
            init = sandbox_init(self.process.pid) if self.sandbox.mode != "process" else None
            for kill, target in ((os.kill, init), (os.killpg, self.process.pid)):
                try:
                    if target:
                        kill(target, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            self.process.wait()
            self.process = None
        if self._output is not None:
            if not self._output.is_closing():  # else it has read to the end
                cast(AgentOutput, self._output.get_protocol()).drain(self._output.get_extra_info("pipe"))
            self._output.close()
            self._output = None
        if self._cgroups is not None:
            self._cgroups.remove()
            self._cgroups = None


class ZygoteProcess(SandboxedProcess):
    """One running zygote: ``await start()`` (its hello), then ``fork()`` per worker, ``kill(pid)``, ``close()``."""

    def __init__(self, spec: str, sandbox: Sandbox):
        super().__init__(spec, sandbox)
        self.control: socket.socket | None = None
        self.gone = False
        """Its control socket closed: it exited or was killed."""

    async def start(self) -> dict:  # type: ignore[override]  # a zygote starts its own command
        """Start the sandbox; the zygote's first message (``hello`` or ``fatal``), or WorkerError."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            await super().start(
                lambda launch, egress_fd: self.sandbox.command(self.spec, theirs.fileno(), launch, egress_fd),
                [theirs.fileno()],
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        ours.setblocking(False)
        self.control, self.gone = ours, False
        try:
            return await self._reply(START_SECONDS)
        except BaseException:  # no answer, or cancelled while starting: leave no process behind
            self.close()
            raise

    async def _reply(self, seconds: float) -> dict:
        loop = asyncio.get_running_loop()
        assert self.control is not None  # started
        try:
            data = await asyncio.wait_for(loop.sock_recv(self.control, 65536), seconds)
        except (TimeoutError, OSError) as exc:
            raise WorkerError(f"no answer from the agent's process ({type(exc).__name__})") from None
        if len(data) < HEADER.size:
            self.gone = True
            raise WorkerError("the agent's process exited")
        try:
            return decode(data[HEADER.size :])
        except WireError as exc:
            raise WorkerError(str(exc)) from None

    async def fork(self) -> tuple[socket.socket, int]:
        """A new worker (call one at a time: one control socket); our end of its socket and its pid."""
        assert self.control is not None  # started
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            try:
                socket.send_fds(self.control, [encode({"op": "spawn"})], [theirs.fileno()])
            except OSError as exc:
                self.gone = True
                raise WorkerError(f"the agent's process is gone ({exc.strerror})") from None
            reply = await self._reply(SPAWN_SECONDS)
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        pid = reply.get("pid")
        return ours, pid if type(pid) is int else 0

    def dead(self) -> bool:
        """It exited or was killed (its end of the control socket is closed)."""
        if self.gone or self.control is None:
            return True
        try:
            self.gone = self.control.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except BlockingIOError:
            pass
        except OSError:
            self.gone = True
        return self.gone

    def kill(self, pid: int) -> None:
        """Kill one of its workers, by the pid it reported, if that is really a process of this sandbox."""
        real = sandbox_pid(pid, self.process.pid, self.sandbox.mode) if self.process and pid > 0 else None
        if real is not None:
            try:
                os.kill(real, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def close(self) -> None:
        """End the sandbox and every process in it."""
        if self.control is not None:
            self.control.close()
            self.control = None
        super().close()
