"""The wire between harness and workers, the sandbox modes and their network, and pid checks (SYNTHETIC data)."""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import threading
import time

import pytest

from forge_kernel.agents import AgentTask
from forge_kernel.engine import RunSpec, execute
from forge_kernel.spec import AgentError, StoreError, UsageError
from forge_kernel.store import load_trials, open_run
from forge_kernel.workers import (
    MEMORY_MB,
    PROCESSES,
    IsolatedAgent,
    Sandbox,
    _cgroup as cgroup_module,
    _zygote_process as zygote_process,
    choose,
    sandbox as sandbox_module,
)
from forge_kernel.workers._cgroup import AgentCgroups, own_folder
from forge_kernel.workers._launch import Launch
from forge_kernel.workers._link import Conversation, Link
from forge_kernel.workers._output import AgentOutput, Allowance
from forge_kernel.workers._processes import sandbox_pid
from forge_kernel.workers._worker import Running, StallClock
from forge_kernel.workers.wire import MAX_DEPTH, Frames, WireError, encode, json_args
from tests.helpers import ROOT, delete_trial, needs_bwrap, needs_cgroups
from tests.tools.test_tools import make_session

HOSTILE_DIR = ROOT / "tests" / "hostile"
PACKAGE = ROOT / "task_packages" / "superclue" / "SC-MED-GASTRIC-ULCER"


def frame(body: bytes) -> bytes:
    return len(body).to_bytes(4, "big") + body


# --- the wire -------------------------------------------------------------------------------------------------


def test_frames_split_a_stream_however_it_arrives():
    data = encode({"op": "call", "id": 1}) + encode({"op": "charge", "usd": 0.1})
    frames = Frames()
    got = [m for i in range(len(data)) for m in frames.feed(data[i : i + 1])]
    assert got == [{"op": "call", "id": 1}, {"op": "charge", "usd": 0.1}]


def test_an_oversized_frame_is_refused_before_its_body_arrives():
    with pytest.raises(WireError, match="exceeds the 1024-byte cap"):
        Frames(max_bytes=1024).feed((2048).to_bytes(4, "big"))


@pytest.mark.parametrize(
    "body, why",
    [
        (b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), "must be a JSON object"),
        (b'{"op":"call","args":' + b"[" * MAX_DEPTH + b"]" * MAX_DEPTH + b"}", f"nested deeper than {MAX_DEPTH}"),
        (b'{"op":"call","args":' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested too deeply"),
        (b'{"op":"charge","usd":NaN}', "not JSON"),
        (b'{"op":"call"', "not JSON"),
        (b'"just a string"', "must be a JSON object"),
        (b'{"no_op":1}', "must be a JSON object with an op"),
        (b"\xff\xfe", "not JSON"),
    ],
)
def test_what_the_wire_refuses(body, why):
    with pytest.raises(WireError, match=why):
        Frames().feed(frame(body))


def test_an_agents_output_is_shown_line_by_line_up_to_its_allowance(capsys):
    allowance = Allowance(2048)
    allowance.left = 20  # 2 KiB, of which 20 bytes are left
    first, second = AgentOutput("a:B", allowance), AgentOutput("a:B", allowance)  # the zygote restarted
    for chunk in (b"one\ntw", b"o\n"):
        first.data_received(chunk)
    first.connection_lost(None)
    second.data_received(b"x" * 100)  # no line break: shown cut, once the allowance is reached
    second.data_received(b"more\n")
    assert capsys.readouterr().err.splitlines() == [
        "a:B: one",
        "a:B: two",
        "a:B: " + "x" * 12,
        "forge: a:B has printed 2 KiB; the rest of its output is not shown",
    ]


def test_an_agent_cannot_print_over_its_name_or_forges_lines(capsys):
    output = AgentOutput("a:B", Allowance())
    output.data_received(b"\rforge: gate GREEN\x1b[2K\tdone\n")
    assert capsys.readouterr().err == "a:B: \\x0dforge: gate GREEN\\x1b[2K\tdone\n"


def cycle() -> dict:
    loop = {}
    loop["a"] = loop
    return loop


