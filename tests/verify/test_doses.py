"""Doses and units: one dose written several ways agrees (and other doses do not); routes and frequencies compare
through the dose-terms table, and the prescribing tool stores their codes."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from forge_kernel.ehr import EHRImage, fhir
from forge_kernel.spec import SpecError, VerifierUse, load_package
from forge_kernel.tools import TOOLS
from forge_kernel.tools.knowledge import table
from forge_kernel.verify import bind
from forge_kernel.verify.matchers import Matcher
from tests.helpers import check, trial

ROOT = Path(__file__).resolve().parents[2]
PID = "sc-med-p1"
CHECKS = [
    ("patient_search", {"mrn": "SC-0101"}),
    ("patient_history", {"patient_id": PID}),
    ("drug_interaction_check", {"drugs": ["硝苯地平", "奥美拉唑"]}),
]


@pytest.fixture(scope="module")
def med():
    package = load_package(ROOT / "task_packages/superclue/SC-MED-GASTRIC-ULCER")
    return package, EHRImage(package.resources, package.public.environment.now)


def prescribed(med, **args):
    """The MedicationRequest that one prescription (after the required checks) wrote, and its grading context."""
    package, image = med
    rx = {"patient_id": PID, "medication": "奥美拉唑", "dose": "20 mg", "frequency": "qd", "route": "oral"} | args
    ctx = trial(package, image, [*CHECKS, ("medication_request_create", rx)])
    written = [after for _, _, after in ctx.view.touched()]
    return (written[0] if written else None), ctx


# --- the dose as FHIR ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dose, quantity",
    [
        ("20mg", {"value": 20.0, "unit": "mg"}),
        ("20 mg", {"value": 20.0, "unit": "mg"}),
        ("0.5 g", {"value": 0.5, "unit": "g"}),
        ("2 吸", {"value": 2.0, "unit": "吸"}),
        ("5毫克", {"value": 5.0, "unit": "毫克"}),
    ],
)
def test_a_dose_that_is_one_amount_becomes_a_dose_quantity(dose, quantity):
    assert fhir.dosage("奥美拉唑", dose, "qd", "oral")["doseAndRate"] == [{"doseQuantity": quantity}]


@pytest.mark.parametrize("dose", ["20-40 mg", "20 mg bid", "one tablet"])
def test_a_dose_that_is_not_one_amount_has_no_dose_quantity(dose):
    assert "doseAndRate" not in fhir.dosage("奥美拉唑", dose, "qd", "oral")


# --- the amount matcher ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "matcher, value, expected",
    [
        ({"amount": "20 mg"}, "20mg", True),
        ({"amount": "20 mg"}, "20 毫克", True),
        ({"amount": "20 mg"}, {"value": 20, "unit": "mg"}, True),
        ({"amount": "20 mg"}, "奥美拉唑 20 mg qd oral", True),
        ({"amount": "20 mg"}, "40 mg", False),
        ({"amount": "20 mg"}, "20 mL", False),
        ({"amount": "20 mg"}, "20 mg or 40 mg", False),  # several candidates are no answer
        ({"amount": "20 mg"}, 20, False),  # no unit
        ({"amount": "500 mg"}, "0.5 g", False),  # another unit only where the package allows it
        ({"amount": "500 mg", "convertible": True}, "0.5 g", True),
        ({"amount": "500 mg", "convertible": True}, {"value": 0.5, "unit": "g"}, True),
        ({"amount": "500 mg", "convertible": True}, "0.5 mL", False),
        ({"amount": "500 mg", "convertible": True}, "0.4 g", False),
        ({"amount": "500 mg", "convertible": True, "tol": 100}, "0.4 g", True),
        ({"amount": "2.5 mg", "tol": 0.1}, "2.6mg", True),
    ],
)
def test_amount_matcher(matcher, value, expected):
    assert Matcher.model_validate(matcher).matches(value) is expected


def test_an_amount_that_is_not_one_amount_is_refused_when_the_hidden_half_is_read():
    use = VerifierUse(
        id="dose",
        kind="state.resource",
        category="success",
        params={"type": "MedicationRequest", "where": {"dosageInstruction.text": {"amount": "20 or 40"}}},
    )
    with pytest.raises(SpecError, match="not one amount"):
        bind(use)


@pytest.mark.parametrize("dose", ["20mg", "20 mg", "20 毫克"])
def test_a_state_check_on_the_dose_accepts_every_way_of_writing_it(med, dose):
    _, ctx = prescribed(med, dose=dose)
    where = {"dosageInstruction.doseAndRate.doseQuantity": {"amount": "20 mg"}}
    assert check(ctx, "state.resource", type="MedicationRequest", where=where, max=1).passed


def test_a_state_check_on_the_dose_converts_only_where_the_package_allows_it(med):
    _, ctx = prescribed(med, dose="0.02 g")
    path = "dosageInstruction.doseAndRate.doseQuantity"
    assert not check(ctx, "state.resource", type="MedicationRequest", where={path: {"amount": "20 mg"}}).passed
    assert check(
        ctx, "state.resource", type="MedicationRequest", where={path: {"amount": "20 mg", "convertible": True}}
    ).passed
    _, wrong = prescribed(med, dose="0.04 g")
    assert not check(
        wrong, "state.resource", type="MedicationRequest", where={path: {"amount": "20 mg", "convertible": True}}
    ).passed


# --- routes and frequencies ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "term, code",
    [
        ("qd", "qd"),
        ("每日一次", "qd"),
        ("once daily", "qd"),
        ("Daily", "qd"),
        ("q24h", "qd"),
        ("bid", "bid"),
        ("每日两次", "bid"),
        ("twice daily", "bid"),
        ("q12h", "bid"),
        ("TID", "tid"),
        ("qid", "qid"),
        ("qn", "qn"),
        ("每晚", "qn"),
        ("prn", "prn"),
        ("必要时", "prn"),
        ("st", "once"),
        ("once", "once"),
        ("oral", "oral"),
        ("PO", "oral"),
        ("口服", "oral"),
        ("iv", "iv"),
        ("静脉", "iv"),
        ("intravenous", "iv"),
        ("im", "im"),
        ("sc", "sc"),
        ("皮下", "sc"),
        ("吸入", "inhaled"),
        ("外用", "topical"),
        ("舌下", "sublingual"),
    ],
)
def test_same_as_compares_through_the_dose_terms_table(term, code):
    assert Matcher(same_as=code).matches(term) and Matcher(same_as=term).matches(code)


@pytest.mark.parametrize(
    "term, other",
    [
        ("qd", "bid"),
        ("每日一次", "每日两次"),
        ("qn", "qd"),
        ("prn", "once"),
        ("oral", "iv"),
        ("口服", "静脉"),
        ("sc", "im"),
        ("q8h", "q12h"),
    ],
)
def test_same_as_keeps_different_terms_apart(term, other):
    assert not Matcher(same_as=term).matches(other)


def test_same_as_knows_panels_and_drugs_and_otherwise_compares_the_text():
    assert Matcher(same_as="血常规").matches("complete blood count") and Matcher(same_as="CBC").matches("全血细胞计数")
    assert Matcher(same_as="奥美拉唑").matches("Omeprazole") and not Matcher(same_as="奥美拉唑").matches("泮托拉唑")
    assert Matcher(same_as="Fundus Photography").matches("fundus  photography")
    assert not Matcher(same_as="血常规").matches("尿常规") and not Matcher(same_as="qd").matches(1)


def test_every_dose_term_is_text_and_names_one_code():
    seen: dict[tuple[str, str], str] = {}
    for row in table("dose_terms"):
        for term in [row["code"], *row["terms"]]:
            assert isinstance(term, str), (row["code"], term)
            assert seen.setdefault((row["kind"], term.lower()), row["code"]) == row["code"], term


# --- the prescribing tool ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "route, frequency, stored",
    [
        ("口服", "每日一次", ("oral", "qd")),
        ("PO", "Once daily", ("oral", "qd")),
        ("静脉", "q12h", ("iv", "bid")),
        ("oral", "q4h", ("oral", "q4h")),  # a frequency the table does not know is kept as written
    ],
)
def test_the_prescribing_tool_stores_route_and_frequency_codes(med, route, frequency, stored):
    written, ctx = prescribed(med, route=route, frequency=frequency)
    dosage = written["dosageInstruction"][0]
    assert (dosage["route"]["text"], dosage["timing"]["code"]["text"]) == stored
    assert ctx.events[-1].args["route"] == route  # the record keeps what the agent wrote


def test_the_prescribing_tool_refuses_a_route_it_cannot_read(med):
    written, ctx = prescribed(med, route="by injection")
    assert written is None and ctx.events[-1].error["code"] == "invalid_args"


def test_the_tool_definition_still_lists_the_route_codes():
    schema = TOOLS["medication_request_create"].json_schema()["properties"]["route"]
    assert schema["enum"] == ["oral", "iv", "im", "sc", "inhaled", "topical", "sublingual"]


def test_a_matcher_with_an_unknown_condition_is_refused():
    with pytest.raises(ValidationError):
        Matcher.model_validate({"amount": "20 mg", "units": "mg"})
