"""The judge verifier kind (judge.rubric) against a real chat-completions server on 127.0.0.1 (tests/chat_server.py):
its verdicts are soft and of their own category, a failure is the label unknown, it sees only the instruction, the
current patient's records the agent read and the answer, and its agreement with its labelled set (SYNTHETIC data)."""

from __future__ import annotations

import asyncio
import json
import random
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from forge_kernel.analysis import cohens_kappa
from forge_kernel.cli import main
from forge_kernel.engine import RunSpec, check_package, execute, grade_trajectory, regrade
from forge_kernel.report.judges import judge_agreement_rows
from forge_kernel.report.release import recorded
from forge_kernel.spec import SpecError, VerifierUse, load_package
from forge_kernel.store import open_run
from forge_kernel.verify import bind
from forge_kernel.verify.kinds import labelled_pairs
from tests.chat_server import ChatServer, Reply
from tests.helpers import ROOT, copy_worked_examples

TASK = "SC-MED-GASTRIC-ULCER"
LABELLED = ROOT / "verifiers/judge/explanation_clarity.yaml"
CLARITY = {
    "id": "clarity",
    "kind": "judge.rubric",
    "category": "rubric",
    "severity": "soft",
    "params": {
        "name": "explanation_clarity",
        "description": "the explanation to the patient is clear and kind",
        "labels": ["clear", "unclear"],
        "passing": ["clear"],
        "model": "../judge/model.yaml",
    },
}


def replying(label) -> Reply:
    return Reply(content=json.dumps({"label": label}))


def answer_of(request: dict) -> str:
    return request["messages"][1]["content"].split("The agent's answer: ", 1)[1]


def written_labels(request: dict) -> Reply:
    """The label the labelled set gives the answer asked about."""
    items = yaml.safe_load(LABELLED.read_text(encoding="utf-8"))["items"]
    return replying(next(item["label"] for item in items if item["answer"] == answer_of(request)))


@pytest.fixture
def suite(tmp_path) -> Path:
    """The worked examples under tmp_path, the judge's folder beside the suites (its labelled set and a model config
    written by ``serve``)."""
    copy_worked_examples(tmp_path)
    (tmp_path / "verifiers/judge").mkdir()
    shutil.copy(LABELLED, tmp_path / "verifiers/judge")
    return tmp_path


JUDGE_TIMEOUT = 4.0
"""The judge's timeout in these tests: long enough for a loaded 2-core machine, short enough to wait out once."""


def serve(suite: Path, script) -> ChatServer:
    """A scripted server, and the judge's model config pointing at it."""
    server = ChatServer(script)
    (suite / "verifiers/judge/model.yaml").write_text(
        yaml.safe_dump({"base_url": server.url, "model": "judge", "seed": 0, "timeout_s": JUDGE_TIMEOUT, "retries": 0})
    )
    return server


