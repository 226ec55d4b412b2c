"""Expectations computed from the data: ``from_ehr`` expressions in verifier params, valued at grading time on the
EHR a trial started from; and what YAML values a hidden half's matchers get."""

from __future__ import annotations

import asyncio
import copy
import json
import shutil
from datetime import datetime
from pathlib import Path

import pytest

from forge_kernel.ehr import EHRImage, EHRView, fhir
from forge_kernel.engine.grading import grade_trajectory
from forge_kernel.engine.validate import check_halves
from forge_kernel.spec import AgentResult, SpecError, VerifierUse, load_package
from forge_kernel.spec.package import Strict
from forge_kernel.verify import GradeContext, Outcome, bind, grade
from forge_kernel.verify.expressions import Chart, find_expressions
from forge_kernel.verify.registry import BoundUse, VerifierKind, graded_params
from tests.helpers import copy_suite_files

ROOT = Path(__file__).resolve().parents[2]
VITALS = "SC-IR-VITALS-24H"
"""Its gold answers the latest temperature, 37.8 ℃ (Observation ir-vit-v4-8310-5, 11-30 08:00)."""
NOW = datetime.fromisoformat("2026-11-30T09:00:00+08:00")
LATEST_TEMP = {
    "from_ehr": {
        "latest": {"type": "Observation", "code": "8310-5", "within_hours": 24},
        "field": "valueQuantity.value",
    }
}


def chart_of(*resources: dict) -> Chart:
    patients = [
        fhir.patient("p1", "甲", "female", "1970-01-01", "M1"),
        fhir.patient("p2", "乙", "male", "1970-01-01", "M2"),
    ]
    return Chart(EHRImage([*patients, *resources], NOW), "p1")


def value(chart: Chart, expression: dict):
    found = find_expressions(expression, "h.yaml", "params")
    return chart.value(found[()])


CHART = chart_of(
    fhir.observation("hb-old", "p1", "血红蛋白", 101, "g/L", "2026-11-20T08:00:00+08:00", code="718-7"),
    fhir.observation("hb-new", "p1", "血红蛋白", 96, "g/L", "2026-11-29T20:00:00+08:00", code="718-7"),
    fhir.observation("hb-other", "p2", "血红蛋白", 70, "g/L", "2026-11-30T08:00:00+08:00", code="718-7"),
    fhir.observation("k-1", "p1", "血钾", 4.1, "mmol/L", "2026-11-30T06:00:00+08:00", code="2823-3"),
    fhir.observation("hr-now", "p1", "心率", 80, "/min", "2026-11-30T09:00:00+08:00", "vital-signs", "8867-4"),
    fhir.observation("hr-late", "p1", "心率", 90, "/min", "2026-11-30T09:01:00+08:00", "vital-signs", "8867-4"),
    {
        "resourceType": "Observation",
        "id": "hb-undated",
        "subject": {"reference": "Patient/p1"},
        "code": {"text": "血红蛋白", "coding": [{"code": "718-7"}]},
        "valueQuantity": {"value": 55},
    },
)


@pytest.mark.parametrize(
    "query, expected",
    [
        ({"latest": {"type": "Observation", "code": "718-7"}, "field": "valueQuantity.value"}, 96),
        ({"earliest": {"type": "Observation", "code": "718-7"}, "field": "valueQuantity.value"}, 101),
        ({"latest": {"type": "Observation", "code": "718-7"}}, "Observation/hb-new"),  # no field: the reference
        ({"latest": {"type": "Observation", "code": "血红蛋白"}, "field": "id"}, "hb-new"),  # code text, too
        ({"latest": {"type": "Observation", "code": "2823-3"}, "field": "code.text"}, "血钾"),
        ({"latest": {"type": "Observation", "code": "718-7", "within_hours": 24}, "field": "id"}, "hb-new"),
        ({"latest": {"type": "Observation", "code": "718-7", "within_hours": 6}}, None),  # none that recent
        ({"latest": {"type": "Condition"}}, None),
        ({"latest": {"type": "Observation", "code": "718-7"}, "field": "interpretation"}, None),  # no such field
        ({"count": {"type": "Observation", "code": "718-7"}}, 3),  # the undated one counts
        ({"count": {"type": "Observation", "code": "718-7", "within_hours": 300}}, 2),  # a window leaves it out
        ({"count": {"type": "Observation", "code": "718-7", "within_hours": 24}}, 1),
        ({"exists": {"type": "Observation", "code": "2823-3", "within_hours": 24}}, True),
        ({"exists": {"type": "Condition"}}, False),
        ({"mean": {"type": "Observation", "code": "718-7"}, "field": "valueQuantity.value"}, 98.5),  # dated only
        ({"mean": {"type": "Observation", "code": "718-7", "within_hours": 24}, "field": "valueQuantity.value"}, 96),
        ({"mean": {"type": "Observation", "code": "718-7", "within_hours": 6}, "field": "valueQuantity.value"}, None),
        ({"mean": {"type": "Observation", "code": "718-7"}, "field": "code.text"}, None),  # no number there
        ({"latest": {"type": "Observation", "code": "8867-4"}, "field": "id"}, "hr-now"),  # a record after now: no
    ],
)
def test_an_expression_reads_the_current_patients_records(query, expected):
    assert value(CHART, {"from_ehr": query}) == expected


