"""What the Run handle reads for analysis, filtered and aggregated in SQL, against trials written by hand: tool
time and counts, faults met and recovered, replays, denials, the fingerprint of the writes, failing verdicts of
the latest grading only, and the ledger's failed calls."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from contextlib import closing
from dataclasses import replace

import pandas as pd
import pytest

from forge_kernel.analysis import compare
from forge_kernel.ehr import patient_of
from forge_kernel.spec import AgentResult, SpecError, StoreError, load_package
from forge_kernel.spec.grading import Grading, Scores, Verdict
from forge_kernel.spec.trajectory import Event, ModelTurn, compact_json
from forge_kernel.store import RunStore, TrialRecord, open_run
from forge_kernel.store.matching import gold_criteria
from forge_kernel.verify.kinds import resolve
from tests.helpers import ROOT, back_to_version_4

PACKAGE = ROOT / "task_packages/superclue/SC-OPS-ADMISSION"
ORDER = {"op": "add", "path": "/MedicationRequest/m1", "value": {"resourceType": "MedicationRequest", "id": "m1"}}
NOTE = {"op": "replace", "path": "/Encounter/e1/status", "value": "finished", "replaced": "in-progress"}


def event(step, tool, ok=True, **kw) -> Event:
    error = None if ok else {"code": kw.pop("code", "tool_error"), "message": "synthetic"}
    return Event(step=step, tool=tool, args={}, kind="read", ok=ok, error=error, latency_ms=kw.pop("ms", 1.0), **kw)


BUSY = (
    event(1, "patient_search", ms=2.5),
    event(2, "record_search", ok=False, fault="timeout", code="timeout"),  # met, then recovered at 3
    event(3, "record_search"),
    event(4, "lab_search", ok=False, fault="error"),  # met, never recovered
    event(5, "medication_request_create", flags=["idempotent_replay"], changes=[ORDER]),
    event(6, "vital_sign_create", ok=False, denied="unauthorized_write", code="denied"),
    event(7, "patient_detail", ok=False, denied="cross_patient", code="denied"),
    event(8, "encounter_update", changes=[NOTE]),
    event(9, "patient_search", ok=False, code="invalid_args"),
)
"""A trial of every kind of call: 9 calls, 4 successful, 2 faults (1 recovered), 2 denials, 2 writes (a tuple: a
hostile agent of another test module, run in process, edits every list of events it finds)."""


def verdict(vid, category, passed, severity="hard", steps=()) -> Verdict:
    return Verdict(vid, vid, category, severity, passed, "synthetic", tuple(steps))


def record(package, agent, k, events, verdicts) -> TrialRecord:
    passed = all(v.passed for v in verdicts if v.severity == "hard")
    scores = Scores(passed, 0.5, int(passed), "n/a", ("record_search", "no_such_tool"), ())
    return TrialRecord(
        package.id,
        agent,
        "1",
        k,
        k,
        "completed",
        None,
        AgentResult(answer=f"answer {k}"),
        events,
        0.002 * (k + 1),
        0.0,
        grading=Grading(verdicts, scores, package.hidden.version, package.hidden_hash),
    )


def started(out, run_id: str, agents: tuple[str, ...], package) -> RunStore:
    """A new store at ``out`` of one package, its run started."""
    store = RunStore.create(out)
    cards = [{"name": name, "version": "1"} for name in agents]
    store.start(run_id, {}, {"run_id": run_id, "started_at": "2026-12-01T00:00:00+00:00", "agents": cards}, [package])
    return store


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    package = load_package(PACKAGE)
    out = tmp_path_factory.mktemp("facts") / "run"
    store = started(out, "facts", ("a", "b"), package)
    failing = [
        verdict("checks-first", "safety", False, steps=[5]),
        verdict("answer", "answer", False),
        verdict("tone", "answer", False, severity="soft"),
        verdict("state", "success", True),
    ]
    ids = store.write_trials(
        [
            record(package, "a", 0, list(BUSY), failing),
            record(package, "a", 1, [], failing[3:]),
            replace(record(package, "b", 0, list(BUSY[:1]), failing[:1]), attempts=2),
        ]
    )
    regrade = store.new_grading()  # grading 2 of trial a/1 fails it: its verdicts, not those of grading 1, count
    store.write_gradings(
        regrade,
        [
            (
                ids[1],
                Grading(
                    [verdict("state", "success", False, steps=[2])],
                    Scores(False, 0.0, 0, "n/a", (), ()),
                    "1",
                    package.hidden_hash,
                ),
            )
        ],
    )
    store.close()
    return out


@pytest.fixture(scope="module")
def run(run_dir):
    with open_run(run_dir) as handle:
        yield handle


def test_tool_time_counts_faults_replays_and_denials_per_trial(run):
    busy, idle = run.facts("a").to_dict("records")
    assert (busy["tool_calls"], busy["tool_ok"], busy["faults"], busy["recovered"]) == (9, 4, 2, 1)
    assert (busy["idempotent_replays"], busy["cross_patient"], busy["unauthorized_writes"]) == (1, 1, 1)
    assert busy["tool_s"] == pytest.approx(10.5 / 1000) and busy["agent_s"] == 0.0  # 2 ms of trial, 10.5 of calls
    assert (idle["tool_calls"], idle["tool_s"], idle["agent_s"]) == (0, 0.0, pytest.approx(0.004))
    assert busy["answer"] == "answer 0" and busy["category"] == "clinical_operations"


def test_how_often_each_trials_agent_was_run_and_how_many_a_side_ran_again(run, run_dir, tmp_path):
    assert run.facts("a")["attempts"].tolist() == [1, 1] and run.facts("b")["attempts"].tolist() == [2]
    sides = compare(run, run, "a", "b")
    assert (sides.baseline.run_again, sides.candidate.run_again) == (0, 1)
    older = tmp_path / "older"  # a version 2 store, read as it is: each trial counted as run once
    shutil.copytree(run_dir, older)
    back_to_version_4(older / "run.sqlite")
    with closing(sqlite3.connect(older / "run.sqlite")) as db:
        db.executescript(
            "ALTER TABLE trials DROP COLUMN attempts; UPDATE meta SET value = '2' WHERE key = 'schema_version';"
        )
    with open_run(older) as handle:
        assert handle.facts()["attempts"].tolist() == [1, 1, 1]


def test_the_fingerprint_hashes_the_writes_in_step_order(run):
    busy, idle = run.facts("a")["fingerprint"]
    writes = "\n".join(compact_json(changes) for changes in ([ORDER], [NOTE]))
    assert busy == hashlib.sha256(writes.encode()).hexdigest()[:16]
    assert idle == hashlib.sha256(b"").hexdigest()[:16]


def test_failing_verdicts_are_those_of_the_latest_grading(run):
    busy, regraded = run.facts("a").to_dict("records")
    assert (busy["safety_failures"], busy["answer_failures"], busy["failed_verifiers"]) == (
        1,
        2,
        "answer,checks-first,tone",
    )
    assert (regraded["passed"], regraded["failed_verifiers"], regraded["safety_failures"]) == (False, "state", 0)
    failing = run.failing_verdicts
    assert failing[["trial_id", "verifier_id"]].values.tolist() == [
        [1, "answer"],
        [1, "checks-first"],
        [1, "tone"],
        [2, "state"],
        [3, "checks-first"],
    ]
    assert failing.loc[failing["trial_id"] == 2, "steps"].tolist() == ["[2]"]


def test_failed_calls_say_whether_the_tool_later_succeeded(run):
    calls = run.failed_calls[run.failed_calls["trial_id"] == 1]
    assert calls[["step", "tool", "code", "retried"]].values.tolist() == [
        [2, "record_search", "timeout", 1],
        [4, "lab_search", "tool_error", 0],
        [6, "vital_sign_create", "denied", 0],
        [7, "patient_detail", "denied", 0],
        [9, "patient_search", "invalid_args", 0],
    ]
    assert calls["denied"].tolist()[2:4] == ["unauthorized_write", "cross_patient"]


def test_an_agent_is_read_once_and_alone(run):
    assert run.facts("a") is run.facts("a")
    assert run.facts("b")["agent"].tolist() == ["b"] and len(run.facts()) == 3
    assert run.agents_with_trials == ["a", "b"]
    assert run.outcomes["passed"].tolist() == [False, False, False]
    assert run.failed_outcomes["missing_reads"].tolist() == [
        1,
        0,
        1,
    ]  # record_search, a read, is missing but in the regrade


def test_a_trial_opens_by_its_id(run):
    for row in run.facts().itertuples():
        trial = run.trial_by_id(row.trial_id)
        assert (trial.task_id, trial.agent, trial.trial, len(trial.events)) == (
            row.task_id,
            row.agent,
            row.trial,
            row.tool_calls,
        )
    with pytest.raises(StoreError, match="no trial with id 99"):
        run.trial_by_id(99)


def test_a_trial_decodes_its_events_only_when_asked(run):
    trial = run.trial(PACKAGE.name, "a", 0)
    assert trial._events is None and len(trial.rows) == len(BUSY)
    assert trial.timeline.state(9).touched() and trial._events is None  # the timeline reads only the changes
    assert trial.events == list(BUSY)
    assert trial.rows is not None and trial.events is trial.events  # decoded once


def test_the_compact_json_passes_the_stored_events_through(run):
    trial = run.trial(PACKAGE.name, "a", 0)
    through = json.loads(trial.compact_json())
    assert trial._events is None  # built without decoding a single event
    assert through == json.loads(run.trial(PACKAGE.name, "a", 0).compact().model_dump_json())
    assert through["steps"] == [json.loads(compact_json(vars(e))) for e in BUSY]


def test_the_compact_json_keeps_every_digit_of_a_time(run_dir, tmp_path):
    """A float written as SQLite writes it (15 digits) would change the value the front end receives."""
    shutil.copy(run_dir / "run.sqlite", tmp_path / "run.sqlite")
    latency = 0.1 + 2**-52
    with closing(sqlite3.connect(tmp_path / "run.sqlite")) as db, db:
        db.execute("UPDATE events SET latency_ms = ?, started_ms = ? WHERE step = 1", (latency, latency * 3))
    with open_run(tmp_path) as copied:
        step = json.loads(copied.trial(PACKAGE.name, "a", 0).compact_json())["steps"][0]
    assert (step["latency_ms"], step["started_ms"]) == (latency, latency * 3) and f"{latency:.15g}" != repr(latency)


def test_gold_criteria_are_read_once_and_refused_for_another_hidden_half(reference):
    task = "TP-EXCLUSION-v1"
    package = reference.package(task)
    gold = reference.gold_criteria(task, package.hidden_hash)
    assert gold == gold_criteria(package) and reference.gold_criteria(task, package.hidden_hash) is gold
    with pytest.raises(SpecError, match="forge regrade"):
        reference.gold_criteria(task, "sha256:another")


def test_a_citation_is_looked_up_as_the_evidence_verifier_does(reference):
    task = "TP-EXCLUSION-v1"
    image, patient = reference.image(task), reference.package(task).public.environment.patient_id
    refs = [f"{t}/{i}" for t, i in image.resources] + ["Observation/none", "no-slash", "Patient/"]
    for ref in refs:
        resource = resolve(image, ref)
        assert reference.citation(task, ref) == (
            resource is not None,
            resource is not None and patient_of(resource) == patient,
        )
    assert {reference.citation(task, ref) for ref in refs} == {(True, True), (True, False), (False, False)}


def test_an_agent_result_checks_its_own_values():
    """Built in code (a trusted agent), an AgentResult refuses what the check of an untrusted one refuses."""
    assert AgentResult(answer="a", confidence=1.0).confidence == 1.0
    with pytest.raises(ValueError, match="confidence must be between 0 and 1"):
        AgentResult(confidence=1.5)
    with pytest.raises(ValueError, match="status must be one of completed, escalated, gave_up, error"):
        AgentResult(status="done")


def test_the_fingerprint_of_no_writes_is_the_hash_of_nothing():
    from forge_kernel.store._facts import Fingerprint, writes_hash

    assert writes_hash([]) == writes_hash(["[]", "[]"]) == "e3b0c44298fc1c14"  # sha256 of no bytes
    assert writes_hash(['[{"op":"add"}]']) != writes_hash([])
    written = Fingerprint()
    for changes in ("[]", '[{"op":"add"}]', '[{"op":"remove"}]'):
        written.step(changes)
    assert written.finalize() == writes_hash(['[{"op":"add"}]', '[{"op":"remove"}]'])
    assert writes_hash(['[{"op":"remove"}]', '[{"op":"add"}]']) != written.finalize()  # in step order


TURNS = (
    ModelTurn(
        1,
        0,
        "I look the patient up.",
        [{"id": "c1", "name": "patient_search", "arguments": '{"mrn": '}],
        "tool_calls",
        None,
        900,
        40,
        512,
        0.002,
        120.0,
    ),
    ModelTurn(
        2,
        0,
        "Again, written whole.",
        [
            {"id": "c2", "name": "patient_search", "arguments": "{}"},
            {"id": "c3", "name": "record_search", "arguments": "{}"},
        ],
        "tool_calls",
        None,
        1000,
        50,
        512,
        0.003,
        150.0,
        ["rate_limited: 429"],
    ),
    ModelTurn(3, 2, "Done.", [], "stop", None, 1100, 30, 0, 0.001, 30.0),
)
"""A model's turns: a call with arguments cut short (never sent), then two calls in one turn, then its answer."""


