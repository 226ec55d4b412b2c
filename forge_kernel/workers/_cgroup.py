"""A pids cgroup around each agent's sandbox: how many processes and threads an untrusted agent may have at once.

Forge makes a child of its own cgroup in the pids hierarchy (cgroup v1, or v2 where its own cgroup hands the pids
controller down), sets ``pids.max``, starts the agent's sandbox in it and, when the agent is stopped, kills what is
left in it and removes it. Where no such cgroup can be made (typically: not root), the number is not bounded and
forge says so (``cap_problem``).
"""
from __future__ import annotations

import os
import signal
import time
from functools import cache
from itertools import count
from pathlib import Path

REMOVE_SECONDS = 2.0
"""How long the processes killed in a cgroup may take to go before it is left behind."""
_names = count()


def pids_folder(mountinfo: str, cgroups: str) -> tuple[Path | None, str]:
    """This process's cgroup folder of the pids controller, from ``/proc/self/mountinfo`` and
    ``/proc/self/cgroup``, and its version (``v1`` or ``v2``); None when there is none."""
    own = {}
    for line in cgroups.splitlines():
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            own["v2"] = path
        elif "pids" in controllers.split(","):
            own["v1"] = path
    for line in mountinfo.splitlines():
        before, _, after = line.partition(" - ")
        fields, (fstype, _, options) = before.split(), after.split(" ", 2)
        version = "v1" if fstype == "cgroup" and "pids" in options.split(",") else "v2" if fstype == "cgroup2" else None
        if version and version in own:
            root, mount = fields[3], fields[4]
            relative = os.path.relpath(own[version], root)
            if relative.startswith(".."):  # forge's cgroup is outside what this mount shows
                continue
            if version == "v1" or "pids" in read(Path(mount, relative, "cgroup.subtree_control")).split():
                return Path(mount, relative).resolve(), version
    return None, ""


def read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


@cache
def parent_folder() -> tuple[Path | None, str | None]:
    """Where forge makes its agents' cgroups, or None and why it cannot (probed once per process)."""
    folder, _ = pids_folder(read(Path("/proc/self/mountinfo")), read(Path("/proc/self/cgroup")))
    if folder is None:
        return None, "no pids cgroup controller is handed to forge here"
    try:
        probe = ProcessCap(1, folder)
    except OSError as exc:
        return None, f"cannot make a pids cgroup in {folder} ({exc.strerror})"
    probe.remove()
    for left in folder.glob("forge-*-*"):  # of a forge that was killed: empty once its sandboxes died with it
        if not Path("/proc", left.name.split("-")[1]).exists():
            try:
                left.rmdir()
            except OSError:
                pass
    return folder, None


def cap_problem() -> str | None:
    """Why agents' process counts cannot be bounded here, or None when they can."""
    return parent_folder()[1]


class ProcessCap:
    """One agent's pids cgroup, made with ``pids.max`` = ``most``; ``prefix()`` starts a command in it."""

    def __init__(self, most: int, parent: Path | None = None):
        self.folder = (parent or parent_folder()[0]) / f"forge-{os.getpid()}-{next(_names)}"
        self.folder.mkdir()
        try:
            (self.folder / "pids.max").write_text(str(most))
        except OSError:
            self.folder.rmdir()
            raise

    def prefix(self) -> list[str]:
        """A command prefix that moves the command into the cgroup before it runs."""
        return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', str(self.folder / "cgroup.procs")]

    def remove(self) -> None:
        """Kill every process still in the cgroup (a fork that escaped its process group included) and remove it;
        left behind, empty of anything alive, if its processes take longer than ``REMOVE_SECONDS`` to go."""
        deadline = time.monotonic() + REMOVE_SECONDS
        while True:
            for pid in read(self.folder / "cgroup.procs").split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
            try:
                self.folder.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:  # busy: processes on their way out
                if time.monotonic() > deadline:
                    return
                time.sleep(0.01)