def test_a_field_with_several_values_gives_them_all():
    chart = chart_of(fhir.observation("hb", "p1", "血红蛋白", 96, "g/L", "2026-11-29T20:00:00+08:00", code="718-7"))
    assert value(chart, {"from_ehr": {"latest": {"type": "Observation"}, "field": "code.coding.code"}}) == "718-7"
    assert value(chart, {"from_ehr": {"latest": {"type": "Observation"}, "field": "category.text"}}) == "laboratory"
    two = {
        **chart.image.resources[("Observation", "hb")],
        "id": "hb2",
        "category": [{"text": "laboratory"}, {"text": "vital-signs"}],
    }
    assert value(chart_of(two), {"from_ehr": {"latest": {"type": "Observation"}, "field": "category.text"}}) == [
        "laboratory",
        "vital-signs",
    ]


@pytest.mark.parametrize(
    "params, field",
    [
        ({"value": {"from_ehr": {"type": "Observation"}}}, "verifiers.v.params.value.from_ehr.type"),
        ({"value": {"from_ehr": {"newest": {"type": "Observation"}}}}, "verifiers.v.params.value.from_ehr.newest"),
        (
            {"value": {"from_ehr": {"latest": {"type": "Observation"}, "count": {"type": "Observation"}}}},
            "verifiers.v.params.value.from_ehr",
        ),
        ({"value": {"from_ehr": {}}}, "verifiers.v.params.value.from_ehr"),
        (
            {"value": {"from_ehr": {"count": {"type": "Observation"}, "field": "id"}}},
            "verifiers.v.params.value.from_ehr",
        ),
        ({"value": {"from_ehr": {"mean": {"type": "Observation"}}}}, "verifiers.v.params.value.from_ehr"),
        ({"value": {"from_ehr": {"latest": {"code": "718-7"}}}}, "verifiers.v.params.value.from_ehr.latest.type"),
        (
            {"value": {"from_ehr": {"latest": {"type": "Observation", "within_hours": 0}}}},
            "verifiers.v.params.value.from_ehr.latest.within_hours",
        ),
        (
            {"value": {"from_ehr": {"latest": {"type": "Observation"}}, "default": 1}},
            "verifiers.v.params.value.default",
        ),
        ({"value": LATEST_TEMP, "tol": -1}, "verifiers.v.params.tol"),  # the rest of the params is still checked
    ],
)
def test_a_malformed_expression_is_a_spec_error_when_bound(params, field):
    with pytest.raises(SpecError) as err:
        bind(VerifierUse(id="v", kind="answer.number", category="answer", params=params), "h.yaml")
    assert err.value.field == field


@pytest.mark.parametrize(
    "kind, params",
    [
        ("answer.number", {"value": LATEST_TEMP, "tol": 0.05}),
        ("answer.text", {"all": [LATEST_TEMP]}),
        ("state.resource", {"type": "Observation", "where": {"valueQuantity.value": {"approx": LATEST_TEMP}}}),
        ("state.resource", {"type": "Observation", "where": {"id": {"equals": LATEST_TEMP}}}),
    ],
)
def test_a_well_formed_expression_binds_anywhere_in_the_params(kind, params):
    found, validated = bind(VerifierUse(id="v", kind=kind, category="answer", params=params), "h.yaml")
    assert found.name == kind and validated is None  # valued only against a trial's EHR


