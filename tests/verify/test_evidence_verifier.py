"""answer.evidence: cited references exist, are the current patient's, allowed, not forbidden, complete, returned to
the agent in the trial, within their windows and of the codes their criteria accept."""

from __future__ import annotations

from weakref import WeakKeyDictionary

import pytest

from forge_kernel.ehr import EHRImage, EHRView, fhir
from forge_kernel.ehr.summaries import summarize
from forge_kernel.spec import AgentResult, Event, Package, SpecError, VerifierUse
from forge_kernel.verify import GradeContext, bind
from forge_kernel.verify.kinds import evidence as evidence_kind
from tests.helpers import unit_package

NOW = "2026-11-30T09:00:00+08:00"
LOCAL, SCT = "urn:forge:local", "http://snomed.info/sct"


def coded(resource: dict, code: str, system: str) -> dict:
    """The resource with its code in that system (fhir.observation codes in LOINC only, fhir.condition not at all)."""
    return resource | {"code": fhir.concept(resource["code"]["text"], code, system)}


RESOURCES = [
    fhir.patient("p1", "测试甲", "male", "1960-01-01", "MRN-1"),
    fhir.patient("p2", "测试乙", "male", "1961-01-01", "MRN-2"),
    fhir.observation("anc-new", "p1", "中性粒细胞绝对计数", 3.1, "10^9/L", "2026-11-27T07:30:00+08:00", code="751-8"),
    fhir.observation("anc-old", "p1", "中性粒细胞绝对计数", 2.0, "10^9/L", "2026-10-20T07:30:00+08:00", code="751-8"),
    fhir.observation("plt", "p1", "血小板计数", 228, "10^9/L", "2026-11-27T07:30:00+08:00", code="777-3"),
    fhir.observation("anc-uncoded", "p1", "中性粒细胞绝对计数", 3.0, "10^9/L", "2026-11-27T07:30:00+08:00"),
    coded(fhir.observation("alk-ihc", "p1", "ALK（IHC）", "阳性", None, "2026-11-10T15:00:00+08:00"), "ALK-IHC", LOCAL),
    coded(
        fhir.observation("alk-fish", "p1", "ALK（FISH）", "阴性", None, "2026-11-22T15:00:00+08:00"), "ALK-FISH", LOCAL
    ),
    coded(fhir.condition("dx", "p1", "肺腺癌 IVA 期", "2026-09-10"), "254626006", SCT),
    coded(fhir.condition("htn", "p1", "高血压 2 级", "2015-06-01"), "38341003", SCT),
    fhir.task("t-old", "p1", "follow-up", "复查血常规", "2026-11-01T09:00:00+08:00"),
    fhir.observation("anc-p2", "p2", "中性粒细胞绝对计数", 4.0, "10^9/L", "2026-11-28T07:30:00+08:00"),
]


@pytest.fixture(scope="module")
def package(tmp_path_factory) -> Package:
    return unit_package(tmp_path_factory.mktemp("pkg"), "UNIT-EVIDENCE", "trial_matching", RESOURCES, NOW)


@pytest.fixture(scope="module")
def image(package) -> EHRImage:
    return EHRImage(package.resources, package.public.environment.now)


def crit(cid: str, status: str, *evidence: str) -> dict:
    return {"criterion_id": cid, "status": status, "evidence": list(evidence), "reason": None}


def output(*criteria: dict) -> dict:
    return {
        "assessments": [
            {"protocol_id": "P", "protocol_version": "1", "eligibility": "undetermined", "criteria": list(criteria)}
        ]
    }


def search(*resources: dict, step: int = 1, ok: bool = True) -> Event:
    """A successful search (or a failed one) whose rows are these records."""
    rows = {"records": [summarize(r) for r in resources]} if ok else None
    return Event(step=step, tool="record_search", args={"patient_id": "p1"}, kind="read", ok=ok, result=rows)


EVERYTHING = [search(*RESOURCES)]
"""One call that returned every record: provenance aside."""