def with_judge(suite: Path, **use) -> Path:
    """The package folder of TASK, its hidden half using the clarity judge (changed by ``use``)."""
    hidden = suite / "verifiers/superclue" / f"{TASK}.yaml"
    doc = yaml.safe_load(hidden.read_text(encoding="utf-8"))
    doc["verifiers"].append({k: v for k, v in {**CLARITY, **use}.items() if v is not None})
    hidden.write_text(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return suite / "task_packages/superclue" / TASK


def graded(folder: Path, judge: bool = True, **trajectory):
    package = load_package(folder)
    gold = package.hidden.gold.model_copy(update=trajectory)
    return asyncio.run(grade_trajectory(package, gold, judge=judge)).grading


def test_a_judge_verdict_is_soft_of_its_own_category_and_records_model_prompt_and_config(suite):
    with serve(suite, lambda request: replying("clear")):
        folder = with_judge(suite)
        grading = graded(folder)
    verdict = grading.verdicts[-1]
    assert (verdict.verifier_id, verdict.severity, verdict.category, verdict.passed) == (
        "clarity",
        "soft",
        "rubric",
        True,
    )
    assert verdict.reason.startswith("label=clear model=judge prompt=v1 config=sha256:"), verdict.reason
    without = graded(folder, judge=False)
    assert "clarity" not in [v.verifier_id for v in without.verdicts]
    assert without.scores == grading.scores


def test_a_run_leaves_the_judge_out_and_forge_regrade_adds_its_verdict_as_a_new_grading(suite, tmp_path):
    with serve(suite, lambda request: replying("unclear")) as server:
        folder = with_judge(suite)
        out = tmp_path / "run"
        asyncio.run(execute(RunSpec(suite=[str(folder)], agents=["candidate-v2"], trials=1), out, progress=False))
        assert not server.requests  # a run's own grading does not judge
        with open_run(out) as run:
            before = run.trial(TASK, "candidate-v2", 0).grading
        outcome = regrade(out)
        assert len(server.requests) == 1
    with open_run(out) as run:
        after = run.trial(TASK, "candidate-v2", 0).grading
    assert "clarity" not in [v.verifier_id for v in before.verdicts] and outcome.changed == 0
    verdict = next(v for v in after.verdicts if v.verifier_id == "clarity")
    assert (verdict.severity, verdict.passed, after.scores.passed) == ("soft", False, before.scores.passed)
    assert verdict.reason.startswith("label=unclear model=judge prompt=v1 config=sha256:")


@pytest.mark.parametrize(
    "reply, why",
    [
        (Reply(content="The explanation is quite clear, I would say."), "unparseable reply: 'The explanation is"),
        (Reply(content=json.dumps({"label": "excellent"})), "unparseable reply:"),
        (
            Reply(status=500, error={"message": "overloaded", "type": "server_error"}),
            "model error: ModelError: server_error: 500 overloaded",
        ),
        (Reply(content=json.dumps({"label": "clear"}), delay=JUDGE_TIMEOUT + 1), "model error: ModelError: timeout"),
        (replying("unknown"), None),
    ],
)
def test_garbage_an_http_error_or_a_timeout_is_the_label_unknown_and_leaves_pass_and_completion_alone(
    suite, reply, why
):
    with serve(suite, lambda request: reply):
        folder = with_judge(suite)
        grading = graded(folder)
    verdict = grading.verdicts[-1]
    assert verdict.verifier_id == "clarity" and not verdict.passed and not verdict.error
    assert verdict.reason.startswith("label=unknown model=judge prompt=v1 config=sha256:"), verdict.reason
    assert why is None or why in verdict.reason, verdict.reason
    assert grading.scores == graded(folder, judge=False).scores and grading.scores.passed


def test_a_judge_that_cannot_be_reached_is_unknown_too(suite):
    with serve(suite, lambda request: replying("clear")):
        folder = with_judge(suite)
    verdict = graded(folder).verdicts[-1]  # the server is closed now
    assert not verdict.passed and "label=unknown" in verdict.reason and "connection" in verdict.reason


def test_the_judge_sees_the_instruction_this_patients_records_the_agent_read_and_the_answer_nothing_else(suite):
    """The counterexample that reads another patient's medication (refused), a directory search that lists that
    patient, and an answer of the agent's own: no other patient, no gold, no hidden half reaches the model."""
    with serve(suite, lambda request: replying("clear")) as server:
        folder = with_judge(suite)
        package = load_package(folder)
        trajectory = next(c.trajectory for c in package.hidden.counterexamples if c.name == "other-patient")
        calls = [trajectory.calls[0].model_copy(update={"args": {"name": "李秀"}}), *trajectory.calls]
        answer = "Your stomach ulcer will be treated with a tablet each morning."
        asyncio.run(
            grade_trajectory(package, trajectory.model_copy(update={"calls": calls, "answer": answer}), judge=True)
        )
        assert len(server.requests) == 1
        body = json.dumps(server.requests[0], ensure_ascii=False)
    user = server.requests[0]["messages"][1]["content"]
    assert package.public.task.instruction["zh"] in user and user.endswith(f"The agent's answer: {answer}")
    assert "青霉素" in user  # her allergy, from patient_history
    hidden = package.hidden
    for secret in [
        "sc-med-p2",
        "李秀兰",
        "SC-0102",
        hidden.gold.answer,
        "checks-first",
        "omeprazole 20 mg qd oral",
        "expected_tools",
        "must_fail",
    ]:
        assert secret not in body, secret
    assert "硝苯地平" in body  # her active medication, read by medication_search


@pytest.mark.parametrize("severity", ["hard", None])
def test_a_hard_judge_is_refused_in_one_line_naming_the_file_and_the_field(suite, severity):
    """``severity: hard``, or no severity (hard by default)."""
    with serve(suite, lambda request: replying("clear")):
        folder = with_judge(suite, severity=severity)
        with pytest.raises(SpecError) as err:
            check_package(folder)
        result = CliRunner().invoke(main, ["validate", str(folder)])
    assert err.value.file.endswith(f"{TASK}.yaml") and err.value.field == "verifiers.clarity.severity"
    assert err.value.message == (
        "a rubric verdict is a model's judgement: it is soft only (severity: soft) and never decides a trial's pass"
    )
    assert result.exit_code == 2 and result.output.strip().endswith(str(err.value))
    assert "\n" not in result.output.strip()


@pytest.mark.parametrize(
    "use, field, message",
    [
        ({"category": "answer"}, "verifiers.clarity.category", "judge.rubric verdicts are of category rubric"),
        (
            {"params": {**CLARITY["params"], "passing": ["fine"]}},
            "verifiers.clarity.params",
            "passing label 'fine' is not one of the labels",
        ),
        (
            {"params": {**CLARITY["params"], "labels": ["clear", "unknown"]}},
            "verifiers.clarity.params",
            "labels must differ from each other and from 'unknown'",
        ),
        (
            {"params": {**CLARITY["params"], "model": "../judge/none.yaml"}},
            "verifiers.clarity.params.model",
            "none.yaml: (file): file not found",
        ),
    ],
)
def test_a_judge_of_another_category_or_with_bad_params_is_refused(suite, use, field, message):
    with serve(suite, lambda request: replying("clear")):
        folder = with_judge(suite, **use)
        with pytest.raises(SpecError) as err:
            check_package(folder)
    assert err.value.field == field and message in err.value.message, str(err.value)


def test_no_counterexample_may_rest_on_a_judge(suite):
    with serve(suite, lambda request: replying("clear")):
        folder = with_judge(suite)
        path = suite / "verifiers/superclue" / f"{TASK}.yaml"
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        doc["counterexamples"][0]["must_fail"].append("clarity")
        path.write_text(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False), encoding="utf-8")
        with pytest.raises(SpecError, match="'clarity' is a rubric verdict"):
            check_package(folder)


