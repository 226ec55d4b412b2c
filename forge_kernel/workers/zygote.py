"""The entry point of an isolated agent, run inside its sandbox: import the agent once, then fork workers.

    python -m forge_kernel.workers.zygote AGENT_SPEC CONTROL_FD MEMORY_MB [EGRESS_FD ENDPOINTS]

The control socket (SOCK_SEQPACKET) carries ``hello`` (or ``fatal``) once, then one ``spawn`` request per worker,
each with the worker's socket attached (SCM_RIGHTS), answered by ``spawned`` with the worker's pid. Workers
are forked from this process, so the agent's imports are paid once per run, not once per worker.
"""

from __future__ import annotations

import gc
import os
import signal
import socket
import sys

from ..agents import agent_factory
from ..spec import AgentError
from ._exec import limit_memory, start_relay
from ._worker import run_worker
from .attempt import describe
from .client import json_copy
from .wire import encode


def hello(spec: str) -> tuple[object, bytes]:
    """The agent factory and the hello frame naming the agent, or a fatal frame and None."""
    try:
        make = agent_factory(spec)
    except AgentError as exc:
        return None, encode({"op": "fatal", "error": exc.message})
    try:
        probe = make()
        return make, encode(
            {
                "op": "hello",
                "name": str(probe.name),
                "version": str(probe.version),
                "config": json_copy(getattr(probe, "config", None)),
            }
        )  # odd values as strings
    except BaseException as exc:  # an agent that cannot be built is the user's mistake, reported
        return None, encode({"op": "fatal", "error": f"cannot build the agent: {describe(exc)}"})


def fork_worker(make, fd: int, control: socket.socket) -> int:
    """A child process serving trials on ``fd``; returns its pid (in this sandbox's pid namespace), or 0 when no
    process can be made (the agent holds all it may have): the harness sees the worker's socket close."""
    try:
        pid = os.fork()
    except OSError:
        os.close(fd)
        return 0
    if pid:
        os.close(fd)
        return pid
    control.close()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    code = 0
    try:
        run_worker(socket.socket(fileno=fd), make)
    except BaseException:
        code = 1
    os._exit(code)


def main(spec: str, control_fd: int, memory_mb: int, egress_fd: int | None = None, endpoints: str = "") -> None:
    limit_memory(memory_mb)
    control = socket.socket(fileno=control_fd)
    if egress_fd is not None:
        start_relay(egress_fd, endpoints, control)
    make, frame = hello(spec)
    control.send(frame)
    if make is None:
        return
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    gc.freeze()  # what the agent imported: no worker's collections walk (or copy) it
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(control, 4096, 1)
        except OSError:
            return
        if not message:
            return
        for fd in fds:
            pid = fork_worker(make, fd, control)
            control.send(encode({"op": "spawned", "pid": pid}))


if __name__ == "__main__":
    if len(sys.argv) > 5:  # with egress: its descriptor and endpoints
        main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    else:
        main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
