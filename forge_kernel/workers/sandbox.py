"""The sandbox of an untrusted agent's worker processes, and what each mode guarantees.

- ``namespace`` (the default): bubblewrap with new user, pid, ipc, uts and network namespaces, every capability
  dropped, a read-only view that holds the system, a minimal ``/etc`` (``ETC_KEPT`` and ``ETC_WRITTEN``: no
  ``shadow``, no keys), the Python installation, forge_kernel and the agent's own module folder, and nothing else
  (no ``verifiers/``, no task packages, no run folder, no home folder), a fresh ``/tmp`` and ``/dev/shm`` of
  bounded size (every other folder read-only); the harness's processes are invisible. The agent is uid 65534
  inside, and outside it is the user who runs forge, or nobody where that is root (``_launch``): root-only files
  stay closed. Its network is the harness's relay (``_egress``): the network beyond this machine through an HTTP
  proxy, and a service of this machine (a local model server) only where ``--allow-endpoint HOST:PORT`` names it.
- ``strict``: ``namespace`` with no way out but the endpoints ``--allow-endpoint`` names.
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
the agent). Where it cannot, forge says so; a hard bound is then a memory cgroup around forge (docs/trust-model.md).
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ._cgroup import problem as problem_of
from ._egress import hosts_file, listen_addresses, parse_endpoint, proxy_environment
from ._launch import AGENT_UID, Launch

MODES = ("namespace", "strict", "process")
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_KEPT = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "timezone",
    "alternatives",
    "mime.types",
    "os-release",
    "ssl/certs",
    "ssl/openssl.cnf",
    "ca-certificates",
    "pki/tls/certs",
    "pki/tls/openssl.cnf",
    "pki/ca-trust/extracted",
)
"""The machine's ``/etc`` entries an agent's Python and its libraries read (the dynamic loader, the time zone,
TLS certificates); nothing else of ``/etc`` is in the view: no ``shadow``, no keys, no host names."""
ETC_WRITTEN = {
    "passwd": f"root:x:0:0:root:/:/usr/sbin/nologin\nagent:x:{AGENT_UID}:{AGENT_UID}:agent:/tmp:/usr/sbin/nologin\n",
    "group": f"root:x:0:\nagent:x:{AGENT_UID}:\n",
    "nsswitch.conf": "passwd: files\ngroup: files\nhosts: files\n",
}
"""``/etc`` files of the sandbox that forge writes (``hosts`` too, from the endpoints)."""
LLM = "llm:"
"""The ``--agent`` prefix of a model's config file (``forge_kernel.agents.llm``)."""
KERNEL_PACKAGE = Path(__file__).resolve().parents[1]
"""forge_kernel itself: the worker runs its client code."""
MEMORY_MB = 4096
"""The default of the most memory one agent process may allocate."""
PROCESSES = 4096
"""The default of the most processes and threads one agent may have at once (its workers and sandbox included)."""
OOM_FIRST = 1000
"""The ``oom_score_adj`` of agent processes: the out-of-memory killer's first choice."""
MCP_PREFIX = "mcp:"
"""``--agent mcp:COMMAND``: an agent that is a program of its own, speaking MCP on its stdin and stdout."""
KEPT_ENV = ("PATH", "HOME", "LANG", "LANGUAGE", "TZ")
"""The harness's environment variables every agent gets (with the ``LC_*`` ones); any other only when named with
``--agent-env``: an agent never sees the user's other keys and tokens."""