@pytest.mark.parametrize(
    "args, problem",
    [
        ({"mrn": b"MRN-1"}, "args.mrn: bytes is not a JSON value"),
        ({"drugs": ["a", {"b"}]}, "args.drugs.1: set is not a JSON value"),
        ({"weight_kg": float("-inf")}, "args.weight_kg: float -inf is not a JSON value"),
        ({"criteria": [{(1, 2): "met"}]}, "args.criteria.0: tuple key is not a JSON value"),
        ({"x": cycle()}, "args.x" + ".a" * (MAX_DEPTH - 2) + f": nested deeper than {MAX_DEPTH}"),
    ],
)
def test_call_arguments_json_cannot_carry_are_named_never_written_as_strings(args, problem):
    """What a client tells the harness to refuse, with a stand-in that fits in a frame; the frames' encoder writes
    no odd value as a string either."""
    text, refused = json_args(args)
    assert refused == problem
    assert Frames().feed(frame(f'{{"op":"call","args":{text}}}'.encode()))
    with pytest.raises((TypeError, ValueError)):
        encode({"op": "call", "args": args})


def test_call_arguments_json_carries_go_as_json_writes_them():
    assert json_args({"drugs": ("a", "b"), "n": {1: None}}) == ('{"drugs":["a","b"],"n":{"1":null}}', None)


def test_a_workers_refusal_only_refuses_its_own_call():
    """The harness takes a worker's word that a call is refused (it can spoil only that worker's trial) and runs
    no tool for it; a refusal that is not text breaks the protocol."""

    class Transport:
        def write(self, data):
            pass

        def is_closing(self):
            return False

    async def check():
        link = Link(lambda link: None)
        link.connection_made(Transport())
        session = make_session()
        conversation = Conversation(link, 1, session)
        conversation.on_call(
            {"op": "call", "id": 1, "tool": "patient_search", "args": {"mrn": "MRN-1"}, "refused": "made up"}
        )
        (event,) = session.events
        assert (event.ok, event.error, event.result) == (False, {"code": "invalid_args", "message": "made up"}, None)
        conversation.on_call({"op": "call", "id": 2, "tool": "patient_search", "args": {"mrn": "MRN-1"}, "refused": 1})
        assert conversation.done.result()[:2] == (
            "agent_error",
            "protocol: a call needs an integer id, a tool name, an args object and a refusal, if any, as text",
        )
        assert len(session.events) == 1

    asyncio.run(check())


def test_nesting_up_to_the_cap_passes():
    nested = b"[" * (MAX_DEPTH - 2) + b"]" * (MAX_DEPTH - 2)
    assert Frames().feed(frame(b'{"op":"call","args":{"x":' + nested + b"}}"))[0]["op"] == "call"


# --- sandbox modes --------------------------------------------------------------------------------------------


@pytest.fixture
def cgroups_at_hand(monkeypatch):
    """As where forge can make pids and memory cgroups (nothing is made while choosing)."""
    monkeypatch.setattr(sandbox_module, "problem_of", lambda controller: None)


def test_choosing_a_mode(cgroups_at_hand):
    with pytest.raises(ValueError, match="unknown sandbox mode"):
        choose("chroot")
    with pytest.raises(ValueError, match="applies to the namespace and strict sandboxes"):
        choose("process", endpoints=("127.0.0.1:8000",))
    with pytest.raises(ValueError, match="is not HOST:PORT"):
        choose("strict", endpoints=("127.0.0.1",))
    assert choose("process") == (Sandbox("process", processes=PROCESSES, memory_whole=True), None)


def test_without_bubblewrap_forge_says_so_and_falls_back(monkeypatch, cgroups_at_hand):
    sandbox_module.bwrap_problem.cache_clear()
    monkeypatch.setattr(sandbox_module.shutil, "which", lambda name: None)
    try:
        sandbox, notice = choose("namespace")
        assert sandbox.mode == "process" and "bubblewrap (bwrap) is not installed" in notice
        assert len(notice.splitlines()) == 1
        with pytest.raises(RuntimeError, match="--sandbox strict needs bubblewrap"):
            choose("strict")
    finally:
        sandbox_module.bwrap_problem.cache_clear()


