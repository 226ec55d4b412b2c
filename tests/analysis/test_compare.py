"""forge compare: figures against an independent computation, the release gate, ablation cards."""

import asyncio
import json
import shutil
import subprocess
import sys
from math import comb
from pathlib import Path

import pytest
import yaml

from forge_kernel.analysis import compare, evaluate, load_policy, mcnemar_exact, wilson
from forge_kernel.analysis.ablation import ablation_card
from forge_kernel.analysis.gate import declared_policy
from forge_kernel.engine import RunSpec, execute
from forge_kernel.report.compare_markdown import render_comparison
from forge_kernel.spec import PolicyError, SpecError
from forge_kernel.store import load_trials, open_run
from tests.chat_server import ChatServer, gold_script
from tests.helpers import copy_suite_files, copy_worked_examples

ROOT = Path(__file__).resolve().parents[2]
FORGE = [str(Path(sys.executable).with_name("forge"))]


def strict_by_task(run_dir: Path, agent: str) -> dict[str, bool]:
    trials = load_trials(run_dir)
    return trials[trials.agent == agent].groupby("task_id")["passed"].all().to_dict()


def policy_file(tmp_path: Path, **changes) -> Path:
    doc = yaml.safe_load((ROOT / "forge_kernel/spec/gates/default.yaml").read_text())
    for key, value in changes.items():
        section, _, name = key.partition("__")
        if name:
            doc[section][name] = value
        else:
            doc[section] = value
    path = tmp_path / "gate.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_improvements_regressions_and_mcnemar_match_an_independent_count(reference, reference_run):
    base, cand = strict_by_task(reference_run, "baseline-v1"), strict_by_task(reference_run, "unsafe-shortcut")
    improvements = sorted(t for t in base if cand[t] and not base[t])
    regressions = sorted(t for t in base if base[t] and not cand[t])
    cmp = compare(reference, reference, "baseline-v1", "unsafe-shortcut")
    assert cmp.improvements == improvements and cmp.regressions == regressions
    assert cmp.mcnemar["p_value"] == pytest.approx(mcnemar_exact(len(regressions), len(improvements)))
    k, n = sum(cand.values()), len(cand)
    assert (cmp.candidate.strict_tasks["k"], cmp.candidate.strict_tasks["n"]) == (k, n)
    assert cmp.candidate.strict_tasks["ci95"] == pytest.approx(list(wilson(k, n)))


def test_pass_hat_k_and_instability_of_a_flaky_task(reference, reference_run):
    cmp = compare(reference, reference, "baseline-v1", "flaky-simulator")
    trials = load_trials(reference_run)
    flaky = trials[trials.agent == "flaky-simulator"]
    for task in cmp.tasks:
        side = task.candidate
        c = int(flaky[flaky.task_id == task.task_id]["passed"].sum())
        assert side.passes == c
        assert side.pass_hat_k == {k: pytest.approx(comb(c, k) / comb(3, k)) for k in (1, 2, 3)}
        assert side.pass_at_k == pytest.approx(1 - comb(3 - c, 3) / comb(3, 3))
        assert side.unstable == (0 < c < 3 or bool(side.unstable_reasons))
    assert any(0 < t.candidate.passes < 3 for t in cmp.tasks)


def test_baseline_to_candidate_is_green_and_lists_its_improvements(reference):
    cmp = compare(reference, reference, "baseline-v1", "candidate-v2")
    gate = evaluate(cmp, load_policy(), declared_policy(reference))
    assert gate.green, [c for c in gate.red_because]
    assert len(cmp.improvements) >= 5 and not cmp.regressions
    assert {c.name: c.status for c in gate.checks}["declared_before_run"] == "PASS"


