"""Trials on a Dask cluster (``forge run --executor dask``): the same store as a local run, a worker killed mid-run
loses no trial, a lost or unreachable scheduler ends the run in one line."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import sqlite3
import subprocess
import sys
import threading
from contextlib import closing
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from forge_kernel.cli import main
from forge_kernel.engine import RunSpec, execute
from forge_kernel.spec import StoreError
from tests.chat_server import ChatServer, gold_script
from tests.helpers import MCP_AGENT, copy_worked_examples, gold_plan, records, snapshot

distributed = pytest.importorskip("distributed", reason="the dask extra (scripts/dev.py test installs it)")
from forge_kernel.engine import _cluster  # noqa: E402  (it needs distributed)

ROOT = Path(__file__).resolve().parents[2]
T = "tests.agents_for_tests"
SLOW = f"{T}:SlowScripted"
"""Isolated (a module:attribute entry), ~0.05 s a trial: slow enough to be stopped part-way through a run."""
TRIALS = 20
TOTAL = 3 * TRIALS
"""Trials of the slow agent on the three worked examples: about 0.4 s at 8 at once."""


@pytest.fixture(autouse=True)
def test_agents_importable(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))


@pytest.fixture(scope="module")
def cluster():
    """Two worker processes on this machine, 4 trials at once each, shared by the tests that name a scheduler."""
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=4, dashboard_address=None) as local:
        yield local


def run(suite: Path, run_dir: Path, agents: list[str], trials: int, resume: bool = False, **where):
    spec = RunSpec(suite=[str(suite)], agents=agents, trials=trials, sandbox="process")
    return asyncio.run(execute(spec, run_dir, concurrency=8, resume=resume, progress=False, **where))


def scores(run_dir: Path) -> list[dict]:
    """The scores table by (task, agent, trial), without row ids."""
    with closing(sqlite3.connect(run_dir / "run.sqlite")) as conn:
        import pandas as pd

        frame = pd.read_sql(
            "SELECT t.task_id, t.agent, t.trial, s.passed, s.accuracy, s.completion, s.safety_gate, s.missing, "
            "s.extra, s.hidden_version, s.hidden_hash FROM scores s JOIN trials t USING (trial_id) "
            "ORDER BY t.task_id, t.agent, t.trial",
            conn,
        )
    return records(frame)


def stored_keys(run_dir: Path) -> list[tuple]:
    with closing(sqlite3.connect(run_dir / "run.sqlite")) as conn:
        return conn.execute("SELECT task_id, agent, trial FROM trials ORDER BY 1, 2, 3").fetchall()


WATCH = """
import sqlite3, sys, time
from contextlib import closing
store, count = sys.argv[1], int(sys.argv[2])
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    time.sleep(0.01)
    try:
        with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True)) as conn:
            stored = conn.execute("SELECT COUNT(*) FROM trials").fetchone()[0]
    except sqlite3.Error:  # not made yet
        continue
    if stored >= count:
        print(stored, flush=True)
        break