@pytest.mark.parametrize(
    "missing, processes, whole, weaker",
    [
        ({"pids", "memory"}, None, False, "not bounded in number and bounded in memory one by one, not together"),
        ({"pids"}, None, True, "not bounded in number"),
        ({"memory"}, 64, False, "bounded in memory one by one, not together"),
    ],
)
def test_where_a_cgroup_cannot_be_made_forge_says_so_in_one_line(monkeypatch, missing, processes, whole, weaker):
    monkeypatch.setattr(
        sandbox_module, "problem_of", lambda c: "no cgroup controller is handed to forge here" if c in missing else None
    )
    sandbox, notice = choose("process", processes=64)
    assert (sandbox.processes, sandbox.memory_whole) == (processes, whole)
    assert notice == (
        f"forge: no cgroup controller is handed to forge here; an untrusted agent's processes are "
        f"{weaker} (recorded in the run manifest; docs/trust-model.md)."
    )


MOUNTS = """\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
39 31 0:36 /docker/abc {root}/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / {root}/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / {root}/unified rw,relatime - cgroup2 cgroup2 rw
"""


@pytest.mark.parametrize(
    "controller, cgroups, delegated, expected",
    [
        ("pids", "8:pids:/docker/abc/run\n0::/\n", "", ("pids/run", "v1")),  # v1, the mount's root is the container's
        ("memory", "8:pids:/docker/abc/run\n4:memory:/m\n0::/\n", "", ("memory/m", "v1")),
        ("pids", "8:cpu:/\n0::/forge\n", "cpu pids", ("unified/forge", "v2")),
        ("memory", "8:cpu:/\n0::/forge\n", "memory", ("unified/forge", "v2")),
        ("pids", "8:cpu:/\n0::/forge\n", "cpu memory", (None, "")),  # v2, but pids is not handed down
    ],
)
def test_finding_forges_own_cgroup_of_a_controller(tmp_path, controller, cgroups, delegated, expected):
    (tmp_path / "unified" / "forge").mkdir(parents=True)
    (tmp_path / "unified" / "forge" / "cgroup.subtree_control").write_text(delegated)
    folder, version = own_folder(controller, MOUNTS.format(root=tmp_path), cgroups)
    assert (folder and str(folder.relative_to(tmp_path)), version) == expected


@needs_cgroups
@pytest.mark.parametrize("controller", ["pids", "memory"])
def test_the_cgroups_of_a_killed_forge_are_removed_when_the_next_one_looks(controller):
    parent, version, _ = cgroup_module.parent_folder(controller)
    left = parent / "forge-999999999-0"  # no such process
    left.mkdir()
    try:
        cgroup_module.parent_folder.cache_clear()
        assert cgroup_module.parent_folder(controller) == (parent, version, None) and not left.exists()
    finally:
        if left.exists():
            left.rmdir()


@needs_cgroups
def test_an_agents_cgroups_hold_its_limits_and_are_gone_once_removed():
    cgroups = AgentCgroups({"pids": 64, "memory": 256 << 20})
    folders = cgroups.folders
    try:
        limits = {
            f.name: f.read_text().strip()
            for folder in folders
            for f in folder.iterdir()
            if f.name
            in ("pids.max", "memory.limit_in_bytes", "memory.max", "memory.memsw.limit_in_bytes", "memory.swap.max")
        }
    finally:
        cgroups.remove()
    memory = limits.get("memory.limit_in_bytes", limits.get("memory.max"))
    assert (limits["pids.max"], memory) == ("64", str(256 << 20))
    assert limits.get("memory.memsw.limit_in_bytes", str(256 << 20)) == str(256 << 20)  # no swap past the limit
    assert limits.get("memory.swap.max", "0") == "0"
    assert folders and not any(f.exists() for f in folders)


def test_an_agent_whose_cgroups_cannot_be_made_does_not_start(monkeypatch):
    def refuse(limits):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(zygote_process, "AgentCgroups", refuse)
    with pytest.raises(AgentError, match=r"cannot start: cannot make its cgroups \(Permission denied\)"):
        asyncio.run(IsolatedAgent.start("scripted", Sandbox("process", processes=64)))


GO_ON = (
    ": its results could differ; finish it in a new --out folder, or go on with --accept-sandbox-change "
    "(recorded in the run's manifest)"
)