def clarity_params(suite: Path):
    return bind(VerifierUse(**CLARITY), suite / "verifiers/superclue/x.yaml")[1]


def test_a_judge_that_gives_the_written_labels_agrees_with_kappa_1(suite):
    with serve(suite, written_labels) as server:
        pairs = labelled_pairs(clarity_params(suite), LABELLED)
        assert len(server.requests) == 20
    k = cohens_kappa(pairs)
    assert (k.n, k.observed, k.kappa, k.interval) == (20, 1.0, 1.0, (1.0, 1.0))


@pytest.mark.parametrize("pick", ["same", "random", "garbage"])
def test_a_judge_that_answers_the_same_at_random_or_garbage_has_a_low_kappa(suite, pick):
    rng = random.Random(7)
    script = {
        "same": lambda request: replying("clear"),
        "random": lambda request: replying(rng.choice(["clear", "unclear"])),
        "garbage": lambda request: Reply(content="¯\\_(ツ)_/¯"),
    }[pick]
    with serve(suite, script):
        k = cohens_kappa(labelled_pairs(clarity_params(suite), LABELLED))
    assert k.n == 20 and k.kappa is not None and k.kappa < 0.4, k
    if pick != "random":
        assert k.kappa == pytest.approx(0.0) and k.observed == {"same": 0.5, "garbage": 0.0}[pick]


def test_forge_selftest_prints_each_judges_agreement_with_its_labelled_set(suite):
    with serve(suite, written_labels):
        folder = with_judge(suite)
        result = CliRunner().invoke(main, ["selftest", str(folder)])
    assert result.exit_code == 0, result.output
    line = next(line for line in result.output.splitlines() if line.startswith("judge "))
    assert line.startswith("judge explanation_clarity (model=judge prompt=v1 config=sha256:")
    assert line.endswith(
        f"): n 20, observed agreement 100%, kappa 1.00 [1.00, 1.00] "
        f"({suite / 'verifiers/judge/explanation_clarity.yaml'})"
    )
    (suite / "verifiers/judge/explanation_clarity.yaml").unlink()
    result = CliRunner().invoke(main, ["selftest", str(folder)])
    assert result.exit_code == 0 and "): no labelled set (" in result.output


def test_a_release_reports_each_judges_agreement_asked_once_while_its_trials_run(suite):
    """The judge's labelled set is asked in a process of its own beside the trials and kept by its config and set:
    built again with the model gone, the report still shows the agreement it measured."""
    (suite / "rel.yaml").write_text(
        yaml.safe_dump(
            {
                "release": "rel",
                "baseline": "baseline-v1",
                "candidate": "candidate-v2",
                "trials": 1,
                "suites": ["task_packages/superclue"],
            }
        )
    )
    with serve(suite, written_labels):
        with_judge(suite)
        first = CliRunner().invoke(main, ["release", str(suite / "rel.yaml")])
    again = CliRunner().invoke(main, ["release", str(suite / "rel.yaml")])  # the server is gone
    assert first.exit_code in (0, 1) and again.exit_code == first.exit_code, again.output
    judges = recorded(json.loads((suite / "rel/release.ipynb").read_text(encoding="utf-8")))["judges"]
    assert [(j["name"], j["agreement"]) for j in judges] == [
        ("explanation_clarity", "n 20, observed agreement 100%, kappa 1.00 [1.00, 1.00]")
    ]
    html = (suite / "rel/release.html").read_text(encoding="utf-8")
    assert "Judges against their labelled sets" in html and "kappa 1.00 [1.00, 1.00]" in html
    assert judge_agreement_rows([str(ROOT / "task_packages/forge-nsclc")]) == []
