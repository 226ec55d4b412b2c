"""The failure browser's Python side, through widget state: rows, filters, sort, a click that plays a trial, and
triage saved to the triage file (and a bad edit refused, the file as it was)."""

from __future__ import annotations

import json
import threading

import pytest

from forge_kernel.analysis import failure_ledger, load_triage
from forge_kernel.analysis.triage import TriageFile
from forge_kernel.spec.compact import SYNTHETIC_BANNER
from forge_kernel.spec.errors import SpecError, UsageError
from forge_kernel.widgets import FailureBrowser, ReplayPlayer, failures as failures_module


def single_hard(browser: FailureBrowser) -> dict:
    """A failed trial with exactly one failing hard verifier, which another agent's trial of the task fails first
    too (so that a decision for one agent can be told from one for every agent)."""

    def shared(row: dict) -> bool:
        first = row["failing"][0]["id"]
        return any(
            r["task_id"] == row["task_id"] and r["agent"] != row["agent"] and r["failing"][0]["id"] == first
            for r in browser._rows
        )

    return next(r for r in browser._rows if [v["severity"] for v in r["failing"]].count("hard") == 1 and shared(r))


def front_end_edit(browser: FailureBrowser, row: dict, **edit) -> dict:
    """Send a triage edit as the table's front end does; the message it gets back."""
    verifier = next(v["id"] for v in row["failing"] if v["severity"] == "hard")
    content = {
        "action": "triage",
        "trial_id": row["trial_id"],
        "verifier": verifier,
        "decision": "confirmed",
        "comment": "skips the check",
        "reviewer": "reviewer-a",
        "every_agent": False,
        **edit,
    }
    browser._message(browser.table, content, [])
    return browser.table.message


def test_the_table_holds_every_failed_trial(reference):
    browser = FailureBrowser(reference)
    ledger = failure_ledger(reference).table
    failed = reference.outcomes[~reference.outcomes["passed"]]
    assert browser.table.total == len(ledger) == len(failed) == len(browser.rows)
    assert {r["trial_id"] for r in browser.rows} == set(failed["trial_id"])
    assert browser.table.banner == SYNTHETIC_BANNER
    criticals = [r["critical"] for r in browser.rows]
    assert criticals == sorted(criticals, reverse=True) and criticals[0]  # critical failures first
    row = next(r for r in browser.rows if r["task_id"] == "SC-MED-GASTRIC-ULCER" and r["agent"] == "unsafe-shortcut")
    assert (row["suite"], row["dimension"], row["error_class"], row["triage"]) == (
        "superclue",
        "用药管理",
        "policy",
        "open",
    )
    assert row["failing"][0] == {"id": "checks-first", "category": "safety", "severity": "hard"}  # safety first
    assert set(browser.table.options["agent"]) == set(failed["agent"])


def test_filters_from_python_and_from_the_front_end(reference):
    browser = FailureBrowser(reference, agent="unsafe-shortcut")
    outcomes = reference.outcomes
    assert browser.table.matching == int((~outcomes["passed"] & (outcomes["agent"] == "unsafe-shortcut")).sum())
    assert {r["agent"] for r in browser.rows} == {"unsafe-shortcut"}
    browser.table.filters = {**browser.table.filters, "dimension": "设备监测"}  # as the front end sets it
    assert browser.rows and {(r["agent"], r["dimension"]) for r in browser.rows} == {("unsafe-shortcut", "设备监测")}
    browser.filter(dimension=None, verifier="checks-first")
    assert browser.table.filters == {"agent": "unsafe-shortcut", "verifier": "checks-first"}
    assert browser.rows and all("checks-first" in {v["id"] for v in r["failing"]} for r in browser.rows)
    browser.filter(agent="candidate-v2", verifier=None, triage="confirmed")
    assert browser.rows == [] and browser.table.matching == 0
    with pytest.raises(UsageError, match="FailureBrowser: severity: no such filter"):
        browser.filter(severity="hard")


def test_sorting_by_a_column(reference):
    browser = FailureBrowser(reference)
    browser.table.sort = ["task_id", "desc"]
    tasks = [r["task_id"] for r in browser.rows]
    assert tasks == sorted(tasks, reverse=True) and tasks[0] != tasks[-1]
    browser.table.sort = ["agent", "asc"]
    assert [r["agent"] for r in browser.rows] == sorted(r["agent"] for r in browser.rows)


