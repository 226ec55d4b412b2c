"""Finding a worker's real process from what its (untrusted) zygote reports, so the harness can kill it."""

from __future__ import annotations

import os


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
