"""A verifier that raises gives a verdict that never passes, marked as an error with the exception in its reason;
the other verifiers still run, the run goes on, and the failure ledger puts such trials in the ``verifier`` class."""

from __future__ import annotations

import asyncio
import importlib
import shutil
import signal
import threading
import time
from pathlib import Path

import pytest
import yaml

from forge_kernel.analysis.ledger import COMPONENT, failure_ledger
from forge_kernel.engine import RunSpec, execute
from forge_kernel.engine.grading import grade_trajectory
from forge_kernel.spec import load_package
from forge_kernel.store import load_trials, load_verdicts, open_run
from forge_kernel.verify import Verdict, score
from tests.agents_for_tests import FLOOD
from tests.helpers import copy_suite_files

grade_module = importlib.import_module("forge_kernel.verify.grade")
"""The module (``forge_kernel.verify.grade`` as an attribute is the function)."""

ROOT = Path(__file__).resolve().parents[2]
BROKEN = "SC-OPS-ADMISSION"
"""Gets the plugin verifier that raises."""
INTACT = "SC-MED-GASTRIC-ULCER"
PLUGIN = '''
from forge_kernel.spec.package import Strict
from forge_kernel.verify import Outcome, verifier


@verifier("answer.words_per_line_test")
def words_per_line(ctx, p: Strict) -> Outcome:
    """At most 40 words per paragraph (divides by the number of blank lines: a bug)."""
    return Outcome(len(ctx.result.answer.split()) / ctx.result.answer.count("\\n\\n") <= 40, "ok")
'''


def suite_with(root: Path, added: dict[str, dict | None]) -> Path:
    """The suite's files and both halves of each task of ``added`` under root, the verifier use given for a task
    inserted second in its hidden half; the suite folder."""
    copy_suite_files(root)
    for task, use in added.items():
        shutil.copytree(ROOT / "task_packages" / "superclue" / task, root / "task_packages" / "superclue" / task)
        hidden = yaml.safe_load((ROOT / "verifiers" / "superclue" / f"{task}.yaml").read_text(encoding="utf-8"))
        if use is not None:
            hidden["verifiers"].insert(1, use)
        (root / "verifiers" / "superclue" / f"{task}.yaml").write_text(
            yaml.safe_dump(hidden, allow_unicode=True), encoding="utf-8"
        )
    return root / "task_packages" / "superclue"


def suite_with_broken_verifier(root: Path, severity: str = "hard") -> Path:
    """Both halves of BROKEN (with the raising plugin verifier) and of INTACT under root; the suite folder."""
    (root / "verifiers" / "plugins").mkdir(parents=True)
    (root / "verifiers" / "plugins" / "answer.words_per_line_test.py").write_text(PLUGIN, encoding="utf-8")
    wordy = {"id": "wordy", "kind": "answer.words_per_line_test", "category": "answer", "severity": severity}
    return suite_with(root, {BROKEN: wordy, INTACT: None})


@pytest.mark.parametrize("severity", ["hard", "soft"])
def test_a_raising_verifier_gives_an_error_verdict_and_the_others_still_run(tmp_path, severity):
    package = load_package(suite_with_broken_verifier(tmp_path, severity) / BROKEN)
    grading = asyncio.run(grade_trajectory(package, package.hidden.gold)).grading
    verdicts = {v.verifier_id: v for v in grading.verdicts}
    assert list(verdicts) == [u.id for u in package.hidden.verifiers]
    wordy = verdicts.pop("wordy")
    assert (wordy.passed, wordy.error, wordy.severity) == (False, True, severity)
    assert wordy.reason == "error: ZeroDivisionError: division by zero"
    assert all(v.passed and not v.error for v in verdicts.values())
    assert grading.scores.passed is False  # an error is never a pass, whatever the severity


def test_a_verdict_that_fails_without_an_error_is_no_error(tmp_path):
    package = load_package(suite_with_broken_verifier(tmp_path) / BROKEN)
    answered = package.hidden.gold.model_copy(update={"answer": "a\n\nb"})
    grading = asyncio.run(grade_trajectory(package, answered)).grading
    wordy = next(v for v in grading.verdicts if v.verifier_id == "wordy")
    assert (wordy.passed, wordy.error) == (True, False)


def test_only_an_error_fails_a_trial_through_a_soft_verdict():
    verdicts = [Verdict("state", "state.resource", "success", "hard", True, "")]
    soft_fail = Verdict("style", "answer.text", "answer", "soft", False, "keyword missing")
    soft_error = Verdict("style", "answer.text", "answer", "soft", False, "error: KeyError: 'x'", error=True)
    assert score(["a"], [], [*verdicts, soft_fail]).passed is True
    assert score(["a"], [], [*verdicts, soft_error]).passed is False