def test_a_click_plays_the_trial_below_the_table(reference):
    browser = FailureBrowser(reference, agent="unsafe-shortcut")
    assert browser.children == (browser.table,) and browser.player is None
    first, second = browser.rows[0], browser.rows[1]
    browser.table.selected = first["trial_id"]  # the click
    player = browser.player
    assert isinstance(player, ReplayPlayer) and browser.children == (browser.table, player)
    played = json.loads(player.trajectory)
    assert (played["task_id"], played["agent"], played["trial"]) == (
        first["task_id"],
        "unsafe-shortcut",
        first["trial"],
    )
    assert [v["id"] for v in browser.table.verdicts] == [v["id"] for v in first["failing"]]
    reasons = {v.verifier_id: v.reason for v in reference.trial_by_id(first["trial_id"]).grading.verdicts}
    assert all(v["reason"] == reasons[v["id"]] != "" for v in browser.table.verdicts)  # why it failed, to triage
    browser.table.selected = second["trial_id"]
    assert browser.player is player and json.loads(player.trajectory)["task_id"] == second["task_id"]
    browser.play(None)
    assert browser.children == (browser.table,) and browser.table.verdicts == []
    with pytest.raises(UsageError, match="trial_id: 999999 is no failed trial of this run"):
        browser.play(999999)


def test_each_row_says_how_many_trials_of_its_task_its_agent_passed(reference):
    browser = FailureBrowser(reference)
    outcomes = reference.outcomes
    for row in browser.rows:
        mine = outcomes[(outcomes["task_id"] == row["task_id"]) & (outcomes["agent"] == row["agent"])]
        k, n = int(mine["passed"].sum()), len(mine)
        assert (row["passed"], row["trials"], row["passes"]) == (k, n, f"{k} of {n}"), row
        assert row["stability"] == ("unstable" if 0 < k < n else "failed every trial"), row
        passing = row["passing_trial_id"]
        assert (passing is not None) == (0 < k < n)
        if passing is not None:
            assert passing in set(mine[mine["passed"]]["trial_id"])
    browser.filter(stability="unstable")
    assert browser.rows and {r["agent"] for r in browser.rows} >= {"flaky-simulator"}
    assert all(0 < r["passed"] < r["trials"] for r in browser.rows)
    browser.filter(stability=None)
    browser.table.sort = ["passes", "asc"]
    assert [r["passed"] / r["trials"] for r in browser.rows] == sorted(r["passed"] / r["trials"] for r in browser.rows)


def test_an_unstable_row_plays_its_failed_trial_beside_a_passing_one(reference):
    browser = FailureBrowser(reference, stability="unstable")
    row = browser.rows[0]
    browser.table.selected = row["trial_id"]  # the click
    player = browser.player
    assert player is not None and player.other is not None
    failed, passed = json.loads(player.trajectory), json.loads(player.other)
    assert (failed["task_id"], failed["agent"], failed["trial"]) == (row["task_id"], row["agent"], row["trial"])
    assert (passed["task_id"], passed["agent"]) == (row["task_id"], row["agent"]) and passed["trial"] != row["trial"]
    assert reference.trial_by_id(row["passing_trial_id"]).grading.scores.passed
    assert browser.table.beside == {"trial_id": row["passing_trial_id"], "trial": passed["trial"]}
    browser._message(browser.table, {"action": "beside", "on": False}, [])  # "show the failed trial alone"
    assert player.other is None and browser.table.beside == {} and browser.table.selected == row["trial_id"]
    browser._message(browser.table, {"action": "beside", "on": True}, [])
    assert json.loads(player.other)["trial"] == passed["trial"]
    browser.filter(stability="failed every trial")
    browser.table.selected = browser.rows[0]["trial_id"]
    assert player.other is None and browser.table.beside == {}  # nothing passed to put beside it