@needs_cgroups
@pytest.mark.parametrize(
    "controller, field, message",
    [
        (
            "pids",
            "--agent-processes",
            "the run's agents had at most 4096 processes each; here their number cannot be bounded",
        ),
        (
            "memory",
            "--agent-memory",
            "the run's agents were bounded in memory with all their processes together; here "
            "only one process at a time",
        ),
    ],
)
def test_a_resume_with_a_bound_missing_is_refused(tmp_path, monkeypatch, controller, field, message):
    spec = RunSpec(suite=[str(PACKAGE)], agents=["scripted"], trials=1, isolate_reference=True, sandbox="process")
    asyncio.run(execute(spec, tmp_path / "run", progress=False))
    real = sandbox_module.problem_of
    monkeypatch.setattr(sandbox_module, "problem_of", lambda c: "taken out" if c == controller else real(c))
    with pytest.raises(StoreError) as refused:
        asyncio.run(execute(spec, tmp_path / "run", resume=True, progress=False))
    assert (refused.value.field, refused.value.message) == (field, message + GO_ON)


def without_bubblewrap(monkeypatch) -> None:
    monkeypatch.setattr(sandbox_module, "bwrap_problem", lambda: "bubblewrap (bwrap) is not installed")


def stopped_early(spec: RunSpec, out, monkeypatch) -> None:
    """A run made where bubblewrap was missing, its last trial not stored (as if it had been stopped)."""
    with monkeypatch.context() as m:
        without_bubblewrap(m)
        asyncio.run(execute(spec, out, progress=False))
    with sqlite3.connect(out / "run.sqlite") as db:
        last = db.execute("SELECT max(trial_id) FROM trials").fetchone()[0]
        delete_trial(db, last)


@needs_bwrap
def test_agents_that_ran_in_process_resume_whatever_sandbox_is_here_now(tmp_path, monkeypatch):
    """Started where bubblewrap was missing, resumed once it is installed: the trusted agents ran in process
    either way, so nothing that the results rest on changed."""
    spec = RunSpec(suite=[str(PACKAGE)], agents=["scripted", "candidate-v2"], trials=2)
    stopped_early(spec, tmp_path / "run", monkeypatch)
    outcome = asyncio.run(execute(spec, tmp_path / "run", resume=True, progress=False))
    assert (outcome.ran, outcome.skipped) == (1, 3)


@needs_bwrap
def test_an_isolated_agents_run_in_another_sandbox_is_one_line_or_goes_on_recorded(tmp_path, monkeypatch):
    spec = RunSpec(suite=[str(PACKAGE)], agents=["scripted"], trials=2, isolate_reference=True)
    stopped_early(spec, tmp_path / "run", monkeypatch)
    with pytest.raises(StoreError) as refused:
        asyncio.run(execute(spec, tmp_path / "run", resume=True, progress=False))
    assert (refused.value.field, refused.value.message) == (
        "--sandbox",
        "the run's agents were isolated in 'process' mode; here 'namespace' isolates them" + GO_ON,
    )
    outcome = asyncio.run(execute(spec, tmp_path / "run", resume=True, accept_sandbox_change=True, progress=False))
    assert (outcome.ran, outcome.skipped) == (1, 1)
    with open_run(tmp_path / "run") as run:
        assert run.manifest["sandbox"]["mode"] == "namespace"
        assert run.manifest["sandbox_changes"][0]["was"]["mode"] == "process"
        assert re.fullmatch(r"process sandbox then namespace sandbox from \S+", run.isolation["scripted"])
        assert len(run.trials) == 2


def view(sandbox: Sandbox, spec: str) -> list[str]:
    """The sandbox's bubblewrap options, as an ordinary user's forge would give them."""
    launch = Launch(as_root=False)
    try:
        return sandbox.bwrap_args(spec, launch)
    finally:
        launch.close()


