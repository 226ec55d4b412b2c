"""The bundled suites as a whole, and the six reference agents run on the first two (6 agents x 3 trials x 82
packages)."""

import json
from collections import Counter
from dataclasses import fields
from pathlib import Path

import pytest

from forge_kernel.agents import AGENTS
from forge_kernel.agents.reference import REFERENCE_SET
from forge_kernel.analysis import compare
from forge_kernel.engine import load_suite

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def packages():
    return load_suite([str(ROOT / "task_packages")])


@pytest.fixture
def run_dir(reference_run):
    return reference_run


def test_seventy_superclue_packages_in_seven_dimensions_twelve_nsclc_three_extraction_and_21_medagentbench_style(
    packages,
):
    by_suite = Counter(p.public.suite for p in packages)
    assert by_suite == {"superclue": 70, "forge-nsclc": 12, "forge-extraction": 3, "medagentbench-style": 21}
    dimensions = Counter(p.public.slices["dimension"] for p in packages if p.public.suite == "superclue")
    assert len(dimensions) == 7 and set(dimensions.values()) == {10}


def test_every_package_is_bilingual_sliced_and_has_two_counterexamples(packages):
    for p in packages:
        assert set(p.public.task.instruction) == {"zh", "en"}, p.id
        assert {"dimension", "language", "age_band", "sex", "missingness"} <= set(p.public.slices), p.id
        assert len(p.hidden.counterexamples) >= 2, p.id


def test_at_least_fifteen_superclue_tasks_reward_not_acting(packages):
    outcomes = Counter(p.public.slices.get("outcome") for p in packages if p.public.suite == "superclue")
    assert outcomes["do_not_act"] + outcomes["escalate"] >= 15


def test_anc_unknown_package_is_read_only_with_a_six_call_budget(packages):
    anc = next(p for p in packages if p.id == "TP-ANC-UNKNOWN-v1")
    assert anc.public.budget.max_calls == 6
    assert anc.public.policy.writable_types == ["Task"]


def pass_rates(trials):
    return trials.groupby("agent")["passed"].mean()


def test_every_reference_agent_fails_some_task_and_none_scores_full(run_dir):
    from forge_kernel.store import load_trials

    rates = pass_rates(load_trials(run_dir))
    assert set(rates.index) == set(REFERENCE_SET)
    assert all(0 < rate < 1 for rate in rates), rates.to_dict()
    assert len(set(rates.round(4))) >= 4, "the agents must differ"


def test_candidate_differs_from_baseline_by_one_feature_and_wins_where_it_matters(reference):
    baseline, candidate = AGENTS["baseline-v1"](), AGENTS["candidate-v2"]()
    differing = [
        f.name
        for f in fields(baseline.features)
        if getattr(baseline.features, f.name) != getattr(candidate.features, f.name)
    ]
    assert differing == ["respects_records"]
    cmp = compare(reference, reference, "baseline-v1", "candidate-v2")
    assert cmp.improvements and not cmp.regressions
    outcomes = {t.task_id: t.slices["outcome"] for t in cmp.tasks}
    assert any(outcomes[t] == "do_not_act" for t in cmp.improvements)


def test_flaky_simulator_beats_baseline_on_average_yet_is_unstable(run_dir, reference):
    from forge_kernel.store import load_trials

    rates = pass_rates(load_trials(run_dir))
    assert rates["flaky-simulator"] > rates["baseline-v1"]
    cmp = compare(reference, reference, "baseline-v1", "flaky-simulator")
    assert cmp.unstable_candidate


def test_unsafe_shortcut_fails_every_prescribing_task_on_the_safety_gate(run_dir):
    from forge_kernel.store import load_trials

    trials = load_trials(run_dir)
    unsafe = trials[(trials.agent == "unsafe-shortcut") & (trials.category == "medication_management")]
    assert len(unsafe) == 30
    assert (unsafe.safety_gate == "failed").all() and (unsafe.accuracy == 0).all() and (unsafe.completion == 0).all()


@pytest.mark.parametrize(
    "ablation, task",
    [("candidate-v2-no-conflict", "TP-CONFLICT-v1"), ("candidate-v2-no-domain-gate", "TP-OUT-OF-DOMAIN-v1")],
)
def test_each_ablation_loses_the_task_its_component_serves(reference, ablation, task):
    cmp = compare(reference, reference, "candidate-v2", ablation)
    assert cmp.regressions == [task]


def test_slices_are_stored_with_every_trial(run_dir):
    from forge_kernel.store import load_trials

    slices = load_trials(run_dir)["slices"].map(json.loads)
    assert slices.map(lambda s: s["language"]).isin(["zh", "en"]).all()
    assert (slices.map(lambda s: s["language"]) == "en").sum() > 0
