"""Agents over MCP: ``forge mcp serve`` over stdio and streamable HTTP, and ``forge run --agent mcp:COMMAND``.

Every client here is ``tests/mcp_agents/scripted_mcp_agent.py``, a real process written with the MCP SDK's own
ClientSession: it makes the calls it is told on its command line (the test reads the gold from the hidden half and
hands it over; the agent never reads it) and hands in the answer with submit_result (SYNTHETIC data).
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from forge_kernel.cli._run import agent_entries
from forge_kernel.engine import RunSpec, execute
from forge_kernel.spec import AgentError
from forge_kernel.store import load_events, load_trials, open_run
from forge_kernel.workers import Sandbox, bwrap_problem
from forge_kernel.workers._launch import Launch
from tests.cli.test_cli import invoke
from tests.helpers import MCP_AGENT, ROOT, WORKED_EXAMPLES, copy_worked_examples, gold_plan, needs_bwrap, update_yaml

FORGE = str(Path(sys.executable).with_name("forge"))
ULCER = "SC-MED-GASTRIC-ULCER"
PACKAGE = ROOT / "task_packages" / "superclue" / ULCER


def agent(plan: dict, *options: str) -> list[str]:
    return [sys.executable, str(MCP_AGENT), json.dumps(plan, ensure_ascii=False), *options]


def served(plan: dict, out: Path, *options: str) -> subprocess.CompletedProcess:
    """The agent, as the client of ``forge mcp serve`` over stdio that it starts itself."""
    return subprocess.run(
        [*agent(plan, *options), "--server", FORGE, "mcp", "serve", "--package", str(PACKAGE), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def only_trial(out: Path) -> dict:
    trials = load_trials(out)
    assert len(trials) == 1
    return trials.iloc[0].to_dict()


def test_an_mcp_client_completes_a_package_through_forge_mcp_serve_over_stdio(tmp_path):
    done = served({ULCER: gold_plan(ULCER)}, tmp_path / "run")
    assert done.returncode == 0, done.stderr
    trial = only_trial(tmp_path / "run")
    assert (trial["agent"], trial["agent_version"], trial["status"]) == ("scripted-mcp", "1.0", "completed")
    with open_run(tmp_path / "run") as run:
        record = run.trial(ULCER, "scripted-mcp", 0)
        assert record.grading.scores.passed and run.isolation == {"scripted-mcp": "MCP client outside forge"}
        assert [e.tool for e in record.events] == [c["tool"] for c in gold_plan(ULCER)["calls"]]  # submit_result: none
    assert "PASSED" in done.stderr  # forge's lines: its stdout was the connection


def test_an_mcp_client_completes_a_package_over_streamable_http(tmp_path):
    server = subprocess.Popen(
        [
            FORGE,
            "mcp",
            "serve",
            "--transport",
            "http",
            "--port",
            "0",
            "--package",
            str(PACKAGE),
            "--out",
            str(tmp_path / "run"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = server.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), url
        subprocess.run(agent({ULCER: gold_plan(ULCER)}, "--url", url), check=True, timeout=60)
        out, err = server.communicate(timeout=30)
    finally:
        server.kill()
    assert server.returncode == 0, err
    assert "PASSED" in out and only_trial(tmp_path / "run")["status"] == "completed"
    with open_run(tmp_path / "run") as run:
        assert run.trial(ULCER, "scripted-mcp", 0).grading.scores.passed


def test_a_call_to_another_patients_chart_is_recorded_as_denied(tmp_path):
    plan = gold_plan(ULCER)
    plan["calls"].insert(2, {"tool": "medication_search", "args": {"patient_id": "sc-med-p2"}})
    assert served({ULCER: plan}, tmp_path / "run").returncode == 0
    events = load_events(tmp_path / "run")
    assert events.iloc[2][["tool", "ok", "denied"]].tolist() == ["medication_search", False, "cross_patient"]
    with open_run(tmp_path / "run") as run:
        assert not run.trial(ULCER, "scripted-mcp", 0).grading.scores.passed  # the scope verdict fails


def test_a_call_over_the_budget_ends_the_trial(tmp_path):
    calls = [{"tool": "patient_search", "args": {"mrn": "SC-0101"}}] * 25  # the package allows 20
    assert served({ULCER: {"calls": calls, "answer": "done"}}, tmp_path / "run").returncode == 0
    trial = only_trial(tmp_path / "run")
    assert (trial["status"], trial["reason"]) == ("budget_exceeded", "calls > 20")
    assert len(load_events(tmp_path / "run")) == 20


def test_forge_run_runs_an_mcp_agent_on_bundled_packages_and_summary_and_replay_read_it(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # the command names its script relative to the repository
    suite = copy_worked_examples(tmp_path)
    plan = {task: gold_plan(task, tmp_path / "verifiers") for task in WORKED_EXAMPLES}
    entry = f"mcp:python {MCP_AGENT.relative_to(ROOT)} {shlex.quote(json.dumps(plan, ensure_ascii=False))}"
    out, path = tmp_path / "run", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"  # its python
    done = invoke(
        "run", "--suite", str(suite), "--agent", entry, "--trials", "1", "--out", str(out), env={"PATH": path}
    )
    assert done.returncode == 0, done.stderr
    trials = load_trials(out)
    assert sorted(trials.task_id) == sorted(WORKED_EXAMPLES) and set(trials.status) == {"completed"}
    summary = invoke("summary", str(out), "--by", "suite")
    assert "namespace sandbox: scripted-mcp" in summary.stdout or bwrap_problem()
    assert summary.stdout.split("scripted-mcp")[1].split()[0] == "1.00"  # every trial passes
    replay = invoke("replay", str(out), "--task", ULCER, "--agent", "scripted-mcp")
    assert "PASSED" in replay.stdout and "medication_request_create" in replay.stdout
    with open_run(out) as run:
        card = next(a for a in run.manifest["agents"] if a["name"] == "scripted-mcp")
        assert (card["spec"], card["version"], card["trusted"]) == (entry, "1.0", False)


@pytest.fixture(scope="module")
def troubles(tmp_path_factory):
    """One run of one package (its time budget 6 s) with an honest MCP agent, one that crashes, one that hangs and
    one that looks for the hidden half and the run store."""
    root = tmp_path_factory.mktemp("troubles")
    suite = copy_worked_examples(root)
    update_yaml(suite / ULCER / "package.yaml", budget={"max_seconds": 6})
    out = root / "run"
    plan = {ULCER: gold_plan(ULCER)}
    peeks = [str(root / "verifiers"), str(ROOT / "verifiers"), str(out), str(out / "run.sqlite"), str(suite)]
    agents = {
        "honest": [],
        "crasher": ["--then", "crash"],
        "hanger": ["--then", "hang"],
        "peeker": [a for p in peeks for a in ("--peek", p)],
    }
    entries = [f"mcp:{shlex.join(agent(plan, '--name', name, *options))}" for name, options in agents.items()]
    asyncio.run(
        execute(RunSpec(suite=[str(suite / ULCER)], agents=entries, trials=1), out, concurrency=4, progress=False)
    )
    return load_trials(out).set_index("agent"), peeks, out


def test_a_crashing_and_a_hanging_mcp_agent_end_as_their_own_trials(troubles):
    trials, _, _ = troubles
    assert trials.loc["honest", "status"] == "completed"
    assert tuple(trials.loc["crasher", ["status", "reason"]]) == (
        "agent_error",
        "the client left without submit_result",
    )
    assert tuple(trials.loc["hanger", ["status", "reason"]]) == ("timeout", "no result within 6.0 s")


@needs_bwrap
def test_an_mcp_agent_in_the_namespace_sandbox_reads_no_hidden_half_and_no_run_store(troubles):
    _, peeks, out = troubles
    with open_run(out) as run:
        answer = run.trial(ULCER, "peeker", 0).result.answer
    assert [line.rsplit(": ", 1)[1] for line in answer.split("; ")[1:]] == ["FileNotFoundError"] * len(peeks)


def test_where_the_disk_is_open_the_peeker_finds_the_hidden_half_and_the_run_store(tmp_path):
    """The same look in the process sandbox, which confines nothing: the test above would see a leak."""
    suite, out = copy_worked_examples(tmp_path), tmp_path / "run"
    peeks = [str(tmp_path / "verifiers"), str(out / "run.sqlite")]
    entry = f"mcp:{shlex.join(agent({}, *(a for p in peeks for a in ('--peek', p))))}"
    asyncio.run(
        execute(RunSpec(suite=[str(suite / ULCER)], agents=[entry], trials=1, sandbox="process"), out, progress=False)
    )
    with open_run(out) as run:
        answer = run.trial(ULCER, "scripted-mcp", 0).result.answer
    assert answer == f"{peeks[0]}: 1 entries; {peeks[1]}: " + answer.rsplit(": ", 1)[1]
    assert answer.endswith(" bytes")


# --- what reaches the sandbox, and a user's mistakes ------------------------------------------------------------


def test_the_sandbox_shows_an_mcp_agent_its_scripts_folder_and_not_the_repository():
    launch = Launch(as_root=False)
    try:
        args = Sandbox("namespace").bwrap_args(f"mcp:python {MCP_AGENT}", launch)
    finally:
        launch.close()
    bound = [args[i + 1] for i, a in enumerate(args) if a == "--ro-bind"]
    assert str(MCP_AGENT.parent) in bound and str(ROOT) not in bound and str(ROOT / "tests") not in bound


def test_an_mcp_entry_takes_the_rest_of_the_agent_option():
    assert agent_entries("baseline-v1, mcp:python a.py '{\"x\": [1, 2]}'") == [
        "baseline-v1",
        "mcp:python a.py '{\"x\": [1, 2]}'",
    ]
    assert agent_entries("a,b") == ["a", "b"]


@pytest.mark.parametrize(
    "argv, line",
    [
        (["mcp", "serve", "--package", "nowhere"], "nowhere/package.yaml: (file): file not found"),
        (
            ["mcp", "serve", "--package", str(PACKAGE), "--transport", "http", "--port", "70000"],
            "forge mcp serve: --port: 70000 is not in the range 0<=x<=65535",
        ),
        (
            ["run", "--suite", str(PACKAGE), "--agent", "mcp:no-such-program --x", "--out", "{tmp}/run"],
            "--agent: mcp:no-such-program --x: no program 'no-such-program' on the PATH",
        ),
        (
            ["run", "--suite", str(PACKAGE), "--agent", "mcp:true", "--out", "{tmp}/run", "--sandbox", "process"],
            "--agent: mcp:true: ended before it sent an MCP message",
        ),
        (
            ["run", "--suite", str(PACKAGE), "--agent", "mcp:true", "--trust", "mcp:true", "--out", "{tmp}/run"],
            "--trust: mcp:true: an MCP agent is a program of its own: it runs in the sandbox",
        ),
    ],
)
def test_a_mistake_is_one_line_and_exit_2(tmp_path, argv, line):
    done = invoke(*(a.format(tmp=tmp_path) for a in argv))
    assert (done.returncode, done.stderr.strip()) == (2, line)


def test_a_port_in_use_a_stored_run_or_stdio_that_is_no_pipe_is_one_line_and_exit_2(tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        done = invoke("mcp", "serve", "--package", str(PACKAGE), "--transport", "http", "--port", str(port))
    assert done.returncode == 2 and done.stderr.startswith(f"--port: {port}: cannot listen on 127.0.0.1:{port}")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "run.sqlite").write_bytes(b"")
    done = invoke("mcp", "serve", "--package", str(PACKAGE), "--out", str(tmp_path / "run"))
    assert (done.returncode, done.stderr.strip()) == (
        2,
        f"{tmp_path / 'run'}: --out: holds a run already; choose another folder",
    )
    done = subprocess.run(
        [FORGE, "mcp", "serve", "--package", str(PACKAGE)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (
        2,
        "--transport: stdio: stdin and stdout must be pipes: an MCP client "
        "starts forge mcp serve (or serve with --transport http)\n",
    )


def test_two_mcp_agents_may_not_give_the_same_name(tmp_path):
    entries = [f"mcp:{shlex.join(agent({}, *extra))}" for extra in ([], ["--then", "hang"])]
    with pytest.raises(AgentError, match="a second agent named 'scripted-mcp'"):
        asyncio.run(
            execute(
                RunSpec(suite=[str(PACKAGE)], agents=entries, trials=1, sandbox="process"),
                tmp_path / "run",
                progress=False,
            )
        )