def test_the_sandbox_view_leaves_out_what_an_agent_must_not_see():
    args = view(Sandbox("namespace", hidden=(str(ROOT / "verifiers"),)), "hostile_agents:GoldReader")
    bound = [args[i + 1] for i, a in enumerate(args) if a == "--ro-bind"]
    assert str(ROOT / "forge_kernel") in bound
    assert str(ROOT) not in bound and "/" not in bound and "/root" not in bound and "/home" not in bound
    assert "/etc" not in bound and not any(p.startswith(("/etc/shadow", "/etc/ssh", "/etc/ssl/private")) for p in bound)
    assert "--cap-drop" in args and "--unshare-pid" in args and "--unshare-net" in args


def test_the_sandbox_writes_only_to_scratch_folders_of_bounded_size(tmp_path):
    """/tmp and /dev/shm hold a quarter of --agent-memory each; /dev and the blanked hidden paths are read-only."""
    package, hidden = tmp_path / "mine", tmp_path / "mine" / "run"  # a run folder inside the agent's own package
    hidden.mkdir(parents=True)
    (package / "__init__.py").write_text("class Agent: ...\n")
    sys.path.insert(0, str(tmp_path))
    try:
        args = view(Sandbox("namespace", hidden=(str(hidden),), memory_mb=256), "mine:Agent")
    finally:
        sys.path.remove(str(tmp_path))
    mounts = [(args[i - 4 : i], args[i + 1]) for i, a in enumerate(args) if a == "--tmpfs"]
    scratch = ["--size", str(64 * 1024 * 1024), "--perms", "1777"]  # the agent's user may write there, nobody else's
    assert mounts[:2] == [(scratch, "/dev/shm"), (scratch, "/tmp")] and mounts[2][1] == str(hidden)
    read_only = {args[i + 1] for i, a in enumerate(args) if a == "--remount-ro"}
    assert read_only == {"/dev", str(hidden)}


def test_the_cli_defaults_of_agent_memory_and_processes_are_the_sandboxs():
    from forge_kernel.cli._run import run

    defaults = {p.name: p.default for p in run.params}
    assert (defaults["agent_memory"], defaults["agent_processes"]) == (MEMORY_MB, PROCESSES)


class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(f"hello from {self.server.server_port}".encode())

    def log_message(self, *args):
        pass


@pytest.fixture
def two_servers():
    servers = [http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello) for _ in range(2)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield [s.server_port for s in servers]
    for server in servers:
        server.shutdown()


def probe(tmp_path, monkeypatch, urls: list[str], **spec) -> dict:
    monkeypatch.syspath_prepend(str(HOSTILE_DIR))
    monkeypatch.setenv("PROBE_URLS", " ".join(urls))
    out = tmp_path / "run"
    asyncio.run(
        execute(
            RunSpec(
                suite=[str(PACKAGE)], agents=["hostile_agents:NetProbe"], trials=1, agent_env=["PROBE_URLS"], **spec
            ),
            out,
            progress=False,
        )
    )
    return json.loads(load_trials(out).answer[0])


@pytest.fixture(scope="module")
def other_host():
    """A host of the network beyond this machine: a network namespace behind a veth pair, serving Hello at
    198.18.0.2 (a benchmarking range, not this machine's), made with iproute2 as root; the host side is 198.18.0.1.
    Yields the server's address ``host:port``."""
    if os.geteuid() != 0 or not shutil.which("ip"):
        pytest.skip("needs root and iproute2 to make a test host")
    name, tag = f"forge-test-{os.getpid()}", f"{os.getpid() % 100000}"
    steps = [
        ["ip", "netns", "add", name],
        ["ip", "link", "add", f"fh{tag}", "type", "veth", "peer", "name", f"fn{tag}"],
        ["ip", "link", "set", f"fn{tag}", "netns", name],
        ["ip", "addr", "add", "198.18.0.1/30", "dev", f"fh{tag}"],
        ["ip", "link", "set", f"fh{tag}", "up"],
        ["ip", "-n", name, "addr", "add", "198.18.0.2/30", "dev", f"fn{tag}"],
        ["ip", "-n", name, "link", "set", f"fn{tag}", "up"],
        ["ip", "-n", name, "link", "set", "lo", "up"],
    ]
    server = None
    try:
        for step in steps:
            subprocess.run(step, check=True, capture_output=True)
        code = (
            "import http.server, sys; sys.path.insert(0, sys.argv[1]); from test_workers import Hello; "
            "s = http.server.ThreadingHTTPServer(('198.18.0.2', 0), Hello); print(s.server_port, flush=True); "
            "s.serve_forever()"
        )
        server = subprocess.Popen(
            ["ip", "netns", "exec", name, sys.executable, "-c", code, os.path.dirname(os.path.abspath(__file__))],
            stdout=subprocess.PIPE,
            text=True,
        )
        yield f"198.18.0.2:{server.stdout.readline().strip()}"
    finally:
        if server:
            server.kill()
            server.wait()
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