def graded(package, image, out: dict, written: list[list[dict]] = (), events: list[Event] = EVERYTHING, **params):
    """The verdict on a trial whose output is ``out``, whose calls made ``events`` and which wrote one assessment
    per ``written`` item."""
    view = EHRView(image)
    for i, items in enumerate(written, 1):
        view.step = i
        view.create(fhir.assessment(None, "p1", "P", "1", "undetermined", NOW, items))
    ctx = GradeContext(package, view, list(events), AgentResult(output=out))
    kind, validated = bind(VerifierUse(id="evidence", kind="answer.evidence", category="answer", params=params))
    return kind.check(ctx, validated)


GOOD = [
    crit("I1", "met", "Condition/dx"),
    crit("I3", "met", "Observation/anc-new"),
    crit("I4b", "conflict", "Observation/alk-ihc", "Observation/alk-fish"),
]


def test_this_patients_records_pass_in_output_and_written_assessment(package, image):
    outcome = graded(package, image, output(*GOOD), [GOOD])
    assert outcome.passed, outcome.reason
    assert "8 citation(s)" in outcome.reason


def test_nothing_cited_passes_when_nothing_is_required(package, image):
    assert graded(package, image, output(crit("I3", "unknown"))).passed


@pytest.mark.parametrize(
    "ref, why",
    [
        ("Observation/anc-1127", "is not in the EHR"),
        ("Observation/anc-p2", "belongs to another patient"),
        ("Patient/p1", "not citable"),
        ("Task/t-old", "not citable"),
        ("anc-new", "not a Type/id reference"),
    ],
)
def test_a_bad_citation_in_the_output_fails(package, image, ref, why):
    outcome = graded(package, image, output(*GOOD, crit("I9", "met", ref)))
    assert not outcome.passed
    assert why in outcome.reason and ref in outcome.reason


def test_a_bad_citation_in_a_written_assessment_fails_even_if_the_output_is_clean(package, image):
    outcome = graded(package, image, output(*GOOD), [[*GOOD, crit("I3", "met", "Observation/anc-p2")]])
    assert not outcome.passed
    assert outcome.reason.startswith("Observation/observation-new-1 cites Observation/anc-p2")


def test_a_forbidden_reference_fails_though_it_is_this_patients(package, image):
    stale = output(crit("I3", "unknown", "Observation/anc-old"))
    assert graded(package, image, stale).passed
    outcome = graded(package, image, stale, forbidden=["Observation/anc-old"])
    assert not outcome.passed and "must not be cited" in outcome.reason


def test_a_record_the_agent_wrote_itself_is_not_evidence(package, image):
    view = EHRView(image)
    view.create(fhir.observation("self-made", "p1", "中性粒细胞绝对计数", 2.5, "10^9/L", NOW))
    result = AgentResult(output=output(crit("I3", "met", "Observation/self-made")))
    ctx = GradeContext(package, view, EVERYTHING, result)
    kind, validated = bind(VerifierUse(id="e", kind="answer.evidence", category="answer"))
    assert not kind.check(ctx, validated).passed


def test_allowed_types_can_be_narrowed(package, image):
    outcome = graded(package, image, output(*GOOD), types=["Observation"])
    assert not outcome.passed and "Condition/dx" in outcome.reason


def test_complete_citations_pass_and_a_missing_one_fails(package, image):
    both = {"I4b": ["Observation/alk-ihc", "Observation/alk-fish"]}
    assert graded(package, image, output(*GOOD), [GOOD], complete=both).passed
    newest_only = [*GOOD[:2], crit("I4b", "met", "Observation/alk-fish")]
    outcome = graded(package, image, output(*newest_only), complete=both)
    assert not outcome.passed and "does not cite Observation/alk-ihc" in outcome.reason


def test_completeness_is_checked_in_each_written_assessment(package, image):
    both = {"I4b": ["Observation/alk-ihc", "Observation/alk-fish"]}
    newest_only = [*GOOD[:2], crit("I4b", "met", "Observation/alk-fish")]
    outcome = graded(package, image, output(*GOOD), [GOOD, newest_only], complete=both)
    assert not outcome.passed and outcome.reason.startswith("Observation/observation-new-2")