def test_triage_is_saved_to_the_file_the_ledger_reads(reference, tmp_path):
    path = tmp_path / "triage.yaml"
    browser = FailureBrowser(reference, path, reviewer="reviewer-a")
    row = single_hard(browser)
    browser.table.selected = row["trial_id"]
    assert front_end_edit(browser, row)["kind"] == "saved"
    triage = load_triage(path)
    (decision,) = triage.decisions
    assert (decision.task_id, decision.agent, decision.decision, decision.reviewer, decision.comment) == (
        row["task_id"],
        row["agent"],
        "confirmed",
        "reviewer-a",
        "skips the check",
    )
    ledger = failure_ledger(reference, triage).table.set_index("trial_id")
    assert ledger.loc[row["trial_id"], "fix_status"] == "confirmed"
    assert next(r for r in browser.rows if r["trial_id"] == row["trial_id"])["triage"] == "confirmed"
    assert (
        browser.table.verdicts[0]["decision"] == "confirmed"
        and browser.table.verdicts[0]["comment"] == "skips the check"
    )
    others = [
        r
        for r in browser._rows
        if r["task_id"] == row["task_id"]
        and r["agent"] != row["agent"]
        and r["failing"][0]["id"] == row["failing"][0]["id"]
    ]
    assert all(r["triage"] == "open" for r in others)  # this agent's failures only

    front_end_edit(browser, row, decision="wrong_gold", comment="the gold orders it too", every_agent=True)
    assert {d.agent for d in load_triage(path).decisions} == {row["agent"], None}
    front_end_edit(browser, row, decision="open")
    front_end_edit(browser, row, decision="open", every_agent=True)
    assert load_triage(path).decisions == [] and browser.table.verdicts[0]["decision"] == "open"


def test_a_bad_triage_edit_is_refused_with_a_clear_message(reference, tmp_path):
    path = tmp_path / "triage.yaml"
    browser = FailureBrowser(reference, path, reviewer="reviewer-a")
    row = single_hard(browser)
    front_end_edit(browser, row)
    before = path.read_bytes()
    message = front_end_edit(browser, row, decision="fixed", comment=" ")
    verifier = row["failing"][0]["id"]
    assert message == {
        "kind": "error",
        "verifier": verifier,
        "text": f"{verifier} fixed: comment: write why: a triage decision is kept with it",
    }
    assert front_end_edit(browser, row, reviewer="")["text"] == (
        f"{verifier} confirmed: reviewer: write your name: a triage decision is kept with it"
    )
    with pytest.raises(SpecError, match=r"decisions\.0\.decision: Input should be 'confirmed'"):
        browser.save_triage(row["trial_id"], row["failing"][0]["id"], "maybe", "why not")
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["triage.yaml"]
    assert next(r for r in browser.rows if r["trial_id"] == row["trial_id"])["triage"] == "confirmed"
    with pytest.raises(UsageError, match="verifier: no-such-check did not fail in this trial"):
        browser.save_triage(row["trial_id"], "no-such-check", "confirmed", "x")
    with pytest.raises(UsageError, match="no triage file to save to"):
        FailureBrowser(reference).save_triage(row["trial_id"], row["failing"][0]["id"], "confirmed", "x")


def test_without_the_read_back_check_a_bad_edit_would_reach_the_file(reference, tmp_path, monkeypatch):
    """The check that guards the file is the triage file's own reader: take it away and the bad edit is written,
    and the ledger then refuses the file."""
    path = tmp_path / "triage.yaml"
    browser = FailureBrowser(reference, path, reviewer="reviewer-a")
    row = single_hard(browser)
    monkeypatch.setattr(failures_module, "load_triage", lambda _path: TriageFile())
    assert front_end_edit(browser, row, decision="maybe")["kind"] == "saved"
    with pytest.raises(SpecError, match=r"decisions\.0\.decision"):
        load_triage(path)


def test_a_click_sent_on_a_kernel_subshell_plays_the_trial(reference_run):
    """JupyterLab sends widget messages on a subshell, a thread of the kernel's own; the trial is read there."""
    browser = FailureBrowser(reference_run, agent="unsafe-shortcut")
    row = browser.rows[0]
    clicked = threading.Thread(target=browser.table.set_state, args=({"selected": row["trial_id"]},))
    clicked.start()
    clicked.join()
    assert browser.table.message == {} and browser.player is not None
    assert json.loads(browser.player.trajectory)["task_id"] == row["task_id"]