# --- a package whose expectation comes from the data ----------------------------------------------------------


def vitals_copy(root: Path, latest_temp: float | None = None) -> Path:
    """SC-IR-VITALS-24H under root with a check of the latest temperature in the answer read from the data, and (if
    given) that temperature changed in the fixture."""
    package = root / "task_packages" / "superclue" / VITALS
    shutil.copytree(ROOT / "task_packages" / "superclue" / VITALS, package)
    copy_suite_files(root)
    hidden = root / "verifiers" / "superclue" / f"{VITALS}.yaml"
    hidden.parent.mkdir(parents=True, exist_ok=True)
    text = (ROOT / "verifiers" / "superclue" / f"{VITALS}.yaml").read_text(encoding="utf-8")
    check = (
        "- id: latest-temp\n  kind: answer.number\n  category: answer\n  params:\n"
        f"    value: {json.dumps(LATEST_TEMP)}\n    tol: 0.05\n"
        "    pattern: '(?:体温|temperature|temp)[^0-9]{0,8}?-?(\\d+(?:\\.\\d+)?)'\n"
    )
    hidden.write_text(text.replace("verifiers:\n", "verifiers:\n" + check, 1), encoding="utf-8")
    if latest_temp is not None:
        fixture = package / "fixtures" / "ehr.json"
        bundle = json.loads(fixture.read_text(encoding="utf-8"))
        (latest,) = (e["resource"] for e in bundle["entry"] if e["resource"]["id"] == "ir-vit-v4-8310-5")
        latest["valueQuantity"]["value"] = latest_temp
        fixture.write_text(json.dumps(bundle, ensure_ascii=False), encoding="utf-8")
    return package


def latest_temp_verdict(package, answer: str | None = None):
    trajectory = package.hidden.gold.model_copy(update={"answer": answer} if answer else {})
    grading = asyncio.run(grade_trajectory(package, trajectory)).grading
    return {v.verifier_id: v for v in grading.verdicts}["latest-temp"], grading.scores


def test_the_expectation_follows_the_fixture(tmp_path):
    same = load_package(vitals_copy(tmp_path / "same"))
    verdict, scores = latest_temp_verdict(same)
    assert verdict.passed and scores.passed and "37.8" in verdict.reason

    changed = load_package(vitals_copy(tmp_path / "changed", latest_temp=38.9))
    verdict, scores = latest_temp_verdict(changed)  # the gold still answers the old constant, 37.8
    assert not verdict.passed and not verdict.error and not scores.passed and "38.9" in verdict.reason
    gold = changed.hidden.gold.answer
    verdict, scores = latest_temp_verdict(changed, gold.replace("体温 37.8 ℃", "体温 38.9 ℃"))
    assert verdict.passed and scores.passed


def latest_temp_verdicts(tmp_path) -> list[bool]:
    """latest-temp of the gold answer (37.8) graded by one hidden half against the package's own initial EHR and
    against one whose latest temperature is 38.9, in turn."""
    package = load_package(vitals_copy(tmp_path))
    now, answer = package.public.environment.now, AgentResult(answer=package.hidden.gold.answer)
    changed = copy.deepcopy(package.resources)
    (latest,) = (r for r in changed if r["id"] == "ir-vit-v4-8310-5")
    latest["valueQuantity"]["value"] = 38.9
    found = []
    for image in [EHRImage(package.resources, now), EHRImage(changed, now)] * 2:
        verdicts = grade(GradeContext(package, EHRView(image), [], answer)).verdicts
        found.append({v.verifier_id: v.passed for v in verdicts}["latest-temp"])
    return found


def test_the_params_are_valued_in_each_trials_initial_ehr(tmp_path):
    assert latest_temp_verdicts(tmp_path) == [True, False, True, False]


def test_params_valued_once_per_use_would_grade_against_the_first_ehr_seen(tmp_path, monkeypatch):
    real, kept = BoundUse.params_in, {}
    monkeypatch.setattr(BoundUse, "params_in", lambda bound, ctx: kept.setdefault(id(bound), real(bound, ctx)))
    assert latest_temp_verdicts(tmp_path) == [True, True, True, True]