"""


def when_stored(run_dir: Path, count: int, act) -> tuple[threading.Thread, list[int]]:
    """A thread that calls ``act()`` once the run in ``run_dir`` has stored ``count`` trials; how many it had. The
    store is watched from another process: a thread of this one reading SQLite while the run forks its grader could
    leave the grader a lock that nobody releases."""
    seen: list[int] = []
    watcher = subprocess.Popen(
        [sys.executable, "-c", WATCH, str(run_dir / "run.sqlite"), str(count)], stdout=subprocess.PIPE, text=True
    )

    def wait() -> None:
        line = watcher.stdout.readline()
        watcher.wait()
        if line.strip():
            seen.append(int(line))
            act()

    thread = threading.Thread(target=wait, daemon=True)
    thread.start()
    return thread, seen


def test_a_run_on_a_local_cluster_stores_what_the_same_run_stores_locally(tmp_path):
    suite = copy_worked_examples(tmp_path)
    argv = [
        "run",
        "--suite",
        str(suite),
        "--agent",
        f"baseline-v1,{SLOW},{T}:SeedEcho",
        "--trials",
        "2",
        "--sandbox",
        "process",
    ]
    local = CliRunner().invoke(main, [*argv, "--out", str(tmp_path / "local")])
    assert local.exit_code == 0, local.output
    dask = CliRunner().invoke(main, [*argv, "--out", str(tmp_path / "dask"), "--executor", "dask"])
    assert dask.exit_code == 0, dask.output
    assert "18 trial(s) run" in dask.output
    assert snapshot(tmp_path / "dask") == snapshot(tmp_path / "local")
    assert scores(tmp_path / "dask") == scores(tmp_path / "local")
    assert {r["passed"] for r in scores(tmp_path / "dask")} == {0, 1}  # seed-echo fails: something to tell apart


def test_a_worker_killed_mid_run_loses_no_trial_and_resume_completes_it(tmp_path, cluster):
    suite = copy_worked_examples(tmp_path)
    run(suite, tmp_path / "local", [SLOW], trials=TRIALS)
    client = distributed.Client(cluster)
    pids = client.run(os.getpid)
    client.close()
    killer, killed = when_stored(tmp_path / "dask", 4, lambda: os.kill(next(iter(pids.values())), signal.SIGKILL))
    try:
        run(suite, tmp_path / "dask", [SLOW], trials=TRIALS, executor="dask", scheduler=cluster.scheduler_address)
    except StoreError as exc:  # the killed worker's trials may also be run again elsewhere, ending the run whole
        assert "--resume" in str(exc)
    killer.join(5)
    assert killed and killed[0] < TOTAL, "the run ended before a worker could be killed"
    resumed = run(
        suite,
        tmp_path / "dask",
        [SLOW],
        trials=TRIALS,
        resume=True,
        executor="dask",
        scheduler=cluster.scheduler_address,
    )
    assert resumed.ran + resumed.skipped == TOTAL
    keys = stored_keys(tmp_path / "dask")
    assert len(keys) == len(set(keys)) == TOTAL
    assert snapshot(tmp_path / "dask") == snapshot(tmp_path / "local")


def test_a_model_and_an_mcp_agent_run_on_the_workers_as_they_run_here(tmp_path, cluster):
    suite = copy_worked_examples(tmp_path)
    tasks = sorted(p.parent for p in suite.rglob("package.yaml"))
    plan = {task.name: gold_plan(task.name, tmp_path / "verifiers") for task in tasks}
    mcp = f"mcp:{shlex.join([sys.executable, str(MCP_AGENT), json.dumps(plan, ensure_ascii=False)])}"
    with ChatServer(gold_script(tasks)) as chat:
        model = tmp_path / "model.yaml"
        model.write_text(yaml.safe_dump({"base_url": chat.url, "model": "gold", "seed": 0, "timeout_s": 5.0}))
        agents = [f"llm:{model}", mcp]
        run(suite, tmp_path / "local", agents, trials=1)
        asked_here = len(chat.requests)
        run(suite, tmp_path / "dask", agents, trials=1, executor="dask", scheduler=cluster.scheduler_address)
        asked_there = len(chat.requests) - asked_here
    assert asked_here == asked_there > 0
    assert snapshot(tmp_path / "dask") == snapshot(tmp_path / "local")
    assert scores(tmp_path / "dask") == scores(tmp_path / "local")
    assert [r["passed"] for r in scores(tmp_path / "dask")] == [1] * 2 * len(tasks)


def test_a_release_runs_its_trials_where_its_parameters_say(tmp_path, monkeypatch):
    monkeypatch.setattr(_cluster, "CONNECT_SECONDS", 1)
    copy_worked_examples(tmp_path)
    params = {"release": "r1", "candidate": "baseline-v1", "baseline": "baseline-v1", "suites": ["task_packages"]}
    (tmp_path / "r1.yaml").write_text(
        yaml.safe_dump({**params, "trials": 1, "executor": "dask", "scheduler": "tcp://127.0.0.1:9"})
    )
    result = CliRunner().invoke(main, ["release", str(tmp_path / "r1.yaml")])
    assert result.exit_code == 2, result.output
    assert "--scheduler: tcp://127.0.0.1:9: cannot reach a Dask scheduler there" in result.output


def test_an_unreachable_scheduler_is_one_line_and_exit_2_before_anything_is_written(tmp_path, monkeypatch):
    monkeypatch.setattr(_cluster, "CONNECT_SECONDS", 1)
    suite = copy_worked_examples(tmp_path)
    argv = ["run", "--suite", str(suite), "--agent", "baseline-v1", "--out", str(tmp_path / "run")]
    result = CliRunner().invoke(main, [*argv, "--executor", "dask", "--scheduler", "tcp://127.0.0.1:9"])
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0
    assert "--scheduler: tcp://127.0.0.1:9: cannot reach a Dask scheduler there" in result.output
    assert not (tmp_path / "run" / "run.sqlite").exists()
    result = CliRunner().invoke(main, [*argv, "--scheduler", "tcp://127.0.0.1:9"])
    assert result.exit_code == 2 and "only with --executor dask" in result.output


def test_a_scheduler_lost_mid_run_ends_it_in_one_line_and_the_store_keeps_every_trial_returned(tmp_path):
    suite = copy_worked_examples(tmp_path)
    doomed = distributed.LocalCluster(n_workers=1, threads_per_worker=4, processes=False, dashboard_address=None)
    stopper, stopped = when_stored(tmp_path / "run", 4, doomed.close)
    with pytest.raises(StoreError, match=r"was lost \(.+\); the trials returned are stored: run again with --resume"):
        run(suite, tmp_path / "run", [SLOW], trials=TRIALS, executor="dask", scheduler=doomed.scheduler_address)
    stopper.join(5)
    keys = stored_keys(tmp_path / "run")
    assert stopped and len(keys) == len(set(keys)) < TOTAL
    assert not _cluster.host().runs  # its worker (in this process) stopped the run's agents as it closed
    run(suite, tmp_path / "run", [SLOW], trials=TRIALS, resume=True)
    assert len(stored_keys(tmp_path / "run")) == TOTAL


def test_the_packages_sent_to_the_workers_carry_no_hidden_half(tmp_path):
    import pickle
    from dataclasses import replace

    from forge_kernel.spec import load_package

    package = load_package(copy_worked_examples(tmp_path) / "SC-DDX-CHEST-PAIN")
    text = package.hidden_path.read_text(encoding="utf-8")
    from_store = replace(package, hidden_source=(package.hidden_path, text))  # as a run store's snapshot rebuilds it
    assert from_store.hidden.id == package.id  # parsed and cached, as grading leaves it
    verifier = from_store.hidden.verifiers[0].id
    assert verifier.encode() in pickle.dumps(from_store)
    assert verifier.encode() not in pickle.dumps(_cluster.public_only(from_store))
