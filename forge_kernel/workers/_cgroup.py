"""The cgroups around each agent's sandbox: how many processes and threads an untrusted agent may have at once
(``pids``), and how much memory all of its processes may hold together (``memory``: heaps, its scratch folders
and System V shared memory included).

For each controller forge makes a child of its own cgroup (cgroup v1, one hierarchy per controller; or v2, where
forge's own cgroup hands the controller down), sets its limit, starts the agent's sandbox in it and, when the
agent is stopped, kills what is left in it and removes it. Past the memory limit the kernel's out-of-memory killer
ends one of that agent's processes, never another's or the harness. Where a controller's cgroup cannot be made
(typically: not root), that bound is missing, and forge says so (``problem``).
"""

from __future__ import annotations

import os
import signal
import time
from functools import cache
from itertools import count
from pathlib import Path

LIMIT_FILES = {
    ("pids", "v1"): "pids.max",
    ("pids", "v2"): "pids.max",
    ("memory", "v1"): "memory.limit_in_bytes",
    ("memory", "v2"): "memory.max",
}
"""The file that holds a controller's limit, by controller and cgroup version."""
SWAP_FILES = {"v1": "memory.memsw.limit_in_bytes", "v2": "memory.swap.max"}
"""Where the machine swaps, what keeps the memory limit from being passed into swap (v1: memory and swap
together at the same limit; v2: no swap), written where the kernel has it."""
REMOVE_SECONDS = 2.0
"""How long the processes killed in a cgroup may take to go before it is left behind."""
_names = count()


def own_folder(controller: str, mountinfo: str, cgroups: str) -> tuple[Path | None, str]:
    """This process's cgroup folder for ``controller``, from ``/proc/self/mountinfo`` and ``/proc/self/cgroup``,
    and its version (``v1`` or ``v2``); None when there is none that hands the controller down."""
    own = {}
    for line in cgroups.splitlines():
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            own["v2"] = path
        elif controller in controllers.split(","):
            own["v1"] = path
    for line in mountinfo.splitlines():
        before, _, after = line.partition(" - ")
        fields, (fstype, _, options) = before.split(), after.split(" ", 2)
        version = (
            "v1" if fstype == "cgroup" and controller in options.split(",") else "v2" if fstype == "cgroup2" else None
        )
        if version and version in own:
            root, mount = fields[3], fields[4]
            relative = os.path.relpath(own[version], root)
            if relative.startswith(".."):  # forge's cgroup is outside what this mount shows
                continue
            if version == "v1" or controller in read(Path(mount, relative, "cgroup.subtree_control")).split():
                return Path(mount, relative).resolve(), version
    return None, ""


def read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


@cache
def parent_folder(controller: str) -> tuple[Path | None, str, str | None]:
    """Where forge makes its agents' cgroups for ``controller``, their version, or None and why it cannot (probed
    once per process; cgroups a killed forge left there are removed)."""
    folder, version = own_folder(controller, read(Path("/proc/self/mountinfo")), read(Path("/proc/self/cgroup")))
    if folder is None:
        return None, "", f"no {controller} cgroup controller is handed to forge here"
    probe = folder / f"forge-{os.getpid()}-probe"
    try:
        probe.mkdir()
        limited = (probe / LIMIT_FILES[controller, version]).exists()
        probe.rmdir()
    except OSError as exc:
        return None, "", f"cannot make a {controller} cgroup in {folder} ({exc.strerror})"
    if not limited:
        return None, "", f"a {controller} cgroup in {folder} has no {LIMIT_FILES[controller, version]}"
    for left in folder.glob("forge-*-*"):  # of a forge that was killed: empty once its sandboxes died with it
        if not Path("/proc", left.name.split("-")[1]).exists():
            try:
                left.rmdir()
            except OSError:
                pass
    return folder, version, None


def problem(controller: str) -> str | None:
    """Why agents cannot be bounded with ``controller`` here, or None when they can."""
    return parent_folder(controller)[2]


class AgentCgroups:
    """One agent's cgroups, a limit for each controller named (``{"pids": 4096, "memory": bytes}``);
    ``prefix()`` starts a command in them."""

    def __init__(self, limits: dict[str, int]):
        name = f"forge-{os.getpid()}-{next(_names)}"
        self.folders: list[Path] = []
        try:
            for controller, limit in limits.items():
                parent, version, why = parent_folder(controller)
                if why or parent is None:  # a folder, or why not
                    raise OSError(why)
                folder = parent / name
                if folder not in self.folders:  # v2: one folder holds every controller
                    folder.mkdir()
                    self.folders.append(folder)
                (folder / LIMIT_FILES[controller, version]).write_text(str(limit))
                swap = folder / SWAP_FILES[version]
                if controller == "memory" and swap.exists():
                    swap.write_text(str(limit) if version == "v1" else "0")
        except OSError:
            self.remove()
            raise

    def prefix(self) -> list[str]:
        """A command prefix that moves the command into every cgroup before it runs."""
        script = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 1; shift; done; shift; exec "$@"'
        return ["/bin/sh", "-c", script, "sh", *(str(f / "cgroup.procs") for f in self.folders), "--"]

    def remove(self) -> None:
        """Kill every process still in the cgroups (a fork that escaped its process group included) and remove
        them; left behind, empty of anything alive, if their processes take longer than ``REMOVE_SECONDS`` to go."""
        deadline = time.monotonic() + REMOVE_SECONDS
        for folder in self.folders:
            while not emptied(folder) and time.monotonic() < deadline:
                time.sleep(0.01)
        self.folders = []


def emptied(folder: Path) -> bool:
    """Kill what is in a cgroup and remove it; False while it is still busy with processes on their way out."""
    for pid in read(folder / "cgroup.procs").split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        folder.rmdir()
    except FileNotFoundError:
        pass
    except OSError:
        return False
    return True
