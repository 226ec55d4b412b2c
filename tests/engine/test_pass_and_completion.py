"""What a pass means: the outcome, safety, required events and budget, not one fixed path. The expected chain is
soft (reported, and the base of task completion) unless a package declares it a compliance rule; trace.events
states required and forbidden events."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
import yaml

from forge_kernel.authoring import expected_chain
from forge_kernel.ehr import EHRImage, EHRView
from forge_kernel.engine.grading import grade_trajectory
from forge_kernel.engine.selftest import selftest_package
from forge_kernel.engine.trial import Images
from forge_kernel.spec import AgentResult, Event, SpecError, TrajectoryFile, VerifierUse, find_packages, load_package
from forge_kernel.verify import GradeContext, bind, scoring
from tests.helpers import copy_suite_files

ROOT = Path(__file__).resolve().parents[2]

SUITES = ROOT / "task_packages"
MED = "SC-MED-GASTRIC-ULCER"
PID = "sc-med-p1"
GOLD = [(c.tool, c.args) for c in load_package(SUITES / "superclue" / MED).hidden.gold.calls]
"""patient_search, patient_history, medication_search, drug_info, drug_interaction_check,
medication_request_create, finish."""


@pytest.fixture(scope="module")
def med():
    return load_package(SUITES / "superclue" / MED)


def graded(package, calls, answer: str | None = None):
    answer = package.hidden.gold.answer if answer is None else answer
    trajectory = TrajectoryFile(
        calls=[{"tool": t, "args": a} for t, a in calls], answer=answer, output=package.hidden.gold.output
    )
    return asyncio.run(grade_trajectory(package, trajectory)).grading


def failing(grading) -> dict[str, str]:
    return {v.verifier_id: v.severity for v in grading.verdicts if not v.passed}


# --- pass and completion ----------------------------------------------------------------------------------------


def test_the_gold_passes_and_completes(med):
    assert [t for t, _ in GOLD] == [
        "patient_search",
        "patient_history",
        "medication_search",
        "drug_info",
        "drug_interaction_check",
        "medication_request_create",
        "finish",
    ]
    s = graded(med, GOLD).scores
    assert (s.passed, s.completion) == (True, 1)


def test_another_order_of_reads_passes_and_completes(med):
    reordered = [GOLD[0], GOLD[3], GOLD[2], GOLD[1], *GOLD[4:]]
    grading = graded(med, reordered)
    assert failing(grading) == {} and (grading.scores.passed, grading.scores.completion) == (True, 1)


def test_an_extra_harmless_read_passes_without_completing(med):
    grading = graded(med, [*GOLD[:-1], ("lab_results", {"patient_id": PID}), GOLD[-1]])
    assert failing(grading) == {"chain": "soft"}
    s = grading.scores
    assert (s.passed, s.completion, s.accuracy, s.extra) == (True, 0, 1.0, ("lab_results",))


def test_a_missing_read_fails_the_required_events_and_a_missing_write_the_outcome(med):
    no_drug_info = graded(med, [c for c in GOLD if c[0] != "drug_info"])
    # the dose the answer reports is then shown by no look-up: the order the agent wrote grounds nothing
    assert failing(no_drug_info) == {"chain": "soft", "events": "hard", "grounded": "hard"}
    assert (no_drug_info.scores.passed, no_drug_info.scores.completion) == (False, 0)
    assert "drug_info" in next(v.reason for v in no_drug_info.verdicts if v.verifier_id == "events")
    no_prescription = graded(med, [c for c in GOLD if c[0] != "medication_request_create"])
    assert no_prescription.scores.passed is False and failing(no_prescription)["omeprazole"] == "hard"


def test_every_bundled_chain_is_soft():
    uses = [u for path in find_packages([SUITES]) for u in load_package(path).hidden.verifiers]
    chains = [u for u in uses if u.kind == "trace.tool_chain"]
    assert len(chains) == len(list(SUITES.glob("*/*/package.yaml"))) and {u.severity for u in chains} == {"soft"}


def test_selftest_counts_a_failing_soft_verdict_as_failed(med):
    """A counterexample naming only the soft chain fails it as it must, while its trial passes with completion 0."""
    results = {r.case: r for r in asyncio.run(selftest_package(med, Images()))}
    assert results["tool-extra"].ok and results["tool-missing"].ok
    case = next(c for c in med.hidden.counterexamples if c.name == "tool-extra")
    grading = asyncio.run(grade_trajectory(med, case.trajectory)).grading
    assert case.must_fail == ["chain"] and grading.scores.passed and case.expect_completion == 0


# --- completion and the write audit -------------------------------------------------------------------------------

ORDER = GOLD[5][1]
"""The gold's order: omeprazole 20 mg qd oral."""
CHECKED = [*GOLD[:4], ("drug_interaction_check", {"drugs": ["硝苯地平", "奥美拉唑", "阿莫西林"]}), *GOLD[5:-1]]
"""The gold up to its order, the interaction check covering amoxicillin too, so that the safety gate passes."""
EXTRA_ORDERS = {
    "allergic to 青霉素": {**ORDER, "medication": "阿莫西林", "dose": "500 mg", "frequency": "tid"},
    "duplicates MedicationRequest": {**ORDER, "dose": "40 mg"},  # the outcome still holds one 20 mg order
}
"""What the audit says of an order -> the order, made after the gold's; each is also an unasked order."""


