"""The sandbox of an untrusted agent's worker processes, and what each mode guarantees.

- ``namespace`` (the default): bubblewrap with new user, pid, ipc and uts namespaces, every capability dropped,
  a read-only filesystem view that holds the system, the Python installation, forge_kernel and the agent's own
  module folder, and nothing else (no ``verifiers/``, no task packages, no run folder, no home folder), a fresh
  ``/tmp`` and ``/dev/shm`` of bounded size (every other folder read-only); the harness's processes are
  invisible. The network is the machine's (an agent calls its model).
- ``strict``: ``namespace`` plus a network namespace of its own: no address is reachable but the channel to the
  harness and the endpoints named with ``--allow-endpoint HOST:PORT`` (relayed by the harness).
- ``process``: separate worker processes only, no filesystem or network confinement; used where bubblewrap
  cannot run (forge says so in one line and the manifest records it).

In every mode the agent talks to the harness only through its socket, the harness owns the record, the EHR, the
policy and the budgets, and a crash, a hang or a blocking call ends only the agent's own trial. Of the harness's
environment the agent gets ``KEPT_ENV`` and the variables named with ``--agent-env``, nothing else. Memory: each
agent process may allocate at most ``memory_mb`` (``--agent-memory``; past it the allocation raises MemoryError
in the agent), and where util-linux's ``choom`` exists the kernel's out-of-memory killer takes agent processes
before any other (``oom_score_adj`` 1000; an agent can bring it back to the harness's 0, never below, and not at
all when forge runs with CAP_SYS_RESOURCE). Where forge can make cgroups (``_cgroup``), all of an agent's
processes together hold at most ``memory_mb`` too (past it the kernel ends one of them), and they are at most
``processes`` processes and threads at once, its sandbox included (``--agent-processes``; a fork past it fails in
the agent). Where it cannot, forge says so; a hard bound is then a memory cgroup around forge (README: trust model).
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ._cgroup import problem as problem_of
from ._egress import parse_endpoint

MODES = ("namespace", "strict", "process")
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
KERNEL_PACKAGE = Path(__file__).resolve().parents[1]
"""forge_kernel itself: the worker runs its client code."""
MEMORY_MB = 4096
"""The default of the most memory one agent process may allocate."""
PROCESSES = 4096
"""The default of the most processes and threads one agent may have at once (its workers and sandbox included)."""
OOM_FIRST = 1000
"""The ``oom_score_adj`` of agent processes: the out-of-memory killer's first choice."""
KEPT_ENV = ("PATH", "HOME", "LANG", "LANGUAGE", "TZ")
"""The harness's environment variables every agent gets (with the ``LC_*`` ones); any other only when named with
``--agent-env``: an agent never sees the user's other keys and tokens."""


@cache
def bwrap_problem() -> str | None:
    """Why bubblewrap cannot make a sandbox on this machine, or None when it can (probed once per process)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed"
    probe = [bwrap, "--unshare-user", "--unshare-pid", "--unshare-net", "--ro-bind", "/", "/", "--proc", "/proc",
             "--dev", "/dev", "--size", "1048576", "--tmpfs", "/tmp", "--remount-ro", "/dev", "--cap-drop", "ALL",
             "true"]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap does not start ({exc})"
    if done.returncode != 0:
        return f"bwrap cannot create namespaces here ({(done.stderr.strip().splitlines() or ['?'])[-1]})"
    return None


def below_harness() -> list[str]:
    """A command prefix that runs agents below the harness: it serves every agent's calls, so an agent that wakes
    up must not preempt it (nice 10, and where chrt exists the batch scheduling class), which a sandboxed agent has
    no capability to undo; and when memory runs out the kernel ends agent processes first (where choom exists)."""
    batch = ["chrt", "--batch", "0"] if shutil.which("chrt") else []
    oom = ["choom", "-n", str(OOM_FIRST), "--"] if shutil.which("choom") else []
    return [*oom, *batch, *(["nice", "-n", "10"] if shutil.which("nice") else [])]


def agent_locations(spec: str) -> list[Path]:
    """Where the top-level module of ``module:attribute`` lives, found without running any of its code."""
    if ":" not in spec:
        return []
    top = spec.partition(":")[0].split(".")[0]
    try:
        found = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return []
    if found is None:
        return []
    if found.submodule_search_locations:
        return [Path(p) for p in found.submodule_search_locations]
    return [Path(found.origin)] if found.origin and os.path.exists(found.origin) else []


def python_roots() -> list[Path]:
    """The Python installation: prefixes and the site folders on sys.path."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    roots.update(p for p in sys.path if p.endswith(("site-packages", "dist-packages")) and os.path.isdir(p))
    return [Path(p) for p in roots]


def inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


