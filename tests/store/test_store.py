"""The run store: schema version, manifest, DataFrame loaders, regrading after a hidden half changed, and
damaged, foreign and read-only stores."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import platform
import pwd
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from contextlib import closing
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner, Result

from forge_kernel.agents import AGENTS
from forge_kernel.cli import main
from forge_kernel.engine import RunSpec, _manifest as manifest_module, execute, load_suite, regrade
from forge_kernel.report.signoff import store_digests
from forge_kernel.spec import StoreError, load_package
from forge_kernel.store import (
    SCHEMA_VERSION,
    RunStore,
    iter_trials,
    load_events,
    load_trials,
    load_verdicts,
    open_run,
    read_trial,
    run_store,
)
from forge_kernel.workers._cgroup import problem
from tests.helpers import (
    WORKED_EXAMPLES as TASKS,
    back_to_version_4,
    back_to_version_5,
    copy_worked_examples,
    update_yaml,
)

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "task_packages" / "superclue"
"""The three worked examples of SuperCLUE-MedAgent; the suite may hold more."""
WORKED = [str(SUITE / t) for t in TASKS]
FORGE = str(Path(sys.executable).with_name("forge"))


def forge(*argv, cwd=ROOT):
    return subprocess.run([FORGE, *argv], cwd=cwd, capture_output=True, text=True, timeout=120)


def invoke(*argv) -> Result:
    """Run ``forge`` in this process; an uncaught exception fails the test."""
    result = CliRunner().invoke(main, list(argv))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("store") / "run"
    spec = RunSpec(suite=WORKED, agents=["scripted"], trials=3, seed=11)
    asyncio.run(execute(spec, out, concurrency=4, progress=False))
    return out


def manifest_of(run_dir: Path) -> dict:
    store = RunStore.open(run_dir)
    try:
        return store.manifest()
    finally:
        store.close()


def query(run_dir, sql, *params):
    with closing(sqlite3.connect(run_dir / "run.sqlite")) as conn:
        return conn.execute(sql, params).fetchall()


# --- schema and manifest --------------------------------------------------------------------------------------


def test_schema_version_is_in_meta(run_dir):
    meta = dict(query(run_dir, "SELECT key, value FROM meta"))
    assert meta["schema_version"] == str(SCHEMA_VERSION) == "6"
    assert meta["run_id"] == manifest_of(run_dir)["run_id"]
    assert query(run_dir, "PRAGMA journal_mode") == [("wal",)]


def test_a_store_of_another_schema_version_is_refused(run_dir, tmp_path):
    copy = tmp_path / "old"
    shutil.copytree(run_dir, copy)
    with closing(sqlite3.connect(copy / "run.sqlite")) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
        conn.commit()
    with pytest.raises(StoreError) as err:
        load_trials(copy)
    assert err.value.field == "meta.schema_version"
    assert f"is 99, this code reads {SCHEMA_VERSION}" in err.value.message


def test_manifest_records_provenance(run_dir):
    manifest = manifest_of(run_dir)
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert manifest["code"]["commit"] == head and len(head) == 40
    assert isinstance(manifest["code"]["dirty"], bool)
    assert manifest["packages"] == {p.id: p.package_hash for p in load_suite(WORKED)}
    assert manifest["agents"] == [
        {
            "name": "scripted",
            "version": load_trials(run_dir).agent_version[0],
            "spec": "scripted",
            "trusted": True,
            "isolation": "in-process",
            "config": AGENTS["scripted"]().config,
        }
    ]
    assert manifest["spec"] == {
        "suite": WORKED,
        "agents": ["scripted"],
        "trials": 3,
        "seed": 11,
        "gate": None,
        "trust": [],
        "sandbox": "namespace",
        "endpoints": [],
        "agent_memory_mb": 4096,
        "agent_env": [],
        "agent_processes": 4096,
        "isolate_reference": False,
    }
    assert manifest["sandbox"]["mode"] in ("namespace", "process")
    assert (manifest["sandbox"]["memory_mb"], manifest["sandbox"]["env"]) == (4096, [])
    assert manifest["sandbox"]["processes"] == (None if problem("pids") else 4096)
    assert manifest["sandbox"]["memory_whole"] is (problem("memory") is None)
    assert manifest["host"]["python"] == platform.python_version()
    assert manifest["host"]["hostname"] == platform.node()
    started, ended = (datetime.fromisoformat(manifest[k]) for k in ("started_at", "ended_at"))
    assert started.tzinfo is not None and started <= ended


def test_packages_table_holds_hashes_and_hidden_versions(run_dir):
    rows = query(run_dir, "SELECT task_id, path, package_hash, public_hash, hidden_version, hidden_hash FROM packages")
    by_id = {r[0]: r[1:] for r in rows}
    assert sorted(by_id) == TASKS
    for task_id, (path, package_hash, public_hash, hidden_version, hidden_hash) in by_id.items():
        package = load_package(SUITE / task_id)
        assert Path(path).is_absolute() and Path(path) == (SUITE / task_id)
        assert (package_hash, public_hash, hidden_hash) == (
            package.package_hash,
            package.public_hash,
            package.hidden_hash,
        )
        assert hidden_version == package.hidden.version


@pytest.mark.parametrize(
    "state, expected",
    [
        ("clean", {"dirty": False}),
        ("dirty", {"dirty": True}),
        ("untracked only", {"dirty": False}),
        ("no repository", {"commit": None, "dirty": None}),
    ],
)
def test_code_state_commit_and_dirty_flag(tmp_path, monkeypatch, state, expected):
    repo = tmp_path / "code"
    repo.mkdir()
    if state != "no repository":
        git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org"]
        (repo / "a.py").write_text("x = 1\n")
        for args in (["init", "-q"], ["add", "a.py"], ["commit", "-q", "-m", "c"]):
            subprocess.run([*git, *args], check=True, capture_output=True)
        expected = {
            "commit": subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip(),
            **expected,
        }
    if state == "dirty":
        (repo / "a.py").write_text("x = 2\n")
    if state == "untracked only":
        (repo / "b.py").write_text("y = 1\n")
    monkeypatch.setattr(manifest_module, "CODE_DIR", repo)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    assert manifest_module.code_state() == expected


# --- loaders --------------------------------------------------------------------------------------------------


def test_load_trials(run_dir):
    trials = load_trials(run_dir)
    assert isinstance(trials, pd.DataFrame) and len(trials) == 9
    assert {
        "trial_id",
        "task_id",
        "agent",
        "trial",
        "seed",
        "status",
        "n_calls",
        "passed",
        "accuracy",
        "completion",
        "safety_gate",
        "grading_id",
        "hidden_version",
        "category",
        "slices",
    } <= set(trials.columns)
    assert trials.passed.dtype == bool
    assert trials.groupby("task_id").trial.apply(sorted).to_dict() == {t: [0, 1, 2] for t in TASKS}
    assert trials.passed.all() and (trials.accuracy == 1.0).all() and (trials.completion == 1).all()
    assert set(trials.grading_id) == {1}
    assert trials.set_index("task_id").safety_gate.to_dict() == {
        "SC-DDX-CHEST-PAIN": "n/a",
        "SC-MED-GASTRIC-ULCER": "passed",
        "SC-OPS-ADMISSION": "n/a",
    }


def test_load_events(run_dir):
    trials = load_trials(run_dir)
    events = load_events(run_dir)
    assert len(events) == trials.n_calls.sum()
    for row in trials.itertuples():
        one = load_events(run_dir, row.trial_id)
        assert one.step.tolist() == list(range(1, row.n_calls + 1))
        assert one.tool.iloc[0] == "patient_search" and one.tool.iloc[-1] == "finish"
    writes = events[events.kind == "write"]
    assert len(writes) > 0 and writes.changes.str.startswith('[{"op":"add","path":"/').any()
    assert (events[events.kind == "read"].changes == "[]").all()


def test_load_verdicts(run_dir):
    trials = load_trials(run_dir)
    verdicts = load_verdicts(run_dir)
    per_task = {t: len(load_package(SUITE / t).hidden.verifiers) for t in TASKS}
    assert len(verdicts) == sum(per_task[t] for t in trials.task_id)
    assert {
        "trial_id",
        "grading_id",
        "verifier_id",
        "kind",
        "category",
        "severity",
        "passed",
        "reason",
        "steps",
    } <= set(verdicts.columns)
    assert verdicts.passed.astype(bool).all()
    assert len(load_verdicts(run_dir, latest=False)) == len(verdicts)


def test_read_trial_matches_the_frames(run_dir):
    store = RunStore.open(run_dir)
    try:
        trial = read_trial(store, "SC-MED-GASTRIC-ULCER", "scripted", 2)
        with pytest.raises(StoreError):
            read_trial(store, "SC-MED-GASTRIC-ULCER", "scripted", 3)
    finally:
        store.close()
    frame = load_events(run_dir, trial.trial_id)
    assert [e.tool for e in trial.events] == frame.tool.tolist()
    assert trial.grading.scores.passed and trial.grading_id == 1
    assert {v.verifier_id for v in trial.grading.verdicts} >= {"checks-first", "omeprazole", "chain"}
    assert all(isinstance(v.passed, bool) and isinstance(v.steps, tuple) for v in trial.grading.verdicts)


def test_resuming_on_changed_packages_is_one_line_that_names_them_and_what_to_do(tmp_path):
    copy_worked_examples(tmp_path)
    argv = ("run", "--suite", "task_packages/superclue", "--agent", "scripted", "--out", "run")
    assert forge(*argv, cwd=tmp_path).returncode == 0
    stored = load_trials(tmp_path / "run")
    public = tmp_path / "task_packages" / "superclue" / "SC-DDX-CHEST-PAIN" / "package.yaml"
    public.write_text(public.read_text(encoding="utf-8").replace("胸痛伴出汗", "胸痛"), encoding="utf-8")
    again = forge(*argv, "--resume", cwd=tmp_path)
    assert again.returncode == 2 and len(again.stderr.strip().splitlines()) == 1
    assert "packages differ from the stored run (SC-DDX-CHEST-PAIN)" in again.stderr
    assert "run into a new folder" in again.stderr
    assert len(load_trials(tmp_path / "run")) == len(stored)  # nothing lost, nothing added


# --- regrade --------------------------------------------------------------------------------------------------


def test_regrade_after_a_hidden_half_changed(tmp_path):
    copy_worked_examples(tmp_path)
    out = tmp_path / "run"
    ran = forge(
        "run",
        "--suite",
        "task_packages/superclue",
        "--agent",
        "scripted",
        "--trials",
        "2",
        "--out",
        "run",
        cwd=tmp_path,
    )  # relative paths, as a user types them
    assert ran.returncode == 0, ran.stderr
    events_before = load_events(out)
    assert load_trials(out).passed.all()

    hidden = tmp_path / "verifiers" / "superclue" / "SC-DDX-CHEST-PAIN.yaml"
    text = hidden.read_text(encoding="utf-8")
    ecg = "    where: {code.text: {same_as: 心电图}}\n    label: 心电图 request"  # the ecg verifier's, not the audit's entry for it
    assert text.count(ecg) == 1 and "version: 1.1.0" in text
    text = text.replace(ecg, ecg.replace("心电图", "超声心动图")).replace("version: 1.1.0", "version: 1.1.1")
    hidden.write_text(text, encoding="utf-8")

    regraded = forge("regrade", str(out))  # from another working directory
    assert regraded.returncode == 0, regraded.stderr
    assert "grading 2: 6 trial(s) regraded, 2 changed pass/fail" in regraded.stdout
    assert "SC-DDX-CHEST-PAIN 1.1.1" in regraded.stdout and "SC-OPS-ADMISSION 1.1.0" in regraded.stdout

    trials = load_trials(out)
    assert set(trials.grading_id) == {2} and len(trials) == 6
    ddx = trials[trials.task_id == "SC-DDX-CHEST-PAIN"]
    rest = trials[trials.task_id != "SC-DDX-CHEST-PAIN"]
    assert not ddx.passed.any() and (ddx.completion == 0).all()
    assert rest.passed.all()
    new_hash = load_package(tmp_path / "task_packages" / "superclue" / "SC-DDX-CHEST-PAIN").hidden_hash
    assert set(ddx.hidden_version) == {"1.1.1"} and set(ddx.hidden_hash) == {new_hash}
    on_disk = {t: load_package(tmp_path / "task_packages" / "superclue" / t).hidden.version for t in set(rest.task_id)}
    assert list(rest.hidden_version) == [on_disk[t] for t in rest.task_id]  # as they were: not regraded into another

    verdicts = load_verdicts(out)
    assert set(verdicts.grading_id) == {2}
    failing = verdicts[~verdicts.passed.astype(bool)]
    assert set(failing.verifier_id) == {"ecg"} and set(failing.trial_id) == set(ddx.trial_id)
    every = load_verdicts(out, latest=False)
    assert sorted(set(every.grading_id)) == [1, 2] and len(every) == 2 * len(verdicts)
    assert query(out, "SELECT grading_id, kind FROM gradings ORDER BY grading_id") == [(1, "run"), (2, "regrade")]
    pd.testing.assert_frame_equal(load_events(out), events_before)  # the agent did not run again

    replay = invoke("replay", str(out), "--task", "SC-DDX-CHEST-PAIN", "--agent", "scripted", "--trial", "0")
    assert replay.exit_code == 0
    assert "FAILED" in replay.stdout and "verdicts (hidden half 1.1.1)" in replay.stdout
    assert "FAIL hard success ecg" in replay.stdout


def test_regrade_grades_against_the_public_half_the_run_used(tmp_path):
    """A package changed on disk since the run does not change what its trajectories are graded against."""
    suite = copy_worked_examples(tmp_path)
    spec = RunSpec(suite=[str(suite)], agents=["scripted"], trials=1)
    asyncio.run(execute(spec, tmp_path / "run", progress=False))
    manifest = suite / "SC-OPS-ADMISSION" / "package.yaml"
    update_yaml(manifest, budget={"max_calls": 1})
    result = invoke("regrade", str(tmp_path / "run"))
    assert result.exit_code == 0, result.stderr
    assert "3 trial(s) regraded, 0 changed pass/fail" in result.stdout
    assert load_trials(tmp_path / "run").passed.all()


def test_a_store_copied_alone_regrades_replays_and_makes_its_ledger(tmp_path):
    """The store keeps every file of every package it used: nothing else is needed on another machine."""
    suite = copy_worked_examples(tmp_path / "here")
    spec = RunSpec(suite=[str(suite)], agents=["scripted", "unsafe-shortcut"], trials=1)
    asyncio.run(execute(spec, tmp_path / "here" / "run", progress=False))
    (tmp_path / "there").mkdir()
    shutil.copy(tmp_path / "here" / "run" / "run.sqlite", tmp_path / "there" / "run.sqlite")
    shutil.rmtree(tmp_path / "here")  # the packages, their hidden halves and the run folder are gone
    result = invoke("regrade", str(tmp_path / "there"))
    assert result.exit_code == 0, result.stderr
    assert "6 trial(s) regraded, 0 changed pass/fail" in result.stdout
    replay = invoke("replay", str(tmp_path / "there"), "--task", "SC-MED-GASTRIC-ULCER", "--agent", "scripted")
    assert replay.exit_code == 0 and "PASSED" in replay.stdout
    ledger = invoke("ledger", str(tmp_path / "there"), "--csv", str(tmp_path / "ledger.csv"))
    assert ledger.exit_code == 0, ledger.stderr
    rows = (tmp_path / "ledger.csv").read_text(encoding="utf-8").splitlines()
    assert rows[0].startswith("run_id,trial_id,") and len(rows) > 1
    assert all(",unsafe-shortcut," in row for row in rows[1:])  # the failures, read from the copy alone


def test_replay_reads_a_trial_without_the_model_library(run_dir):
    """``forge replay`` is a whole process a person waits for: it reads the stored records as plain dataclasses, so
    it never imports pydantic (most of its start-up time before), nor yaml (a table read, 11 ms). Importing either
    anywhere on that path fails here."""
    script = (
        "import sys; from forge_kernel.cli import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit as end:\n    assert not end.code, end.code\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'pandas', 'numpy', 'yaml')))"
    )
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            script,
            "replay",
            str(run_dir),
            "--task",
            "SC-DDX-CHEST-PAIN",
            "--agent",
            "scripted",
            "--trial",
            "0",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "verdicts (hidden half" in out.stdout
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_a_schema_1_store_is_migrated_when_opened_for_writing(run_dir, tmp_path):
    copy = tmp_path / "old"
    shutil.copytree(run_dir, copy)
    back_to_version_4(copy / "run.sqlite")
    with closing(sqlite3.connect(copy / "run.sqlite")) as conn:  # back to version 1
        conn.executescript(
            "ALTER TABLE events DROP COLUMN started_ms; ALTER TABLE verdicts DROP COLUMN error;"
            "ALTER TABLE trials DROP COLUMN attempts; DROP TABLE package_files; DROP TABLE snapshots;"
            "DROP TABLE turns; UPDATE meta SET value = '1' WHERE key = 'schema_version';"
        )
    assert len(load_trials(copy)) == 9  # read-only, as it is
    assert query(copy, "SELECT value FROM meta WHERE key = 'schema_version'") == [("1",)]
    RunStore.open(copy).close()
    assert query(copy, "SELECT value FROM meta WHERE key = 'schema_version'") == [("6",)]
    files = query(copy, "SELECT task_id, role, name FROM package_files ORDER BY task_id, role, name")
    assert {t for t, _, _ in files} == {"SC-DDX-CHEST-PAIN", "SC-MED-GASTRIC-ULCER", "SC-OPS-ADMISSION"}
    assert {(role, name) for t, role, name in files if t == "SC-MED-GASTRIC-ULCER" and role == "public"} == {
        ("public", "package.yaml"),
        ("public", "../suite.yaml"),
        ("public", "fixtures/ehr.json"),
    }
    assert query(copy, "SELECT COUNT(*) FROM events WHERE started_ms IS NULL")[0][0] > 0  # unknown before 2
    assert query(copy, "SELECT DISTINCT attempts FROM trials") == [(1,)]


def test_a_schema_2_store_is_read_as_it_is_and_migrated_when_opened_for_writing(run_dir, tmp_path):
    """Version 3 added how often each trial's agent was run; a version 2 store's trials were each run once, as far
    as it can tell. Read-only, the store is left exactly as it is (a signed release's digests stay true)."""
    copy = tmp_path / "old"
    shutil.copytree(run_dir, copy)
    back_to_version_4(copy / "run.sqlite")
    with closing(sqlite3.connect(copy / "run.sqlite")) as conn:  # back to version 2
        conn.executescript(
            "ALTER TABLE trials DROP COLUMN attempts; DROP TABLE turns;"
            "UPDATE meta SET value = '2' WHERE key = 'schema_version';"
        )
    before = (copy / "run.sqlite").read_bytes()
    with RunStore.open(copy, readonly=True) as store:
        assert {t.attempts for t in iter_trials(store)} == {1}
    assert (copy / "run.sqlite").read_bytes() == before
    assert query(copy, "SELECT value FROM meta WHERE key = 'schema_version'") == [("2",)]
    with RunStore.open(copy) as store:
        assert store.version == SCHEMA_VERSION
    assert query(copy, "SELECT value FROM meta WHERE key = 'schema_version'") == [("6",)]
    assert query(copy, "SELECT DISTINCT attempts FROM trials") == [(1,)]
    assert query(copy, "SELECT COUNT(*) FROM package_files")[0][0] > 0  # kept as they were


def test_a_schema_4_store_reads_the_same_and_has_its_call_data_moved_when_opened_for_writing(run_dir, tmp_path):
    """Version 5 keeps a trial's calls' arguments, results and changes compressed together (``call_data``) and the
    hash of its writes on its ``trials`` row; version 4 kept them in ``events``. Read-only, a version 4 store gives
    the same events, trials and write fingerprints, and is left as it is; opened for writing, it is moved over."""
    copy = tmp_path / "old"
    shutil.copytree(run_dir, copy)
    back_to_version_4(copy / "run.sqlite")
    before = (copy / "run.sqlite").read_bytes()
    pd.testing.assert_frame_equal(load_events(copy), load_events(run_dir))
    with open_run(copy) as old, open_run(run_dir) as now:
        fingerprints = now.facts()["fingerprint"]
        assert old.facts()["fingerprint"].tolist() == fingerprints.tolist() and fingerprints.nunique() > 1
        key = ("SC-MED-GASTRIC-ULCER", "scripted", 1)
        assert old.trial(*key).compact() == now.trial(*key).compact()
    assert (copy / "run.sqlite").read_bytes() == before
    with RunStore.open(copy) as store:
        assert store.version == SCHEMA_VERSION
        moved = [(t.trial_id, t.events) for t in iter_trials(store)]
    with RunStore.open(run_dir, readonly=True) as store:
        assert moved == [(t.trial_id, t.events) for t in iter_trials(store)]
    pd.testing.assert_frame_equal(load_events(copy), load_events(run_dir))
    writes = "SELECT trial_id, writes FROM trials ORDER BY trial_id"
    assert query(copy, writes) == query(run_dir, writes)
    assert query(copy, "SELECT name FROM sqlite_master WHERE name = 'events_calls'") == []
    assert query(copy, "PRAGMA freelist_count") == [(0,)]  # vacuumed: the pages events gave up are not kept


def test_a_schema_5_store_reads_the_same_and_has_its_verdict_texts_moved_when_opened_for_writing(run_dir, tmp_path):
    """Version 6 keeps each verdict's kind, category, severity and reason once in ``verdict_texts``; version 5 kept
    them in every row of the table ``verdicts``, which is a view of the same columns since. Read-only, a version 5
    store gives the same verdicts and sign-off digests of its trials, and is left as it is; opened for writing, it
    is moved over."""
    copy = tmp_path / "old"
    shutil.copytree(run_dir, copy)
    back_to_version_5(copy / "run.sqlite")
    before = (copy / "run.sqlite").read_bytes()
    verdicts = load_verdicts(run_dir)
    pd.testing.assert_frame_equal(load_verdicts(copy), verdicts)
    kind = verdicts["kind"].value_counts().index[-1]  # the rarest kind: a filter that let others through shows
    with open_run(copy) as old, open_run(run_dir) as now:
        of_kind = now.verdicts_of_kind(kind)
        pd.testing.assert_frame_equal(old.verdicts_of_kind(kind), of_kind)
    assert sorted(of_kind["reason"]) == sorted(verdicts[verdicts["kind"] == kind]["reason"])
    assert store_digests(copy)["trials"] == store_digests(run_dir)["trials"]
    assert (copy / "run.sqlite").read_bytes() == before
    with RunStore.open(copy) as store:
        assert store.version == SCHEMA_VERSION
    pd.testing.assert_frame_equal(load_verdicts(copy), verdicts)
    texts = "SELECT kind, category, severity, reason FROM verdict_texts ORDER BY 1, 2, 3, 4"
    assert query(copy, texts) == query(run_dir, texts)
    assert len(query(copy, texts)) < len(verdicts) / 3  # the texts the trials repeat are kept once
    assert query(copy, "SELECT type FROM sqlite_master WHERE name = 'verdicts'") == [("view",)]
    assert query(copy, "PRAGMA freelist_count") == [(0,)]


def test_a_verdict_text_whose_id_another_text_has_is_refused_not_stored_with_the_other_text(
    run_dir, tmp_path, monkeypatch
):
    """A text's id is a 63-bit hash: were two texts ever to share one, the second trial's write fails whole rather
    than point its verdicts at the first text."""
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    monkeypatch.setattr(run_store, "text_id", lambda *text: 1)  # every text the same id
    before = load_verdicts(copy)
    with pytest.raises(sqlite3.IntegrityError, match=r"verdict_rows\.text_id"):
        regrade(copy)
    pd.testing.assert_frame_equal(load_verdicts(copy), before)
    assert query(copy, "SELECT COUNT(*) FROM verdict_texts WHERE text_id = 1") == [(0,)]  # rolled back


def test_a_schema_3_store_has_no_model_turns_and_gets_their_table_when_opened_for_writing(run_dir, tmp_path):
    copy = tmp_path / "old"
    shutil.copytree(run_dir, copy)
    back_to_version_4(copy / "run.sqlite")
    with closing(sqlite3.connect(copy / "run.sqlite")) as conn:  # back to version 3
        conn.executescript("DROP TABLE turns; UPDATE meta SET value = '3' WHERE key = 'schema_version';")
    with RunStore.open(copy, readonly=True) as store:
        assert {tuple(t.turns) for t in iter_trials(store)} == {()}
    assert query(copy, "SELECT value FROM meta WHERE key = 'schema_version'") == [("3",)]
    RunStore.open(copy).close()
    assert query(copy, "SELECT value FROM meta WHERE key = 'schema_version'") == [("6",)]
    assert query(copy, "SELECT COUNT(*) FROM turns") == [(0,)]


def test_site_and_period_slices_default_to_the_ehr_image_and_the_clock_month(tmp_path):
    suite = copy_worked_examples(tmp_path)
    manifest = suite / "SC-OPS-ADMISSION" / "package.yaml"
    update_yaml(manifest, slices={"site": "北院"})
    asyncio.run(execute(RunSpec(suite=[str(suite)], agents=["scripted"], trials=1), tmp_path / "run", progress=False))
    slices = {task: json.loads(s) for task, s in query(tmp_path / "run", "SELECT task_id, slices FROM packages")}
    assert slices["SC-OPS-ADMISSION"]["site"] == "北院"
    assert slices["SC-DDX-CHEST-PAIN"]["site"] == "forge-synthetic-ehr"
    assert {s["period"] for s in slices.values()} == {"2026-11"}


# --- damaged, foreign and read-only stores --------------------------------------------------------------------


def damaged(kind: str, good: bytes, db: Path) -> None:
    """Write a store of the given kind at db: random bytes, a good store cut in half, another program's, empty."""
    db.parent.mkdir()
    if kind == "foreign":
        with closing(sqlite3.connect(db)) as conn:
            conn.execute("CREATE TABLE notes (body TEXT)")
            conn.commit()
    else:
        db.write_bytes(
            {"random": random.Random(0).randbytes(len(good)), "truncated": good[: len(good) // 2], "zero-byte": b""}[
                kind
            ]
        )


@pytest.mark.parametrize("command", ["summary", "regrade"])
@pytest.mark.parametrize("kind", ["random", "truncated", "foreign", "zero-byte"])
def test_a_damaged_or_foreign_store_is_one_line_and_left_as_it_is(run_dir, tmp_path, kind, command):
    db = tmp_path / "run" / "run.sqlite"
    damaged(kind, (run_dir / "run.sqlite").read_bytes(), db)
    before = db.read_bytes()
    result = invoke(command, str(db.parent))
    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith(f"{db}: (run store): not a readable run store (")
    assert db.read_bytes() == before


def test_a_read_only_open_cannot_write(run_dir):
    with RunStore.open(run_dir, readonly=True) as store, pytest.raises(sqlite3.OperationalError, match="readonly"):
        store.db.execute("DELETE FROM meta")


def as_reader(*argvs) -> list[subprocess.CompletedProcess]:
    """``forge`` commands at once, run by a user whom file modes bind: nobody when the tests run as root."""
    nobody = pwd.getpwnam("nobody")

    def drop():
        os.setgroups([])
        os.setgid(nobody.pw_gid)
        os.setuid(nobody.pw_uid)

    procs = [
        subprocess.Popen(
            [FORGE, *argv],
            cwd="/",
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=drop if os.geteuid() == 0 else None,
        )
        for argv in argvs
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    return [subprocess.CompletedProcess(p.args, p.returncode, *out) for p, out in zip(procs, outputs)]


@pytest.fixture
def read_only_copy(reference_run):
    """A copy of the reference run's store, in a folder and a file that ``as_reader`` cannot write; its folder."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "run"
        folder.mkdir()
        shutil.copy(reference_run / "run.sqlite", folder)
        if as_reader(["--version"])[0].returncode:
            pytest.skip("forge cannot run as an unprivileged user here")
        Path(tmp).chmod(0o755)
        (folder / "run.sqlite").chmod(0o444)
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)


def test_read_only_commands_work_on_a_read_only_store_and_change_nothing(read_only_copy):
    db = read_only_copy / "run.sqlite"
    before = (hashlib.sha256(db.read_bytes()).hexdigest(), db.stat().st_mtime_ns)
    run = str(read_only_copy)
    results = as_reader(
        ["summary", run],
        ["replay", run, "--task", "SC-OPS-ADMISSION", "--agent", "baseline-v1"],
        ["compare", run, run, "--baseline-agent", "baseline-v1", "--candidate-agent", "candidate-v2"],
        ["ablation", run, "--candidate", "candidate-v2", "--ablation", "candidate-v2-no-conflict"],
        ["ledger", run],
        ["regrade", run],
    )
    *readers, regrade = results
    for result in readers:
        assert (result.returncode, result.stderr) == (0, ""), result.args
    assert (regrade.returncode, regrade.stderr.splitlines()) == (
        2,
        [f"{db}: (run store): cannot be written (attempt to write a readonly database)"],
    )
    assert [p.name for p in read_only_copy.iterdir()] == ["run.sqlite"]
    assert (hashlib.sha256(db.read_bytes()).hexdigest(), db.stat().st_mtime_ns) == before


def test_a_read_only_store_with_changes_left_in_its_wal_is_refused(read_only_copy):
    db = read_only_copy / "run.sqlite"
    read_only_copy.chmod(0o755)
    db.chmod(0o644)
    with closing(sqlite3.connect(db)) as writer:  # a writer that has not checkpointed yet
        writer.execute("PRAGMA wal_autocheckpoint=0")
        writer.execute("INSERT INTO meta VALUES ('note', 'pending')")
        writer.commit()
        read_only_copy.chmod(0o555)
        (result,) = as_reader(["summary", str(read_only_copy)])
        read_only_copy.chmod(0o755)
    assert (result.returncode, result.stderr.splitlines()) == (
        2,
        [f"{db}-wal: (run store): holds changes not yet in the store: open the run once where it can be written"],
    )