@cache
def bwrap_problem() -> str | None:
    """Why bubblewrap cannot make a sandbox on this machine, or None when it can (probed once per process)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed"
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        return "setpriv (util-linux) is not installed, which forge needs to run an agent as nobody when it runs as root"
    probe = [
        bwrap,
        "--unshare-user",
        "--unshare-pid",
        "--unshare-net",
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--size",
        "1048576",
        "--tmpfs",
        "/tmp",
        "--remount-ro",
        "/dev",
        "--cap-drop",
        "ALL",
        "true",
    ]
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
    """Where the agent's own code lives: the top-level module of ``module:attribute``, found without running any of
    its code, the config file of ``llm:PATH``, or the folders of an ``mcp:COMMAND`` program (``program_locations``)."""
    if spec.startswith(LLM):
        return [Path(spec.removeprefix(LLM)).expanduser().resolve()]
    if spec.startswith(MCP_PREFIX):
        return program_locations(program(spec))
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


def located(spec: str) -> str:
    """The ``--agent`` entry as the sandbox is given it: an ``llm:`` config by its absolute path (the sandbox's
    working folder is a folder of its own)."""
    return LLM + str(agent_locations(spec)[0]) if spec.startswith(LLM) else spec


def program(spec: str) -> list[str]:
    """The command line of an ``mcp:COMMAND`` entry as it is run: split as a shell would, the program found on the
    ``PATH`` and its script (the first argument that names a file) made absolute, since the sandbox starts it in its
    own ``/tmp``. ValueError when the command cannot be split or names no program."""
    argv = shlex.split(spec.removeprefix(MCP_PREFIX))
    found = shutil.which(argv[0]) if argv else None
    if found is None:
        raise ValueError(f"no program {argv[0]!r} on the PATH" if argv else "names no command")
    script = script_of(argv)
    return [os.path.abspath(found), *(os.path.abspath(a) if a is script else a for a in argv[1:])]


def script_of(argv: list[str]) -> str | None:
    """The script of a command line: the first argument after the program that names a file."""
    return next((arg for arg in argv[1:] if os.path.isfile(arg)), None)


def program_locations(argv: list[str]) -> list[Path]:
    """The folders an MCP agent's sandbox shows besides the system and Python: its script's, and its program's
    where that is not a system folder."""
    script = script_of(argv)
    folders = [Path(argv[0]).parent, *([Path(script).parent] if script else [])]
    return [f for f in folders if not any(inside(f, Path(p)) for p in SYSTEM_PATHS)]


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
    """``host:port`` the agent may reach although they are on this machine (``namespace``), or at all (``strict``)."""
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
        """Whether the agent's connections go through the harness (a network namespace of its own)."""
        return self.mode != "process"

    def launch(self) -> Launch:
        """What one start of this sandbox hands to bubblewrap besides its arguments."""
        return Launch(as_root=self.mode != "process" and os.geteuid() == 0)

    def command(self, spec: str, control_fd: int, launch: Launch, egress_fd: int | None = None) -> list[str]:
        """The command line that starts an agent's zygote in this sandbox; ``egress_fd`` is the relay's control
        socket."""
        zygote = [
            sys.executable,
            "-m",
            "forge_kernel.workers.zygote",
            located(spec),
            str(control_fd),
            *self.first_args(egress_fd),
        ]
        return self.wrap(spec, zygote, launch)

    def program_command(self, spec: str, argv: list[str], launch: Launch, egress_fd: int | None = None) -> list[str]:
        """The command line that runs an ``mcp:COMMAND`` agent's program (``argv``) in this sandbox, after its
        memory is bounded and its relay started (``workers._exec``)."""
        return self.wrap(
            spec, [sys.executable, "-m", "forge_kernel.workers._exec", *self.first_args(egress_fd), "--", *argv], launch
        )

    def first_args(self, egress_fd: int | None) -> list[str]:
        """What the sandbox's first Python process is told: the memory bound, and the relay's control socket and
        the endpoints it listens for."""
        return [str(self.memory_mb), *([] if egress_fd is None else [str(egress_fd), ",".join(self.endpoints)])]

    def wrap(self, spec: str, inner: list[str], launch: Launch) -> list[str]:
        """``inner`` run in this sandbox, below the harness (``below_harness``)."""
        if self.mode == "process":
            return [*below_harness(), *inner]
        caps = (
            ["net_bind_service"] if any(where and where[1] < 1024 for where in listen_addresses(self.endpoints)) else []
        )
        return [*below_harness(), *self.bwrap_args(spec, launch, caps), "--", *launch.become_agent(caps), *inner]

    def environment(self) -> dict[str, str]:
        """The zygote's environment: the harness's ``KEPT_ENV``, ``LC_*`` and ``env`` variables, its module search
        path with the current folder as a path (so ``module:attribute`` imports there as it does here, a notebook's
        own module too; inside a sandbox only the agent's own folder of it is visible), and in a sandbox the proxy variables of its way out."""
        kept = {k: v for k, v in os.environ.items() if k in KEPT_ENV or k.startswith("LC_") or k in self.env}
        kept["PYTHONPATH"] = os.pathsep.join(
            os.path.abspath(p or os.curdir) for p in sys.path if os.path.isdir(p or ".")
        )
        return kept | (proxy_environment(self.endpoints) if self.egress else {})

    def roots(self, spec: str) -> list[Path]:
        """The folders the view shows besides the system's, each once (none inside another), as real paths."""
        visible: list[Path] = []
        found = [*python_roots(), KERNEL_PACKAGE, *agent_locations(spec)]
        for root in sorted({Path(os.path.realpath(r)) for r in found}, key=lambda p: len(p.parts)):
            if not any(inside(root, v) for v in visible):
                visible.append(root)
        return visible

    def bwrap_args(self, spec: str, launch: Launch, caps: Sequence[str] = ()) -> list[str]:
        """bubblewrap's options: the namespaces, and a read-only view of the system, a minimal ``/etc``, the
        Python installation, forge_kernel and the agent's own module, with the hidden paths blanked."""
        args = [
            shutil.which("bwrap") or "bwrap",
            *launch.user_args(),
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--unshare-net",
            "--hostname",
            "sandbox",
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            *(a for cap in [*caps, *launch.setup_caps()] for a in ("--cap-add", f"CAP_{cap.upper()}")),
        ]
        for path in SYSTEM_PATHS:
            if os.path.islink(path):
                args += ["--symlink", os.readlink(path), path]
            elif os.path.isdir(path):
                args += ["--ro-bind", path, path]
        args += ["--perms", "0755", "--dir", "/etc"]
        for name in ETC_KEPT:
            if os.path.exists(f"/etc/{name}"):
                args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
        for name, text in {**ETC_WRITTEN, "hosts": hosts_file(self.endpoints)}.items():
            args += ["--perms", "0644", "--ro-bind-data", launch.data(text), f"/etc/{name}"]
        scratch = str(self.memory_mb * 1024 * 1024 // 4)
        args += [
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--size",
            scratch,
            "--perms",
            "1777",
            "--tmpfs",
            "/dev/shm",
            "--remount-ro",
            "/dev",
            "--size",
            scratch,
            "--perms",
            "1777",
            "--tmpfs",
            "/tmp",
            "--setenv",
            "HOME",
            "/tmp",
            "--chdir",
            "/tmp",
        ]
        visible = self.roots(spec)
        made = {Path("/"), *map(Path, SYSTEM_PATHS), Path("/etc")}
        for root in visible:  # its parents, which bubblewrap would make readable by their owner alone
            for parent in reversed(root.parents):
                if parent not in made and not any(inside(parent, v) for v in visible):
                    made.add(parent)
                    args += ["--perms", "0755", "--dir", str(parent)]
            args += ["--ro-bind", str(root), str(root)]
        for root in [*python_roots(), KERNEL_PACKAGE, *agent_locations(spec)]:  # through a symlink: keeps its name
            alias, real = Path(os.path.abspath(root)), os.path.realpath(root)
            if str(alias) != real and not any(inside(alias, v) for v in visible):
                args += ["--symlink", real, str(alias)]
        for hidden in sorted({Path(os.path.realpath(h)) for h in self.hidden}):
            if any(inside(hidden, v) for v in visible) and hidden.is_dir():
                args += ["--tmpfs", str(hidden), "--remount-ro", str(hidden)]
        return args

    def unreadable(self, spec: str) -> Path | None:
        """A folder of the view that the agent's user cannot read where forge runs as root (it is nobody), or
        None."""
        if self.mode == "process" or os.geteuid() != 0:
            return None
        for root in self.roots(spec):
            need = 0o005 if root.is_dir() else 0o004
            if root.stat().st_mode & need != need:
                return root
        return None


def choose(
    requested: str,
    hidden: tuple[str, ...] = (),
    endpoints: tuple[str, ...] = (),
    memory_mb: int = MEMORY_MB,
    env: tuple[str, ...] = (),
    processes: int = PROCESSES,
) -> tuple[Sandbox, str | None]:
    """The sandbox for a run and, when it is weaker than asked, a notice saying so (a line for each weakness)."""
    if requested not in MODES:
        raise ValueError(f"unknown sandbox mode {requested!r} (choose {', '.join(MODES)})")
    for endpoint in endpoints:
        parse_endpoint(endpoint)
    if endpoints and requested == "process":
        raise ValueError(
            "--allow-endpoint applies to the namespace and strict sandboxes (the process mode keeps "
            "the machine's network)"
        )
    problem = None if requested == "process" else bwrap_problem()
    if problem is not None and requested == "strict":
        raise RuntimeError(f"--sandbox strict needs bubblewrap: {problem}")
    notices = (
        []
        if problem is None
        else [
            f"forge: {problem}; untrusted agents run as separate processes without a filesystem or network sandbox "
            "(recorded in the run manifest). Install bubblewrap for the namespace sandbox."
        ]
    )
    missing = {c: why for c in ("pids", "memory") if (why := problem_of(c))}
    if missing:
        weaker = [
            *(["not bounded in number"] if "pids" in missing else []),
            *(["bounded in memory one by one, not together"] if "memory" in missing else []),
        ]
        notices.append(
            f"forge: {'; '.join(dict.fromkeys(missing.values()))}; an untrusted agent's processes are "
            f"{' and '.join(weaker)} (recorded in the run manifest; docs/trust-model.md)."
        )
    mode = requested if problem is None else "process"
    sandbox = Sandbox(
        mode, hidden, endpoints, memory_mb, env, None if "pids" in missing else processes, "memory" not in missing
    )
    return sandbox, "\n".join(notices) or None