def test_flaky_simulator_is_red_for_instability_despite_a_higher_mean(reference):
    """Red for instability, and for the unsafe orders of the trials where it forgets the records: baseline-v1's
    own, so they are no regression."""
    cmp = compare(reference, reference, "baseline-v1", "flaky-simulator")
    assert cmp.candidate.trials["rate"] > cmp.baseline.trials["rate"]
    gate = evaluate(cmp, load_policy())
    assert not gate.green
    assert [c.name for c in gate.red_because] == ["no_critical_safety_violation", "candidate_stable"]
    unsafe = {t.task_id for t in cmp.tasks if t.candidate.safety_failures}
    assert unsafe and unsafe <= {t.task_id for t in cmp.tasks if t.baseline.safety_failures}


def test_unsafe_shortcut_is_red_on_the_hard_gates(reference):
    gate = evaluate(compare(reference, reference, "baseline-v1", "unsafe-shortcut"), load_policy())
    hard_fails = {c.name for c in gate.checks if c.level == "hard" and c.status == "FAIL"}
    assert {"no_critical_safety_violation", "no_safety_regression"} <= hard_fails


def test_a_waived_soft_check_no_longer_turns_the_gate_red(reference, tmp_path):
    """The flaky candidate under a policy whose critical risk is "critical" alone, so that only instability is red."""
    cmp = compare(reference, reference, "baseline-v1", "flaky-simulator")
    assert not evaluate(cmp, load_policy(policy_file(tmp_path, critical_risks=["critical"]))).green
    gate = evaluate(cmp, load_policy(policy_file(tmp_path, critical_risks=["critical"], waive=["candidate_stable"])))
    stable = next(c for c in gate.checks if c.name == "candidate_stable")
    assert stable.status == "FAIL" and stable.waived and gate.green


def test_a_hard_gate_that_is_not_run_is_never_a_pass(reference, tmp_path):
    cmp = compare(reference, reference, "baseline-v1", "candidate-v2")
    gate = evaluate(cmp, load_policy(policy_file(tmp_path, hard__no_safety_regression=False)))
    check = next(c for c in gate.checks if c.name == "no_safety_regression")
    assert check.status == "NOT RUN" and not gate.green


@pytest.mark.parametrize(
    "change, check",
    [
        ({"soft__max_cost_per_task": None}, "max_cost_per_task"),
        ({"soft__candidate_stable": False}, "candidate_stable"),
        ({}, "declared_before_run"),
    ],
)
def test_a_check_not_run_turns_the_gate_red_unless_the_policy_lists_it_optional(reference, tmp_path, change, check):
    cmp = compare(reference, reference, "baseline-v1", "candidate-v2")
    others = [name for name in ["declared_before_run"] if name != check]  # no policy was declared for these runs
    red = evaluate(cmp, load_policy(policy_file(tmp_path, **change, optional=others)))
    assert next(c for c in red.checks if c.name == check).status == "NOT RUN"
    assert [c.name for c in red.red_because] == [check] and not red.green
    assert evaluate(cmp, load_policy(policy_file(tmp_path, **change, optional=[*others, check]))).green


def test_a_latency_budget_can_fail_the_gate(reference, tmp_path):
    cmp = compare(reference, reference, "baseline-v1", "candidate-v2")
    gate = evaluate(cmp, load_policy(policy_file(tmp_path, soft__max_p95_latency_s=1e-9)))
    assert [c.name for c in gate.red_because] == ["max_p95_latency_s"]


@pytest.mark.parametrize("field, what", [("waive", "waived"), ("optional", "optional")])
def test_hard_gates_can_be_neither_waived_nor_optional(tmp_path, field, what):
    with pytest.raises(SpecError) as err:
        load_policy(policy_file(tmp_path, **{field: ["no_safety_regression"]}))
    assert err.value.field == field and f"only soft checks can be {what}" in err.value.message


def test_a_policy_changed_after_the_run_is_refused(reference, tmp_path):
    cmp = compare(reference, reference, "baseline-v1", "candidate-v2")
    edited = load_policy(policy_file(tmp_path, soft__min_improvements=0))
    with pytest.raises(PolicyError) as err:
        evaluate(cmp, edited, declared_policy(reference))
    assert "cannot change after the run" in str(err.value)


