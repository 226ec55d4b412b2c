"""answer.criterion: one criterion's status, right in the structured output and in every assessment of its protocol
the trial wrote, and the same in both. Synthetic patients only."""

from __future__ import annotations

import pytest

from forge_kernel.ehr import EHRImage, EHRView, fhir
from forge_kernel.spec import AgentResult, Package, SpecError, VerifierUse
from forge_kernel.verify import GradeContext, bind
from forge_kernel.verify.kinds import _criteria as criterion_kind
from tests.helpers import unit_package

NOW = "2026-11-30T09:00:00+08:00"
RESOURCES = [fhir.patient("p1", "测试甲", "male", "1960-01-01", "MRN-1")]
ANC = {"protocol": "LUNG-IO-301", "criterion": "I3", "choice": ["met"]}
"""The criterion the tests judge: LUNG-IO-301's ANC criterion, met."""


@pytest.fixture(scope="module")
def package(tmp_path_factory) -> Package:
    return unit_package(tmp_path_factory.mktemp("pkg"), "UNIT-CRITERION", "trial_matching", RESOURCES, NOW)


def statuses(protocol: str = "LUNG-IO-301", **given: str) -> tuple[str, list[dict]]:
    """(protocol, criteria) of an assessment giving each criterion id its status."""
    return protocol, [{"criterion_id": c, "status": s, "evidence": [], "reason": None} for c, s in given.items()]


def graded(package, said: tuple[str, list[dict]] | None, *written: tuple[str, list[dict]], **params):
    """The verdict when the output assesses ``said`` and the trial wrote one assessment per ``written`` item."""
    view = EHRView(EHRImage(package.resources, package.public.environment.now))
    for i, (protocol, criteria) in enumerate(written, 1):
        view.step = i
        view.create(fhir.assessment(None, "p1", protocol, "2.0", "undetermined", NOW, criteria))
    assessments = [{"protocol_id": said[0], "protocol_version": "2.0", "criteria": said[1]}] if said else []
    ctx = GradeContext(package, view, [], AgentResult(output={"assessments": assessments}))
    kind, validated = bind(VerifierUse(id="c", kind="answer.criterion", category="answer", params=ANC | params))
    return kind.check(ctx, validated)


def test_the_right_status_in_the_output_and_the_record_passes(package):
    outcome = graded(package, statuses(I1="met", I3="met"), statuses(I1="not_met", I3="met"))
    assert outcome.passed, outcome.reason


def test_the_output_alone_is_judged_when_nothing_was_written(package):
    assert graded(package, statuses(I3="met")).passed
    outcome = graded(package, statuses(I3="unknown"))
    assert not outcome.passed and outcome.reason == "output gives unknown, expected met (LUNG-IO-301 I3)"


def test_a_criterion_missing_from_the_output_fails(package):
    outcome = graded(package, statuses(I1="met"), statuses(I3="met"))
    assert not outcome.passed and outcome.reason == "output does not assess it (LUNG-IO-301 I3)"


def test_a_wrong_status_written_to_the_record_fails_though_the_output_is_right(package):
    outcome = graded(package, statuses(I3="met"), statuses(I3="met"), statuses(I3="not_met"))
    assert not outcome.passed
    assert outcome.reason == "Observation/observation-new-2 gives not_met, expected met (LUNG-IO-301 I3)"


def test_a_record_that_leaves_the_criterion_out_fails(package):
    outcome = graded(package, statuses(I3="met"), statuses(I1="met"))
    assert not outcome.passed and "does not assess it" in outcome.reason


def test_a_record_that_disagrees_with_the_output_fails_though_both_are_allowed(package):
    either = {"choice": ["met", "unknown"]}
    assert graded(package, statuses(I3="unknown"), statuses(I3="unknown"), **either).passed
    outcome = graded(package, statuses(I3="met"), statuses(I3="unknown"), **either)
    assert not outcome.passed and outcome.reason.endswith("gives unknown, the output met (LUNG-IO-301 I3)")


def test_an_assessment_of_another_protocol_is_not_judged(package):
    other = statuses("LUNG-EGFR-202", I3="not_met")
    assert graded(package, statuses(I3="met"), other).passed


def test_without_the_record_check_a_wrong_record_would_pass(package, monkeypatch):
    monkeypatch.setattr(criterion_kind, "written_assessments", lambda ctx: [])
    assert graded(package, statuses(I3="met"), statuses(I3="not_met")).passed


def test_a_choice_is_required():
    with pytest.raises(SpecError):
        bind(VerifierUse(id="c", kind="answer.criterion", category="answer", params=ANC | {"choice": []}))