def test_a_required_criterion_missing_from_the_output_fails(package, image):
    outcome = graded(package, image, output(GOOD[0]), [GOOD], complete={"I3": ["Observation/anc-new"]})
    assert not outcome.passed and "I3 is not in the structured output" in outcome.reason


def test_the_output_path_is_a_parameter(package, image):
    flat = {"criteria": [crit("I3", "met", "Observation/anc-p2")]}
    assert graded(package, image, flat).passed  # nothing at the default path
    assert not graded(package, image, flat, path="criteria").passed


def test_unknown_params_are_a_spec_error():
    with pytest.raises(SpecError):
        bind(VerifierUse(id="e", kind="answer.evidence", category="answer", params={"forbid": ["x"]}))


# --- provenance: returned in this trial, within the window ---------------------------------------------------------


def by_id(rid: str) -> dict:
    return next(r for r in RESOURCES if r["id"] == rid)


def io_output(*criteria: dict) -> dict:
    """An assessment of LUNG-IO-301 v2.0, whose I3 (ANC) looks back 14 days and whose I1 (diagnosis) has no window."""
    return {
        "assessments": [
            {
                "protocol_id": "LUNG-IO-301",
                "protocol_version": "2.0",
                "eligibility": "undetermined",
                "criteria": list(criteria),
            }
        ]
    }


def test_a_record_no_call_of_the_trial_returned_fails(package, image):
    only_labs = [search(by_id("anc-new"))]
    assert graded(package, image, output(crit("I3", "met", "Observation/anc-new")), events=only_labs).passed
    outcome = graded(package, image, output(crit("I1", "met", "Condition/dx")), events=only_labs)
    assert not outcome.passed
    assert "Condition/dx" in outcome.reason and "never returned to the agent" in outcome.reason


def test_a_record_only_a_failed_call_would_have_returned_fails(package, image):
    failed = [search(by_id("dx"), ok=False)]
    assert not graded(package, image, output(crit("I1", "met", "Condition/dx")), events=failed).passed


def test_a_record_returned_whole_by_a_read_counts_as_a_search_row_does(package, image):
    read = Event(
        step=1, tool="record_get", args={"reference": "Condition/dx"}, kind="read", ok=True, result=by_id("dx")
    )
    assert graded(package, image, output(crit("I1", "met", "Condition/dx")), events=[read]).passed


def test_provenance_is_checked_in_written_assessments_too(package, image):
    only_labs = [search(by_id("anc-new"))]
    cites_dx = [crit("I1", "met", "Condition/dx")]
    outcome = graded(package, image, output(), [cites_dx], events=only_labs)
    assert not outcome.passed and outcome.reason.startswith("Observation/observation-new-1 cites Condition/dx")


def test_without_the_provenance_check_an_unread_record_would_pass(package, image, monkeypatch):
    unread = (output(crit("I1", "met", "Condition/dx")), [search(by_id("anc-new"))])
    monkeypatch.setattr(evidence_kind, "returned_to", lambda ctx: {"Condition/dx"})
    assert graded(package, image, unread[0], events=unread[1]).passed


def test_the_protocols_window_for_a_criterion_holds_by_default(package, image):
    assert graded(package, image, io_output(crit("I3", "met", "Observation/anc-new"))).passed
    outcome = graded(package, image, io_output(crit("I3", "met", "Observation/anc-old")))
    assert not outcome.passed
    assert "Observation/anc-old" in outcome.reason and "before the 14-day window (from 2026-11-16)" in outcome.reason
    assert graded(package, image, io_output(crit("I1", "met", "Condition/dx"))).passed  # I1 has no window