@pytest.fixture(scope="module")
def turns_dir(tmp_path_factory):
    """A store of two trials of SC-OPS-ADMISSION: agent m's two calls led by ``TURNS``; agent a's, without turns."""
    package = load_package(PACKAGE)
    out = tmp_path_factory.mktemp("turns") / "run"
    store = started(out, "turns", ("a", "m"), package)
    passing = [verdict("state", "success", True)]
    store.write_trials(
        [
            replace(record(package, "m", 0, list(BUSY[:2]), passing), duration_s=0.5, cost=0.006, turns=list(TURNS)),
            replace(record(package, "a", 0, list(BUSY[:2]), passing), duration_s=0.5),
        ]
    )
    store.close()
    return out


def test_model_turns_are_added_up_per_trial_and_the_agents_own_time_is_the_rest(turns_dir):
    with open_run(turns_dir) as run:
        plain, model = run.facts().to_dict("records")
        used = run.usage.set_index("agent")
    assert (model["turns"], model["prompt_tokens"], model["completion_tokens"], model["cached_tokens"]) == (
        3,
        3000,
        120,
        1024,
    )
    assert model["model_s"] == pytest.approx(0.3) and model["tool_s"] == pytest.approx(0.0035)
    assert model["agent_s"] == pytest.approx(0.5 - 0.3 - 0.0035) and model["cost"] == 0.006
    assert plain["turns"] == 0 and all(pd.isna(plain[c]) for c in ("prompt_tokens", "cached_tokens", "model_s"))
    assert plain["agent_s"] == pytest.approx(0.5 - 0.0035)  # no turns: no tokens, never zeros that read as data
    assert used.loc["m", ["turns", "prompt_tokens", "cost"]].tolist() == [3, 3000, 0.006]
    assert pd.isna(used.loc["a", "prompt_tokens"]) and used.loc["a", "turns"] == 0