def test_cli_exit_codes_json_and_markdown(reference_run, tmp_path):
    args = [*FORGE, "compare", str(reference_run), str(reference_run), "--baseline-agent", "baseline-v1"]
    green = subprocess.run(
        [
            *args,
            "--candidate-agent",
            "candidate-v2",
            "--json",
            str(tmp_path / "c.json"),
            "--markdown",
            str(tmp_path / "c.md"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert green.returncode == 0, green.stderr
    data = json.loads((tmp_path / "c.json").read_text())
    assert data["gate"]["green"] is True and data["comparison"]["improvements"]
    assert {"latency", "tool_success", "fault_recovery", "calibration", "cost_per_task"} <= set(
        data["comparison"]["candidate"]
    )
    markdown = (tmp_path / "c.md").read_text()
    assert "synthetic" in markdown and "Release gate: GREEN" in markdown
    assert all(t in markdown for t in data["comparison"]["improvements"])
    red = subprocess.run([*args, "--candidate-agent", "unsafe-shortcut"], capture_output=True, text=True, cwd=ROOT)
    assert red.returncode == 1 and "gate RED" in red.stdout
    bad = subprocess.run(
        [*FORGE, "compare", str(reference_run), str(tmp_path)], capture_output=True, text=True, cwd=ROOT
    )
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_runs_graded_with_different_hidden_halves_are_not_compared(tmp_path):
    suite = tmp_path / "task_packages/superclue"
    shutil.copytree(ROOT / "task_packages/superclue/SC-OPS-ADMISSION", suite / "SC-OPS-ADMISSION")
    hidden = tmp_path / "verifiers/superclue/SC-OPS-ADMISSION.yaml"
    hidden.parent.mkdir(parents=True)
    shutil.copy(ROOT / "verifiers/superclue/SC-OPS-ADMISSION.yaml", hidden)
    copy_suite_files(tmp_path)

    def run(out: str) -> Path:
        spec = RunSpec(suite=[str(suite)], agents=["baseline-v1"], trials=1)
        asyncio.run(execute(spec, tmp_path / out, progress=False))
        return tmp_path / out

    first = run("a")
    doc = yaml.safe_load(hidden.read_text())
    doc["version"] = "1.0.1"
    hidden.write_text(yaml.safe_dump(doc, allow_unicode=True))
    second = run("b")
    with open_run(first) as a, open_run(second) as b, pytest.raises(SpecError) as err:
        compare(a, b)
    assert "forge regrade" in str(err.value)


def test_ablation_cards_name_the_removed_component_and_the_tasks_it_costs(reference):
    card = ablation_card(reference, reference, "candidate-v2", "candidate-v2-no-conflict")
    assert card.removed == {"conflict_retention": {"candidate": True, "ablation": False}}
    assert card.regressions == ["TP-CONFLICT-v1"] and card.overall_delta < 0
    nsclc = next(s for s in card.slices if s.slice == "suite")
    assert nsclc.value == "forge-nsclc" and nsclc.delta == pytest.approx(-1 / 12)


def test_markdown_report_reads_on_its_own(reference):
    cmp = compare(reference, reference, "candidate-v2", "candidate-v2-no-domain-gate")
    text = render_comparison(cmp, evaluate(cmp, load_policy()))
    assert "Release gate: RED" in text and "TP-OUT-OF-DOMAIN-v1" in text
    assert "## By slice" in text and "| dimension |" in text


def test_calibration_of_an_agent_that_states_its_confidence(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    worked = [str(ROOT / "task_packages/superclue" / t) for t in ("SC-OPS-ADMISSION", "SC-MED-GASTRIC-ULCER")]
    spec = RunSpec(suite=worked, agents=["scripted", "tests.agents_for_tests:Confident"], trials=2)
    asyncio.run(execute(spec, tmp_path / "run", progress=False))
    with open_run(tmp_path / "run") as run:
        cmp = compare(run, run, "scripted", "confident")
    assert cmp.baseline.calibration is None
    trials = load_trials(tmp_path / "run")
    mine = trials[trials.agent == "confident"]
    outcome = mine["passed"].astype(float)
    brier = ((mine["confidence"] - outcome) ** 2).mean()  # two tasks x two trials, all passing: (0.1² + 0.4²) / 2
    assert cmp.candidate.calibration.brier == pytest.approx(brier)
    assert cmp.candidate.calibration.n == 4
    assert cmp.candidate.calibration.ece == pytest.approx((abs(1 - 0.9) + abs(1 - 0.6)) / 2)


def test_cost_and_model_tokens_per_task_stand_beside_the_pass_rates(llm_run, tmp_path):
    with open_run(llm_run) as run:
        cmp = compare(run, run, "baseline-v1", "narrated")
        used = run.usage[run.usage["agent"] == "narrated"].groupby("task_id").mean(numeric_only=True)
    for task in cmp.tasks:
        assert task.candidate.cost == pytest.approx(used.at[task.task_id, "cost"])
        assert task.candidate.tokens.prompt == used.at[task.task_id, "prompt_tokens"]
        assert task.baseline.tokens is None and task.baseline.cost == 0  # no turns: no tokens at all
    side = cmp.candidate
    assert side.tokens_per_task.cached == pytest.approx(used["cached_tokens"].mean())
    assert side.cost_per_task == pytest.approx(used["cost"].mean()) and cmp.baseline.tokens_per_task is None
    assert side.latency.model["p50"] > 0 and cmp.baseline.latency.model is None
    assert cmp.usage_lines()[1] == (
        f"candidate narrated: trials passing {side.trials['k']}/6 (too few samples), tasks "
        f"passing every trial 3/3 (too few samples) · cost per task "
        f"${side.cost_per_task:.4f} · model tokens per task {side.tokens_per_task}"
    )
    shown = subprocess.run(
        [
            *FORGE,
            "compare",
            str(llm_run),
            str(llm_run),
            "--baseline-agent",
            "baseline-v1",
            "--candidate-agent",
            "narrated",
            "--json",
            str(tmp_path / "c.json"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert all(line in shown.stdout for line in cmp.usage_lines()), shown.stdout
    data = json.loads((tmp_path / "c.json").read_text())["comparison"]
    assert data["candidate"]["tokens_per_task"] == side.tokens_per_task.model_dump()
    assert data["tasks"][0]["candidate"]["tokens"]["completion"] > 0 and data["tasks"][0]["baseline"]["tokens"] is None
    assert "| model tokens per task (reported by the agent) | — | " in render_comparison(cmp)


def test_a_model_priced_past_the_policy_turns_the_gate_red_on_its_recorded_cost(tmp_path):
    """Two configs of one scripted model: the cost per task the gate reads is what their turns were charged."""
    package = copy_worked_examples(tmp_path) / "SC-MED-GASTRIC-ULCER"
    with ChatServer(gold_script([package])) as chat:
        entries = []
        for name, price in (("cheap", {"input": 2.0, "output": 8.0}), ("pricey", {"input": 200.0, "output": 800.0})):
            config = {"base_url": chat.url, "model": "gold", "price": price}
            (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(config))
            entries.append(f"llm:{tmp_path / name}.yaml")
        asyncio.run(
            execute(
                RunSpec(suite=[str(package)], agents=entries, trials=1, trust=entries), tmp_path / "run", progress=False
            )
        )
    policy = load_policy(policy_file(tmp_path, soft__max_cost_per_task=0.05))
    with open_run(tmp_path / "run") as run:
        charged = sum(t.cost for t in run.trial("SC-MED-GASTRIC-ULCER", "pricey", 0).turns)
        red, green = (evaluate(compare(run, run, *pair), policy) for pair in (("cheap", "pricey"), ("pricey", "cheap")))
    check = next(c for c in red.checks if c.name == "max_cost_per_task")
    assert check.status == "FAIL" and check.detail == f"cost per task ($) {charged:.4g} (limit 0.05)" and charged > 0.05
    assert next(c for c in green.checks if c.name == "max_cost_per_task").status == "PASS"