def test_the_protocols_window_holds_in_a_written_assessment(package, image):
    view = EHRView(image)
    view.create(
        fhir.assessment(
            None, "p1", "LUNG-IO-301", "2.0", "undetermined", NOW, [crit("I3", "met", "Observation/anc-old")]
        )
    )
    ctx = GradeContext(package, view, EVERYTHING, AgentResult())
    kind, validated = bind(VerifierUse(id="e", kind="answer.evidence", category="answer"))
    outcome = kind.check(ctx, validated)
    assert not outcome.passed and "14-day window" in outcome.reason


def test_a_package_window_holds_for_every_citation(package, image):
    old = output(crit("I9", "met", "Observation/anc-old"))
    assert graded(package, image, old).passed  # criterion I9 of protocol P declares no window
    outcome = graded(package, image, old, within_days=30)
    assert not outcome.passed and "30-day window" in outcome.reason
    assert graded(package, image, output(crit("I9", "met", "Observation/anc-new")), within_days=30).passed


def test_without_the_window_check_a_stale_record_would_pass(package, image, monkeypatch):
    monkeypatch.setattr(evidence_kind, "outside_window", lambda resource, days, now, tz: None)
    monkeypatch.setattr(evidence_kind, "JUDGED", WeakKeyDictionary())  # what the image's records were judged, forgotten
    assert graded(package, image, io_output(crit("I3", "met", "Observation/anc-old"))).passed


# --- relevance: of a code the criterion's protocol accepts ---------------------------------------------------------


def test_a_record_of_a_neighbouring_test_fails_naming_its_code_and_the_accepted_ones(package, image):
    outcome = graded(package, image, io_output(crit("I3", "met", "Observation/plt")))
    assert not outcome.passed
    assert outcome.reason == (
        "output cites Observation/plt for I3: it is coded loinc 777-3, and I3 accepts loinc 751-8"
    )


def test_a_record_without_a_code_fails_where_the_criterion_declares_codes(package, image):
    outcome = graded(package, image, io_output(crit("I3", "met", "Observation/anc-uncoded")))
    assert not outcome.passed and "it has no code, and I3 accepts loinc 751-8" in outcome.reason
    assert graded(package, image, output(crit("I3", "met", "Observation/anc-uncoded"))).passed  # P declares none


def test_every_code_the_criterion_accepts_passes(package, image):
    """Two ALK tests of different codes, both accepted, for a conflict; the diagnosis by its own code."""
    both = crit("I4b", "conflict", "Observation/alk-ihc", "Observation/alk-fish")
    outcome = graded(package, image, io_output(both, crit("I1", "met", "Condition/dx")), [[both]])
    assert outcome.passed, outcome.reason


@pytest.mark.parametrize(
    "criterion",
    [
        crit("I3", "unknown", "Observation/plt"),
        crit("I4b", "conflict", "Observation/alk-ihc", "Observation/anc-new"),
        crit("I1", "not_met", "Condition/htn"),
    ],
    ids=["unknown", "conflict", "not_met"],
)
def test_relevance_holds_whatever_the_status(package, image, criterion):
    assert not graded(package, image, io_output(criterion)).passed
    assert graded(package, image, io_output(crit(criterion["criterion_id"], criterion["status"]))).passed


def test_relevance_holds_in_a_written_assessment(package, image):
    view = EHRView(image)
    view.create(
        fhir.assessment(None, "p1", "LUNG-IO-301", "2.0", "undetermined", NOW, [crit("I1", "met", "Condition/htn")])
    )
    ctx = GradeContext(package, view, EVERYTHING, AgentResult())
    kind, validated = bind(VerifierUse(id="e", kind="answer.evidence", category="answer"))
    outcome = kind.check(ctx, validated)
    assert not outcome.passed
    assert "cites Condition/htn for I1: it is coded sct 38341003, and I1 accepts sct 254626006" in outcome.reason


def test_without_the_relevance_check_a_neighbouring_test_would_pass(package, image, monkeypatch):
    monkeypatch.setattr(evidence_kind, "irrelevant", lambda resource, citation: None)
    monkeypatch.setattr(evidence_kind, "JUDGED", WeakKeyDictionary())  # what the image's records were judged, forgotten
    assert graded(package, image, io_output(crit("I3", "met", "Observation/plt"))).passed