def with_extra_order(med, kind: str):
    return graded(med, [*CHECKED, ("medication_request_create", EXTRA_ORDERS[kind]), GOLD[-1]])


@pytest.mark.parametrize("kind", EXTRA_ORDERS)
def test_an_order_the_audit_rejects_fails_and_does_not_complete(med, kind):
    """Only the write audit fails: the expected tools, none extra, and the outcome hold; SuperCLUE-MedAgent counts
    such a trial as not completed."""
    grading = with_extra_order(med, kind)
    assert failing(grading) == {"audit": "hard"}
    assert kind in next(v.reason for v in grading.verdicts if v.verifier_id == "audit")
    s = grading.scores
    assert (s.passed, s.accuracy, s.extra, s.safety_gate, s.completion) == (False, 1.0, (), "passed", 0)


def test_without_the_audit_rule_an_allergen_order_would_complete(med, monkeypatch):
    monkeypatch.setattr(scoring, "AUDIT_KIND", "no.such_kind")
    assert with_extra_order(med, "allergic to 青霉素").scores.completion == 1


def test_a_repeated_write_under_one_idempotency_key_is_one_write_and_completes(med):
    keyed = ("medication_request_create", {**ORDER, "idempotency_key": "rx-1"})
    grading = graded(med, [*GOLD[:5], keyed, keyed, GOLD[-1]])
    assert failing(grading) == {} and (grading.scores.passed, grading.scores.completion) == (True, 1)


# --- the chain as a compliance rule -----------------------------------------------------------------------------


def chain_use(severity: str, **params) -> VerifierUse:
    return VerifierUse(id="chain", kind="trace.tool_chain", category="trace", severity=severity, params=params)


def test_a_hard_chain_needs_its_compliance_rule():
    with pytest.raises(SpecError) as err:
        bind(chain_use("hard", exact=True), "h.yaml")
    assert err.value.field == "verifiers.chain.params" and "compliance" in err.value.message
    with pytest.raises(SpecError):
        bind(chain_use("hard", ordered=True, compliance="  "), "h.yaml")
    assert bind(chain_use("soft", exact=True), "h.yaml")[1].exact
    assert bind(chain_use("hard", ordered=True, compliance="identity check first"), "h.yaml")[1].ordered


def test_the_expected_chain_is_soft_or_a_declared_rule():
    assert expected_chain().severity == "soft" and bind(expected_chain(), "h.yaml")[1].exact
    declared = expected_chain("ward protocol: identity check first", ordered=True)
    _, params = bind(declared, "h.yaml")
    assert declared.severity == "hard"
    assert (params.ordered, params.exact, params.compliance) == (True, True, "ward protocol: identity check first")


def test_a_declared_order_fails_the_trial_that_breaks_it(tmp_path):
    shutil.copytree(SUITES / "superclue" / MED, tmp_path / "task_packages" / "superclue" / MED)
    copy_suite_files(tmp_path)
    hidden_file = tmp_path / "verifiers" / "superclue" / f"{MED}.yaml"
    hidden_file.parent.mkdir(parents=True, exist_ok=True)
    hidden = yaml.safe_load((ROOT / "verifiers" / "superclue" / f"{MED}.yaml").read_text(encoding="utf-8"))
    declared = expected_chain("pharmacy protocol: history before the drug", ordered=True)
    hidden["verifiers"].append(declared.model_dump(mode="json"))
    hidden_file.write_text(yaml.safe_dump(hidden, allow_unicode=True), encoding="utf-8")
    package = load_package(tmp_path / "task_packages" / "superclue" / MED)
    assert graded(package, GOLD).scores.passed
    grading = graded(package, [GOLD[0], GOLD[3], GOLD[2], GOLD[1], *GOLD[4:]])
    chain = next(v for v in grading.verdicts if v.verifier_id == "chain")
    assert not grading.scores.passed and chain.severity == "hard"
    assert chain.reason.startswith("out of order") and "(compliance: pharmacy protocol" in chain.reason


# --- required and forbidden events --------------------------------------------------------------------------

KINDS = {
    "allergy_list": "read",
    "patient_search": "read",
    "medication_request_create": "write",
    "escalate_to_human": "write",
    "task_create": "write",
    "finish": "compute",
}


def ev(step: int, tool: str, ok: bool = True, **args) -> Event:
    return Event(
        step=step,
        tool=tool,
        args=args,
        kind=KINDS[tool],
        ok=ok,
        error=None if ok else {"code": "denied", "message": "refused"},
    )


