"""The engine: misbehaving agents end only their own trial, deterministic seeds and outcomes, resume after SIGKILL."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner

from forge_kernel.agents import agent_factory
from forge_kernel.cli import main
from forge_kernel.engine import Images, RunSpec, execute, run_trial, trial_seed
from forge_kernel.engine.run import RUN_COLLECTION_THRESHOLDS
from forge_kernel.spec import SpecError, load_package
from forge_kernel.spec.loading import read_yaml
from forge_kernel.store import RunStore, load_trials, load_verdicts
from tests.helpers import copy_worked_examples, snapshot, update_yaml

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "task_packages" / "superclue"
TASKS = ["SC-DDX-CHEST-PAIN", "SC-MED-GASTRIC-ULCER", "SC-OPS-ADMISSION"]
"""The three worked examples of SuperCLUE-MedAgent; the suite may hold more."""
WORKED = [SUITE / t for t in TASKS]
T = "tests.agents_for_tests"
FORGE = str(Path(sys.executable).with_name("forge"))
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.fixture(autouse=True)
def test_agents_importable(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))


def copy_suite(tmp_path: Path, **fields) -> Path:
    """Both halves of the worked examples under tmp_path; ``fields`` merged into every package.yaml."""
    suite = copy_worked_examples(tmp_path)
    for manifest in suite.rglob("package.yaml"):
        update_yaml(manifest, **fields)
    return suite


def run(suite, agents, run_dir, trials=1, seed=0, concurrency=4, resume=False):
    """Run in this process; ``suite`` is a folder or a list of package folders."""
    paths = suite if isinstance(suite, list) else [suite]
    spec = RunSpec(suite=[str(p) for p in paths], agents=agents, trials=trials, seed=seed)
    return asyncio.run(execute(spec, run_dir, concurrency=concurrency, resume=resume, progress=False))


def ended_at(run_dir: Path) -> str | None:
    store = RunStore.open(run_dir)
    try:
        return store.manifest()["ended_at"]
    finally:
        store.close()


# --- misbehaving agents ---------------------------------------------------------------------------------------

CRASH_LINE = 1 + (ROOT / "tests" / "agents_for_tests.py").read_text().splitlines().index(
    '        raise RuntimeError("agent bug on purpose")'
)
"""Where the crashing agent raises: the reason names that line of its file."""
MISBEHAVING = {
    "crashing": ("agent_error", f"RuntimeError: agent bug on purpose (at agents_for_tests.py:{CRASH_LINE})"),
    "hanging": ("timeout", "no result within 1.0 s"),
    "budget-breaker": ("budget_exceeded", "calls > 20"),
    "budget-swallower": ("budget_exceeded", "calls > 20"),
    "wrong-return": ("agent_error", "returned dict, not AgentResult"),
    "out-of-range": (
        "agent_error",
        "unparseable result: result: Value error, confidence must be between 0 and 1, not 7.0",
    ),
}


@pytest.fixture(scope="module")
def mixed_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mixed")
    suite = copy_suite(tmp, budget={"max_seconds": 1})
    agents = [
        "scripted",
        f"{T}:Crashing",
        f"{T}:Hanging",
        f"{T}:BudgetBreaker",
        f"{T}:BudgetSwallower",
        f"{T}:WrongReturn",
        f"{T}:OutOfRange",
    ]
    mp = pytest.MonkeyPatch()
    mp.syspath_prepend(str(ROOT))
    try:
        outcome = run(suite, agents, tmp / "run", trials=2, concurrency=8)
    finally:
        mp.undo()
    return outcome


def test_every_trial_of_a_mixed_run_is_stored(mixed_run):
    trials = load_trials(mixed_run.run_dir)
    assert (mixed_run.total, mixed_run.ran, mixed_run.skipped) == (42, 42, 0)
    assert len(trials) == 42
    assert not trials.duplicated(["task_id", "agent", "trial"]).any()
    assert ended_at(mixed_run.run_dir) is not None


def test_good_trials_complete_beside_bad_ones(mixed_run):
    good = load_trials(mixed_run.run_dir).query("agent == 'scripted'")
    assert len(good) == 6
    assert set(good.status) == {"completed"} and good.passed.all() and (good.completion == 1).all()
    verdicts = load_verdicts(mixed_run.run_dir)
    assert not verdicts[verdicts.trial_id.isin(good.trial_id)].verifier_id.eq("trial.ended").any()


@pytest.mark.parametrize("agent", sorted(MISBEHAVING))
def test_a_bad_agent_ends_only_its_trial_with_a_reason(mixed_run, agent):
    status, reason = MISBEHAVING[agent]
    trials = load_trials(mixed_run.run_dir).query("agent == @agent")
    assert len(trials) == 6
    assert set(trials.status) == {status}
    assert set(trials.reason) == {reason}
    assert not trials.passed.any() and (trials.completion == 0).all()
    verdicts = load_verdicts(mixed_run.run_dir)
    ended = verdicts[verdicts.trial_id.isin(trials.trial_id) & (verdicts.verifier_id == "trial.ended")]
    assert len(ended) == 6
    assert not ended.passed.any()
    assert set(ended.reason) == {f"trial ended: {status}"}


def test_budget_breaches_stop_at_the_call_budget(mixed_run):
    trials = load_trials(mixed_run.run_dir)
    assert set(trials.query("agent in ['budget-breaker', 'budget-swallower']").n_calls) == {20}
    verdicts = load_verdicts(mixed_run.run_dir).merge(trials[["trial_id", "agent"]], on="trial_id")
    budget = verdicts.query("verifier_id == 'budget' and agent == 'budget-swallower'")
    assert len(budget) == 6 and not budget.passed.any()


def test_a_hang_is_cut_at_max_seconds(mixed_run):
    hanging = load_trials(mixed_run.run_dir).query("agent == 'hanging'")
    assert hanging.duration_s.between(0.99, 6).all()
    assert set(hanging.n_calls) == {1}


def test_a_cost_breach_ends_the_trial():
    package = load_package(WORKED[0])
    limit = package.public.budget.max_cost
    record = asyncio.run(run_trial(package, Images()[package], agent_factory(f"{T}:Spender")(), 0, 1))
    assert (record.status, record.reason) == ("budget_exceeded", f"cost {limit + 0.1:.4f} > {limit}")
    (budget,) = (v for v in record.grading.verdicts if v.kind == "budget.limits")
    assert not budget.passed and f"cost {limit + 0.1:.4f} > {limit}" in budget.reason


# --- seeds and determinism ------------------------------------------------------------------------------------


def test_trial_seed_is_a_pure_function():
    seed = trial_seed(0, "SC-DDX-CHEST-PAIN", "scripted", 0)
    assert seed == 7960630743864376018  # stable across machines and Python versions
    assert trial_seed(42, "T", "a", 3) == 1060569674163680632
    variants = {
        trial_seed(0, "SC-DDX-CHEST-PAIN", "scripted", 0),
        trial_seed(1, "SC-DDX-CHEST-PAIN", "scripted", 0),
        trial_seed(0, "SC-OPS-ADMISSION", "scripted", 0),
        trial_seed(0, "SC-DDX-CHEST-PAIN", "other", 0),
        trial_seed(0, "SC-DDX-CHEST-PAIN", "scripted", 1),
    }
    assert len(variants) == 5
    assert all(0 <= s < 2**63 for s in variants)
    assert trial_seed(1, "a1", "b", 0) != trial_seed(1, "a", "1b", 0)


def test_stored_seeds_come_from_the_run_seed_and_reach_the_agent(tmp_path):
    agents = ["scripted", f"{T}:SeedEcho"]
    run(WORKED, agents, tmp_path / "s5", trials=2, seed=5)
    run(WORKED, agents, tmp_path / "s6", trials=2, seed=6)
    s5, s6 = load_trials(tmp_path / "s5"), load_trials(tmp_path / "s6")
    for df, run_seed in ((s5, 5), (s6, 6)):
        expected = [trial_seed(run_seed, r.task_id, r.agent, r.trial) for r in df.itertuples()]
        assert df.seed.tolist() == expected
        echo = df.query("agent == 'seed-echo'")
        assert echo.answer.tolist() == [str(s) for s in echo.seed]
    assert s5.seed.nunique() == len(s5) == 12
    assert not set(s5.seed) & set(s6.seed)


def test_same_seed_same_events_and_verdicts_at_any_concurrency(tmp_path):
    run(WORKED, ["scripted"], tmp_path / "a", trials=3, seed=7, concurrency=1)
    run(WORKED, ["scripted"], tmp_path / "b", trials=3, seed=7, concurrency=1)
    run(WORKED, ["scripted"], tmp_path / "c", trials=3, seed=7, concurrency=8)
    a, b, c = (snapshot(tmp_path / name) for name in "abc")
    trials, events, verdicts = a
    assert len(trials) == 9 and len(events) > 9 * 5 and len(verdicts) > 9 * 5
    assert any(e["changes"] != "[]" for e in events)
    assert a == b
    assert a == c


def test_a_run_collects_garbage_less_often_and_restores_the_thresholds(tmp_path):
    before = gc.get_threshold()
    probe = f"{T}:GcProbe"
    asyncio.run(
        execute(
            RunSpec(suite=[str(WORKED[1])], agents=[probe], trials=2, trust=[probe]), tmp_path / "r", progress=False
        )
    )
    seen = [json.loads(o)["thresholds"] for o in load_trials(tmp_path / "r").output]
    assert seen == [list(RUN_COLLECTION_THRESHOLDS)] * 2 != [list(before)] * 2
    assert gc.get_threshold() == before


def test_prepare_is_awaited_before_each_trial_outside_its_clock(tmp_path):
    prepared = []

    async def prepare(package):
        prepared.append(package.id)
        await asyncio.sleep(0.5)

    spec = RunSpec(suite=[str(p) for p in WORKED[:2]], agents=["scripted"], trials=2)
    asyncio.run(execute(spec, tmp_path / "r", concurrency=1, progress=False, prepare=prepare))
    trials = load_trials(tmp_path / "r")
    assert prepared == [load_package(p).id for p in WORKED[:2] for _ in range(2)]
    assert len(trials) == 4 and trials.duration_s.max() < 0.5


# --- packages are checked before any agent runs ---------------------------------------------------------------


def test_a_bad_verifier_param_fails_the_run_before_any_trial(tmp_path):
    suite = copy_suite(tmp_path)
    hidden = tmp_path / "verifiers" / "superclue" / "SC-OPS-ADMISSION.yaml"
    chain = {"id": "chain", "kind": "trace.tool_chain", "category": "trace", "params": {"exact": "maybe"}}
    update_yaml(hidden, verifiers=[*read_yaml(hidden)["verifiers"], chain])
    with pytest.raises(SpecError) as err:
        run(suite, ["scripted"], tmp_path / "run")
    assert (err.value.file, err.value.field) == (str(hidden), "verifiers.chain.params.exact")
    assert not (tmp_path / "run").exists()


def test_an_unknown_tool_in_a_manifest_fails_the_run_before_any_trial(tmp_path):
    suite = copy_suite(tmp_path, tools=["teleport", *read_yaml(SUITE / "suite.yaml")["tools"]])
    with pytest.raises(SpecError) as err:
        run(suite, ["scripted"], tmp_path / "run")
    assert err.value.field == "tools.0" and err.value.message == "unknown tool 'teleport'"
    assert not (tmp_path / "run").exists()


# --- resume after SIGKILL -------------------------------------------------------------------------------------


def stored(db: Path) -> dict:
    """(task, agent, trial) -> (trial_id, finished_at) of every trial in a run store, {} before it exists."""
    if not db.exists():
        return {}
    try:
        with closing(sqlite3.connect(db, timeout=5)) as conn:
            rows = conn.execute("SELECT task_id, agent, trial, trial_id, finished_at FROM trials").fetchall()
    except sqlite3.OperationalError:  # tables not created yet
        return {}
    return {tuple(r[:3]): tuple(r[3:]) for r in rows}


def forge(*argv, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [FORGE, *argv], env=ENV, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw
    )


def finished(proc: subprocess.Popen) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


def test_resume_after_sigkill_stores_every_trial_exactly_once(tmp_path):
    out, trials = tmp_path / "run", 8
    suites = [arg for path in WORKED for arg in ("--suite", str(path))]
    argv = [
        "run",
        *suites,
        "--agent",
        f"{T}:SlowScripted",
        "--trials",
        str(trials),
        "--concurrency",
        "1",
        "--seed",
        "3",
        "--out",
        str(out),
    ]
    total = len(TASKS) * trials
    proc = forge(*argv)
    deadline = time.monotonic() + 60
    while len(stored(out / "run.sqlite")) < 3:
        assert proc.poll() is None, f"run ended before it could be killed: {proc.communicate()}"
        assert time.monotonic() < deadline
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    before = stored(out / "run.sqlite")
    assert 3 <= len(before) < total

    again = forge(*argv)  # as a process: it must not touch the stopped run
    other_k = CliRunner().invoke(main, [("5" if a == str(trials) else a) for a in argv] + ["--resume"])
    assert other_k.exit_code == 2 and other_k.stderr.splitlines() == [f"{out}: --trials: is 5, the stored run has 8"]
    code, stdout, stderr = finished(again)
    assert code == 2 and stderr.splitlines() == [
        f"{out}: --out: holds a run already; pass --resume to finish it, or choose another folder"
    ]
    assert stored(out / "run.sqlite") == before

    code, stdout, stderr = finished(forge(*argv, "--resume"))
    assert code == 0, stderr
    assert f"{total - len(before)} trial(s) run, {len(before)} already stored" in stdout
    after = stored(out / "run.sqlite")
    assert set(after) == {(t, "slow-scripted", k) for t in TASKS for k in range(trials)}
    assert all(after[key] == value for key, value in before.items())  # finished trials were not redone
    with closing(sqlite3.connect(out / "run.sqlite")) as conn:
        per_key = conn.execute("SELECT COUNT(*) FROM trials GROUP BY task_id, agent, trial").fetchall()
        assert [n for (n,) in per_key] == [1] * total
        assert conn.execute("SELECT COUNT(*) FROM scores WHERE grading_id = 1").fetchone()[0] == total
        mismatched = conn.execute("""SELECT COUNT(*) FROM trials t WHERE n_calls !=
                                     (SELECT COUNT(*) FROM events e WHERE e.trial_id = t.trial_id)""").fetchone()[0]
        assert mismatched == 0
    df = load_trials(out)
    assert df.passed.all() and set(df.status) == {"completed"}
    assert ended_at(out) is not None