def test_forge_validate_checks_the_expressions_shape(tmp_path):
    check_halves(load_package(vitals_copy(tmp_path / "good")))
    package = vitals_copy(tmp_path / "bad")
    hidden = tmp_path / "bad" / "verifiers" / "superclue" / f"{VITALS}.yaml"
    hidden.write_text(hidden.read_text(encoding="utf-8").replace('"latest"', '"newest"'), encoding="utf-8")
    with pytest.raises(SpecError) as err:
        check_halves(load_package(package))
    assert (err.value.file, err.value.field) == (str(hidden), "verifiers.latest-temp.params.value.from_ehr.newest")


# --- none -----------------------------------------------------------------------------------------------------

NO_SUCH_RECORD = {"from_ehr": {"latest": {"type": "Observation", "code": "no-such-code"}, "field": "id"}}


@pytest.mark.parametrize(
    "kind, params, message",
    [
        ("answer.number", {"value": NO_SUCH_RECORD}, "params.value: Input should be a valid number"),
        (
            "answer.field",
            {"path": "x", "match": {"equals": NO_SUCH_RECORD}},
            "params.match.equals: the expression is none (no such record), and none here would mean 'not given'",
        ),
        (
            "state.resource",
            {"type": "Observation", "where": {"id": {"one_of": NO_SUCH_RECORD}}},
            "params.where.id.one_of: the expression is none",
        ),
    ],
)
def test_none_never_turns_a_check_off(kind, params, message):
    found, _ = bind(use := VerifierUse(id="v", kind=kind, category="answer", params=params), "h.yaml")
    with pytest.raises(SpecError) as err:
        graded_params(found, use, "h.yaml", CHART)
    assert message in str(err.value)


class ExpectsNone(Strict):
    expected: float | None
    """Required, and none is a value: "there is no such record"."""


def test_none_reaches_a_parameter_that_takes_it_as_a_value():
    kind = VerifierKind("test.expects_none", ExpectsNone, lambda ctx, p: Outcome(True, ""), "")
    use = VerifierUse(id="v", kind=kind.name, category="answer", params={"expected": NO_SUCH_RECORD})
    assert graded_params(kind, use, "h.yaml", CHART).expected is None
    hb = {"from_ehr": {"latest": {"type": "Observation", "code": "718-7"}, "field": "valueQuantity.value"}}
    assert graded_params(kind, use.model_copy(update={"params": {"expected": hb}}), "h.yaml", CHART).expected == 96


# --- YAML as a hidden half is read ----------------------------------------------------------------------------

YAML_MATCHERS = """\
- id: consent
  kind: answer.field
  category: answer
  params:
    path: consent
    match:
      equals: yes
- id: time
  kind: answer.field
  category: answer
  params:
    path: time
    match:
      equals: 12:30
"""


@pytest.mark.parametrize(
    "output, passed",
    [
        ({"consent": "yes", "time": "12:30"}, True),
        ({"consent": True, "time": "12:30"}, False),  # what YAML 1.1 reads yes as
        ({"consent": "yes", "time": 750}, False),  # what YAML 1.1 reads 12:30 as (sexagesimal)
    ],
)
def test_yaml_1_1_surprises_never_reach_a_matcher(tmp_path, output, passed):
    package = vitals_copy(tmp_path)
    hidden = tmp_path / "verifiers" / "superclue" / f"{VITALS}.yaml"
    text = hidden.read_text(encoding="utf-8")
    hidden.write_text(text.replace("\ngold:\n", f"\n{YAML_MATCHERS}gold:\n"), encoding="utf-8")
    loaded = load_package(package)
    uses = {u.id: u for u in loaded.hidden.verifiers}
    assert uses["consent"].params["match"]["equals"] == "yes" and uses["time"].params["match"]["equals"] == "12:30"
    trajectory = loaded.hidden.gold.model_copy(update={"output": output})
    verdicts = {v.verifier_id: v for v in asyncio.run(grade_trajectory(loaded, trajectory)).grading.verdicts}
    assert (verdicts["consent"].passed and verdicts["time"].passed) is passed