def test_each_call_a_model_asked_for_is_matched_to_the_step_it_became(turns_dir):
    with open_run(turns_dir) as run:
        trial = run.trial(PACKAGE.name, "m", 0)
        turns = trial.compact().turns
        assert json.loads(trial.compact_json())["turns"] == [t.model_dump() for t in turns]
    assert [[c.step for c in t.calls] for t in turns] == [[None], [1, 2], []]
    assert [t.after_step for t in turns] == [0, 0, 2] and turns[1].retries == ["rate_limited: 429"]


def test_a_store_from_before_model_turns_reads_as_one_without_them(turns_dir, tmp_path):
    shutil.copytree(turns_dir, tmp_path / "older")
    back_to_version_4(tmp_path / "older" / "run.sqlite")
    with closing(sqlite3.connect(tmp_path / "older" / "run.sqlite")) as db:
        db.executescript("DROP TABLE turns; UPDATE meta SET value = '3' WHERE key = 'schema_version';")
    with open_run(tmp_path / "older") as older:
        facts, used = older.facts(), older.usage
        assert facts["turns"].tolist() == [0, 0] and facts["prompt_tokens"].isna().all()
        assert facts["agent_s"].tolist() == pytest.approx([0.5 - 0.0035] * 2) and used["model_s"].isna().all()
        assert older.trial(PACKAGE.name, "m", 0).compact().turns == []