@needs_bwrap
def test_the_default_sandbox_reaches_no_service_of_this_machine(tmp_path, monkeypatch, two_servers):
    """Loopback and this machine's own addresses are out of reach, directly and through the proxy; the proxy says
    why."""
    first, second = two_servers
    urls = [
        f"http://127.0.0.1:{first}/",
        f"http://localhost:{second}/",
        f"via-proxy:http://127.0.0.1:{first}/",
        f"tunnel:http://127.0.0.1:{second}/",
    ]
    seen = probe(tmp_path, monkeypatch, urls)
    assert seen[urls[0]].startswith("unreachable") and seen[urls[1]].startswith("unreachable")
    assert (
        seen[urls[2]] == f"403 forge: 127.0.0.1:{first}: 127.0.0.1 is a loopback address; name it with "
        "--allow-endpoint to reach it"
    )
    assert seen[urls[3]].startswith("unreachable (OSError: Tunnel connection failed: 403 Forbidden")


@needs_bwrap
def test_a_service_of_this_machine_is_reached_when_named(tmp_path, monkeypatch, two_servers):
    """``--allow-endpoint`` names a local model server: reached by its name and address, the other is not."""
    allowed, other = two_servers
    urls = [
        f"http://127.0.0.1:{allowed}/",
        f"http://localhost:{allowed}/",
        f"http://127.0.0.1:{other}/",
        f"via-proxy:http://127.0.0.1:{other}/",
    ]
    seen = probe(tmp_path, monkeypatch, urls, endpoints=[f"localhost:{allowed}"])
    assert seen[urls[0]] == seen[urls[1]] == f"hello from {allowed}"
    assert seen[urls[2]].startswith("unreachable") and seen[urls[3]].startswith("403 ")


@needs_bwrap
def test_the_default_sandbox_reaches_the_network_beyond_this_machine(tmp_path, monkeypatch, other_host):
    """Plain HTTP through the proxy and a CONNECT tunnel (what HTTPS takes) reach another host; the harness dials it,
    and the harness's address on that network is refused like any of this machine's."""
    urls = [f"http://{other_host}/", f"tunnel:http://{other_host}/", "via-proxy:http://198.18.0.1:9/"]
    seen = probe(tmp_path, monkeypatch, urls)
    port = other_host.split(":")[1]
    assert seen[urls[0]] == f"hello from {port}" and seen[urls[1]] == f"200 hello from {port}"
    assert (
        seen[urls[2]] == "403 forge: 198.18.0.1:9: 198.18.0.1 is an address of this machine; name it with "
        "--allow-endpoint to reach it"
    )


@needs_bwrap
def test_strict_reaches_only_the_allowed_endpoints(tmp_path, monkeypatch, two_servers, other_host):
    allowed, other = two_servers
    urls = [
        f"http://127.0.0.1:{allowed}/",
        f"http://localhost:{allowed}/",
        f"http://127.0.0.1:{other}/",
        f"http://{other_host}/",
        f"tunnel:http://{other_host}/",
    ]
    seen = probe(tmp_path, monkeypatch, urls, sandbox="strict", endpoints=[f"127.0.0.1:{allowed}"])
    assert seen[urls[0]] == seen[urls[1]] == f"hello from {allowed}"
    assert seen[urls[2]].startswith("unreachable")
    assert seen[urls[3]] == f"403 forge: {other_host} is not an allowed endpoint (--allow-endpoint)"
    assert seen[urls[4]].startswith("unreachable (OSError: Tunnel connection failed: 403 Forbidden")