def test_the_run_goes_on_and_the_ledger_blames_the_verifier(tmp_path):
    suite = suite_with_broken_verifier(tmp_path)
    out = tmp_path / "run"
    asyncio.run(
        execute(
            RunSpec(suite=[str(suite)], agents=["candidate-v2", "unsafe-shortcut"], trials=1, seed=0),
            out,
            progress=False,
        )
    )
    trials = load_trials(out)
    assert len(trials) == 4 and set(trials["status"]) == {"completed"}
    stored = load_verdicts(out)
    wordy = stored[stored["verifier_id"] == "wordy"]
    assert len(wordy) == 2 and (wordy["passed"] == 0).all()
    assert wordy["reason"].str.startswith("error: ZeroDivisionError").all()
    assert (stored["verifier_id"] == "chain").sum() == 4  # every other verifier of every trial ran

    with open_run(out) as run:
        ledger = failure_ledger(run).table.set_index(["task_id", "agent"])
    for agent in ("candidate-v2", "unsafe-shortcut"):
        row = ledger.loc[(BROKEN, agent)]
        assert row["taxonomy"] == "verifier" and row["component"] == COMPONENT["verifier"]
    assert ledger.loc[(INTACT, "unsafe-shortcut"), "taxonomy"] == "policy"  # a plain failure is not the verifier's
    assert (INTACT, "candidate-v2") not in ledger.index


# --- an answer written against the checks' patterns ------------------------------------------------------------

BACKTRACKING = {
    "id": "weight-change",
    "kind": "answer.number",
    "category": "answer",
    "severity": "soft",
    "params": {"value": 2.0, "tol": 0.1, "pattern": r"(\d+(?:\.\d+)?)(?:\s*kg)?\s*(?:→|->)\s*"},
}
"""An author's pattern that backtracks over a long run of digits, slower than its length squared (4,000 digits took
5 s, 100,000 did not finish in 10 minutes)."""


def suite_with_backtracking_pattern(root: Path) -> Path:
    """INTACT with BACKTRACKING among its verifiers (not the first), under root; the suite folder."""
    return suite_with(root, {INTACT: BACKTRACKING})


@pytest.fixture
def short_grading(monkeypatch):
    monkeypatch.setattr(grade_module, "GRADING_SECONDS", 0.2)


def test_grading_that_runs_past_its_time_ends_in_error_verdicts(tmp_path, short_grading):
    """The verifiers done keep their verdicts; the one running and the rest fail as errors, and the trial fails."""
    package = load_package(suite_with_backtracking_pattern(tmp_path) / INTACT)
    flooded = package.hidden.gold.model_copy(update={"answer": FLOOD})
    grading = asyncio.run(grade_trajectory(package, flooded)).grading
    ids = [v.verifier_id for v in grading.verdicts]
    assert ids == [u.id for u in package.hidden.verifiers]
    done, rest = grading.verdicts[: ids.index("weight-change")], grading.verdicts[ids.index("weight-change") :]
    assert done and not any(v.error for v in done)
    assert {(v.passed, v.error, v.reason) for v in rest} == {
        (False, True, "error: not graded: the trial's grading ran past 0.2 s")
    }
    assert grading.scores.passed is False
    gold = asyncio.run(grade_trajectory(package, package.hidden.gold)).grading
    assert gold.scores.passed, [v for v in gold.verdicts if not v.passed]  # the limit does not touch a normal trial


@pytest.mark.parametrize("started_in", ["the main thread", "another thread, as a notebook's run is"])
def test_an_agent_flooding_its_answer_fails_its_own_trials_and_the_run_goes_on(tmp_path, short_grading, started_in):
    """The limit holds in the run's grader process, whichever thread of the harness started the run."""
    suite = suite_with_backtracking_pattern(tmp_path)
    flood = "tests.agents_for_tests:DigitFlood"
    out = tmp_path / "run"
    spec = RunSpec(suite=[str(suite)], agents=["scripted", flood], trials=2, trust=[flood])
    if started_in == "the main thread":
        asyncio.run(execute(spec, out, progress=False))
    else:
        thread = threading.Thread(target=asyncio.run, args=(execute(spec, out, progress=False),))
        thread.start()
        thread.join()
    trials = load_trials(out).set_index("agent")
    assert trials.loc["scripted"].passed.all() and not trials.loc["digit-flood"].passed.any()
    stored = load_verdicts(out)
    flooded = stored[stored.trial_id.isin(trials.loc["digit-flood"].trial_id) & (stored.verifier_id == "weight-change")]
    assert len(flooded) == 2 and flooded.reason.str.endswith("grading ran past 0.2 s").all()


def test_the_time_limit_leaves_another_timer_of_the_process_alone():
    signal.setitimer(signal.ITIMER_REAL, 60)
    try:
        with grade_module.time_limit(0.01):
            time.sleep(0.05)  # no OutOfTime: the limit is not set while the other timer runs
        assert 59 < signal.getitimer(signal.ITIMER_REAL)[0] <= 60
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    with pytest.raises(grade_module.OutOfTime), grade_module.time_limit(0.01):
        time.sleep(0.05)
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0