@dataclass(frozen=True)
class Sandbox:
    """How an untrusted agent's workers are confined; ``hidden`` paths are never visible to them."""

    mode: str = "namespace"
    hidden: tuple[str, ...] = ()
    """The run folder, the task packages and the hidden halves (blanked wherever they fall inside the view)."""
    endpoints: tuple[str, ...] = ()
    """``host:port`` an agent may reach in ``strict`` mode."""
    memory_mb: int = MEMORY_MB
    """The most memory one agent process may allocate, and all of them together where ``memory_whole``; each of the
    sandbox's ``/tmp`` and ``/dev/shm`` holds at most a quarter of it."""
    env: tuple[str, ...] = ()
    """Names of the harness's environment variables the agents get besides ``KEPT_ENV`` (a model's API key)."""
    processes: int | None = None
    """The most processes and threads one agent may have at once (a pids cgroup); None: not bounded."""
    memory_whole: bool = False
    """``memory_mb`` bounds all of an agent's processes together (a memory cgroup), not only each one."""

    def cgroup_limits(self) -> dict[str, int]:
        """The limits of the cgroups an agent's sandbox starts in, by controller (none where forge cannot make
        them)."""
        limits = {} if self.processes is None else {"pids": self.processes}
        return limits | ({"memory": self.memory_mb * 1024 * 1024} if self.memory_whole else {})

    @property
    def egress(self) -> bool:
        """Whether the agent gets a relay to its allowed endpoints (strict mode with endpoints)."""
        return self.mode == "strict" and bool(self.endpoints)

    def command(self, spec: str, control_fd: int, egress_fd: int | None = None, hosts: str | None = None) -> list[str]:
        """The command line that starts an agent's zygote in this sandbox; ``hosts`` is the sandbox's /etc/hosts
        file and ``egress_fd`` the relay's control socket (strict mode with endpoints)."""
        python = [sys.executable, "-m", "forge_kernel.workers.zygote", spec, str(control_fd), str(self.memory_mb)]
        if egress_fd is not None:
            python += [str(egress_fd), ",".join(self.endpoints)]
        if self.mode == "process":
            return [*below_harness(), *python]
        return [*below_harness(), *self.bwrap_args(spec, hosts), "--", *python]

    def environment(self) -> dict[str, str]:
        """The zygote's environment: the harness's ``KEPT_ENV``, ``LC_*`` and ``env`` variables, and its module
        search path (so ``module:attribute`` imports there as it does here; inside a sandbox only the agent's own
        folder of it is visible)."""
        kept = {k: v for k, v in os.environ.items() if k in KEPT_ENV or k.startswith("LC_") or k in self.env}
        return {**kept, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))}

    def bwrap_args(self, spec: str, hosts: str | None = None) -> list[str]:
        args = [shutil.which("bwrap") or "bwrap", "--unshare-user", "--uid", "65534", "--gid", "65534",
                "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--hostname", "sandbox",
                "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
        if self.mode == "strict":
            args.append("--unshare-net")
        if self.egress and any(parse_endpoint(e)[1] < 1024 for e in self.endpoints):
            args += ["--cap-add", "CAP_NET_BIND_SERVICE"]  # the relay listens at the endpoint's own port
        for path in SYSTEM_PATHS:
            if os.path.islink(path):
                args += ["--symlink", os.readlink(path), path]
            elif os.path.isdir(path):
                args += ["--ro-bind", path, path]
        if hosts:
            args += ["--ro-bind", hosts, "/etc/hosts"]
        scratch = str(self.memory_mb * 1024 * 1024 // 4)
        args += ["--proc", "/proc", "--dev", "/dev", "--size", scratch, "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
                 "--size", scratch, "--tmpfs", "/tmp", "--setenv", "HOME", "/tmp", "--chdir", "/tmp"]
        roots = [*python_roots(), KERNEL_PACKAGE, *agent_locations(spec)]
        visible: list[Path] = []
        for root in sorted({Path(os.path.realpath(r)) for r in roots}, key=lambda p: len(p.parts)):
            if not any(inside(root, v) for v in visible):
                visible.append(root)
                args += ["--ro-bind", str(root), str(root)]
        for root in roots:  # a root reached through a symlink keeps its name
            alias, real = Path(os.path.abspath(root)), os.path.realpath(root)
            if str(alias) != real and not any(inside(alias, v) for v in visible):
                args += ["--symlink", real, str(alias)]
        for hidden in sorted({Path(os.path.realpath(h)) for h in self.hidden}):
            if any(inside(hidden, v) for v in visible) and hidden.is_dir():
                args += ["--tmpfs", str(hidden), "--remount-ro", str(hidden)]
        return args


def choose(requested: str, hidden: tuple[str, ...] = (), endpoints: tuple[str, ...] = (),
           memory_mb: int = MEMORY_MB, env: tuple[str, ...] = (),
           processes: int = PROCESSES) -> tuple[Sandbox, str | None]:
    """The sandbox for a run and, when it is weaker than asked, a notice saying so (a line for each weakness)."""
    if requested not in MODES:
        raise ValueError(f"unknown sandbox mode {requested!r} (choose {', '.join(MODES)})")
    for endpoint in endpoints:
        parse_endpoint(endpoint)
    if endpoints and requested != "strict":
        raise ValueError("--allow-endpoint applies to --sandbox strict only (the other modes keep the network)")
    problem = None if requested == "process" else bwrap_problem()
    if problem is not None and requested == "strict":
        raise RuntimeError(f"--sandbox strict needs bubblewrap: {problem}")
    notices = [] if problem is None else [
        f"forge: {problem}; untrusted agents run as separate processes without a filesystem or network sandbox "
        "(recorded in the run manifest). Install bubblewrap for the namespace sandbox."]
    missing = {c: why for c in ("pids", "memory") if (why := problem_of(c))}
    if missing:
        weaker = [*(["not bounded in number"] if "pids" in missing else []),
                  *(["bounded in memory one by one, not together"] if "memory" in missing else [])]
        notices.append(f"forge: {'; '.join(dict.fromkeys(missing.values()))}; an untrusted agent's processes are "
                       f"{' and '.join(weaker)} (recorded in the run manifest; README: trust model).")
    mode = requested if problem is None else "process"
    sandbox = Sandbox(mode, hidden, endpoints, memory_mb, env, None if "pids" in missing else processes,
                      "memory" not in missing)
    return sandbox, "\n".join(notices) or None