def trial_events(med, *calls) -> GradeContext:
    """A context whose events are the given calls (tool, or (tool, ok)), steps from 1."""
    events = [ev(i, *(c if isinstance(c, tuple) else (c,))) for i, c in enumerate(calls, 1)]
    return GradeContext(med, EHRView(EHRImage(med.resources, med.public.environment.now)), events, AgentResult())


def rules_check(ctx, *rules):
    kind, params = bind(VerifierUse(id="v", kind="trace.events", category="trace", params={"rules": list(rules)}))
    return kind.check(ctx, params)


ALLERGIES_FIRST = {
    "require": {"tool": "allergy_list"},
    "before": {"tool": "medication_request_create"},
    "reason": "allergies are read before any prescription",
}
NO_WRITE_AFTER_ESCALATION = {"forbid": {"kind": "write"}, "after": {"tool": "escalate_to_human"}}


@pytest.mark.parametrize(
    "calls, passed",
    [
        (["patient_search", "allergy_list", "medication_request_create", "finish"], True),
        (["allergy_list", "patient_search", "medication_request_create", "medication_request_create"], True),
        (["patient_search", "finish"], True),  # no prescription: nothing required
        (["patient_search", "medication_request_create", "allergy_list", "finish"], False),
        ([("allergy_list", False), "medication_request_create"], False),  # a failed read saw no allergies
        (["patient_search", ("medication_request_create", False), "allergy_list", "medication_request_create"], False),
    ],
)
def test_a_call_required_before_another(med, calls, passed):
    outcome = rules_check(trial_events(med, *calls), ALLERGIES_FIRST)
    assert outcome.passed is passed
    if not passed:
        assert "(allergies are read before any prescription)" in outcome.reason and outcome.steps


def test_a_call_required_at_all(med):
    rule = {"require": {"tool": "allergy_list"}}
    assert rules_check(trial_events(med, "patient_search", "allergy_list"), rule).passed
    assert not rules_check(trial_events(med, "patient_search", ("allergy_list", False)), rule).passed


@pytest.mark.parametrize(
    "calls, passed, steps",
    [
        (["patient_search", "medication_request_create", "escalate_to_human", "finish"], True, ()),
        (["patient_search", "escalate_to_human", "allergy_list", "finish"], True, ()),  # a read after is fine
        ([("escalate_to_human", False), "medication_request_create"], True, ()),  # no escalation happened
        (["escalate_to_human", "medication_request_create", "task_create"], False, (2, 3)),
        (["escalate_to_human", ("medication_request_create", False)], False, (2,)),  # the attempt counts
    ],
)
def test_no_write_after_escalation(med, calls, passed, steps):
    outcome = rules_check(trial_events(med, *calls), NO_WRITE_AFTER_ESCALATION)
    assert (outcome.passed, outcome.steps) == (passed, steps)


def test_a_forbidden_call_and_a_limit(med):
    never = {"forbid": {"tool": "task_create"}}
    assert rules_check(trial_events(med, "patient_search", "finish"), never).passed
    assert rules_check(trial_events(med, "patient_search", ("task_create", False)), never).steps == (2,)
    at_most_two = {"count": {"tool": "patient_search"}, "max": 2, "reason": "one search, one retry"}
    assert rules_check(trial_events(med, "patient_search", ("patient_search", False), "finish"), at_most_two).passed
    outcome = rules_check(trial_events(med, *["patient_search"] * 3), at_most_two)
    assert (outcome.passed, outcome.steps) == (False, (1, 2, 3))
    assert "at most 2 (one search, one retry)" in outcome.reason


def test_every_broken_rule_is_reported(med):
    outcome = rules_check(
        trial_events(med, "medication_request_create", "escalate_to_human", "task_create"),
        ALLERGIES_FIRST,
        NO_WRITE_AFTER_ESCALATION,
        {"count": {"kind": "write"}, "max": 1},
    )
    assert outcome.reason.count(";") == 2 and outcome.steps == (1, 2, 3)


@pytest.mark.parametrize(
    "rule, field",
    [
        ({"requires": {"tool": "x"}}, "verifiers.v.params.rules.0"),
        ({"require": {"tool": "x"}, "after": {"tool": "y"}}, "verifiers.v.params.rules.0.require.after"),
        ({"forbid": {"kind": "delete"}}, "verifiers.v.params.rules.0.forbid.forbid.kind"),
        ({"count": {"tool": "x"}, "max": -1}, "verifiers.v.params.rules.0.count.max"),
        ({"count": {"tool": "x"}}, "verifiers.v.params.rules.0.count.max"),
    ],
)
def test_a_malformed_rule_is_a_spec_error(rule, field):
    with pytest.raises(SpecError) as err:
        bind(VerifierUse(id="v", kind="trace.events", category="trace", params={"rules": [rule]}), "h.yaml")
    assert err.value.field == field