def test_an_endpoint_in_the_process_mode_is_one_line(tmp_path):
    with pytest.raises(UsageError) as err:
        asyncio.run(
            execute(
                RunSpec(
                    suite=[str(PACKAGE)], agents=["scripted"], trials=1, sandbox="process", endpoints=["127.0.0.1:1"]
                ),
                tmp_path / "run",
                progress=False,
            )
        )
    assert (err.value.file, err.value.field) == ("--sandbox", "process")
    assert not (tmp_path / "run").exists()


# --- pids -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["process", pytest.param("namespace", marks=needs_bwrap)])
def test_a_pid_the_zygote_reports_is_killed_only_inside_its_sandbox(mode, monkeypatch):
    monkeypatch.syspath_prepend(str(HOSTILE_DIR))

    async def check():
        agent = await IsolatedAgent.start("hostile_agents:Hanger", Sandbox(mode))
        try:
            zygote = agent._zygote.process.pid
            assert sandbox_pid(os.getpid(), zygote, mode) is None  # the harness itself
            assert sandbox_pid(99_999_999, zygote, mode) is None
        finally:
            await agent.aclose()

    asyncio.run(check())


# --- the worker's event loop ----------------------------------------------------------------------------------


def spin(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def one_pass(clock: StallClock, work) -> float:
    """How stuck a trial sees the loop after one pass of it that does ``work``."""
    running = Running(task=None, client=None)
    clock.trials[1] = running
    clock.enter()
    work()
    clock.leave()
    return running.stalled


@pytest.mark.skipif(not os.path.exists("/proc/thread-self/schedstat"), reason="the kernel reports no CPU wait")
def test_a_pass_that_waited_for_a_cpu_is_no_stall_of_the_agents():
    """0.3 s of a loop's pass on a CPU shared with a busy process: only the time it ran counts as the loop stuck.
    A worker is below everything else on the machine; were its waits counted, every trial sharing it would be run
    again and the agent kept to one trial per worker."""
    cpu, before = min(os.sched_getaffinity(0)), os.sched_getaffinity(0)
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        os.sched_setaffinity(hog.pid, {cpu})
        os.sched_setaffinity(0, {cpu})
        waited = one_pass(StallClock(), lambda: spin(0.3))
        counted_whole = one_pass(StallClock(cpu_wait=lambda: 0.0), lambda: spin(0.3))  # the wait not taken out
    finally:
        os.sched_setaffinity(0, before)
        hog.kill()
        hog.wait()
    assert 0.01 < waited < 0.25 <= 0.3 <= counted_whole


def test_a_blocking_call_is_a_stall_waited_or_not():
    assert one_pass(StallClock(), lambda: time.sleep(0.1)) >= 0.1


def test_a_trial_whose_task_waited_for_a_stuck_worker_saw_the_stall(monkeypatch):
    """Its task reaches the worker while a neighbour's blocking call holds the loop: that wait is a stall it saw,
    so it is run again alone, as the neighbour is (else it would start late, and could run out of time for it)."""
    monkeypatch.syspath_prepend(str(HOSTILE_DIR))

    async def check():
        agent = await IsolatedAgent.start("hostile_agents:LazyLoader", Sandbox("process"))
        sessions = make_session(), make_session()
        task = AgentTask.from_package(sessions[0].package, 0)
        try:
            first = asyncio.ensure_future(agent.attempt(task, 0, sessions[0], 30))
            while not sessions[0].events:  # its call made, it loads: the worker is stuck for a second
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.3)
            return await asyncio.gather(first, agent.attempt(task, 1, sessions[1], 30))
        finally:
            await agent.aclose()

    first, second = asyncio.run(check())
    assert first.redo and second.redo


def test_workers_leave_the_agents_imports_to_no_collection(tmp_path, monkeypatch):
    """Frozen in the zygote before the fork: no worker's collection walks what the agent imported (such a walk
    stalled every trial of a worker, which were then run again)."""
    monkeypatch.syspath_prepend(str(ROOT))
    out = tmp_path / "run"
    asyncio.run(
        execute(
            RunSpec(suite=[str(PACKAGE)], agents=["tests.agents_for_tests:GcProbe"], trials=2, sandbox="process"),
            out,
            progress=False,
        )
    )
    outputs = [json.loads(o) for o in load_trials(out).output]
    assert all(o["frozen"] > 10 * o["tracked"] for o in outputs), outputs
