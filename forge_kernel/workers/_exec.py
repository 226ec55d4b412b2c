"""The first Python process of a sandbox: bound its memory, fork the relay (its way out), then run the agent.

``zygote`` does this before it imports a ``module:attribute`` agent. An ``mcp:COMMAND`` agent is a program of its
own, so this module's ``main`` does it and then becomes that program (``exec``), which keeps the memory bound:

    python -m forge_kernel.workers._exec MEMORY_MB [EGRESS_FD ENDPOINTS] -- COMMAND...
"""

from __future__ import annotations

import os
import resource
import socket
import sys

from ._egress import run_relay


def limit_memory(mb: int) -> None:
    """At most ``mb`` MiB of memory for this process and every process forked from it (their heaps and anonymous
    mappings: RLIMIT_DATA, hard, so the agent cannot raise it); past it an allocation fails (MemoryError)."""
    limit, (_, hard) = mb * 1024 * 1024, resource.getrlimit(resource.RLIMIT_DATA)
    limit = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))


def start_relay(egress_fd: int, endpoints: str, control: socket.socket | None = None) -> None:
    """Fork the relay, the sandbox's way out through the harness, before any of the agent's code runs (the relay
    keeps neither ``control``, the zygote's socket to the harness, nor the agent's stdin and stdout, which an MCP
    agent speaks on: the harness sees them close when the agent ends)."""
    if os.fork() == 0:
        if control is not None:
            control.close()
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        run_relay(socket.socket(fileno=egress_fd), tuple(filter(None, endpoints.split(","))))
        os._exit(0)
    os.close(egress_fd)


def main(args: list[str]) -> None:
    first, command = args[: args.index("--")], args[args.index("--") + 1 :]
    limit_memory(int(first[0]))
    if len(first) > 1:
        start_relay(int(first[1]), first[2])
    try:
        os.execv(command[0], command)
    except OSError as exc:
        print(f"cannot run {command[0]}: {exc.strerror}", file=sys.stderr)
        os._exit(127)


if __name__ == "__main__":
    main(sys.argv[1:])
