"""The record answer type: an object of typed fields, declared in the public half, given to the agent as a JSON
Schema object and compared field by field by ``answer.typed``. Shown on the forge-nsclc packages, whose structured
output is a list of assessment records each holding a list of criterion records (synthetic data only)."""

from __future__ import annotations

import copy

import jsonschema
import pytest
import yaml

from forge_kernel.agents import AgentTask
from forge_kernel.agents.llm import prompt
from forge_kernel.engine import Images
from forge_kernel.engine.validate import check_package
from forge_kernel.spec import AnswerField, SpecError, answer_schema, load_package
from forge_kernel.verify import bind
from forge_kernel.verify.kinds import _typed
from forge_kernel.verify.kinds._typed import mismatch
from forge_kernel.workers.mcp import task_text
from tests.helpers import ROOT, copy_packages, trial

NSCLC = ROOT / "task_packages" / "forge-nsclc"
PACKAGES = sorted(p.name for p in NSCLC.glob("TP-*"))
ASSESSMENT = AnswerField.model_validate(
    {
        "type": "record",
        "fields": {
            "protocol_id": {"type": "status", "options": ["A", "B", "C"]},
            "eligibility": {"type": "status", "options": ["eligible", "ineligible", "undetermined"]},
            "version": {"type": "record", "fields": {"current": {"type": "boolean"}}},
            "reason": {"type": "text", "optional": True},
        },
    }
)


@pytest.fixture(scope="module")
def eligible():
    return load_package(NSCLC / "TP-ELIGIBLE-v1")


def typed(package, output):
    """The answer.typed verdict of ``package`` on a trial that gave ``output``."""
    use = next(v for v in package.hidden.verifiers if v.kind == "answer.typed")
    kind, params = bind(use, package.hidden_path, package.public.task.answer)
    return kind.check(trial(package, Images()[package], [], output=output), params)


# --- the declaration -------------------------------------------------------------------------------------------


def test_a_record_is_an_object_of_its_typed_fields_and_a_list_may_hold_records():
    schema = answer_schema({"assessments": AnswerField(type="list", items=ASSESSMENT)})["properties"]["assessments"]
    record = schema["items"]
    assert record["type"] == "object" and record["required"] == ["protocol_id", "eligibility", "version", "reason"]
    assert record["properties"]["eligibility"]["enum"] == ["eligible", "ineligible", "undetermined"]
    assert record["properties"]["version"]["properties"]["current"]["type"] == "boolean"
    assert {"type": "null"} in record["properties"]["reason"]["anyOf"]  # optional: may be null
    good = {"protocol_id": "A", "eligibility": "eligible", "version": {"current": True}, "reason": None}
    jsonschema.validate([good], schema)
    for bad in ({**good, "eligibility": "maybe"}, {**good, "version": {"current": "yes"}}, "A"):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate([bad], schema)


@pytest.mark.parametrize(
    "field, message",
    [
        ({"type": "record"}, "fields is given with type record and only then"),
        ({"type": "record", "fields": {}}, "a record has at least one field"),
        ({"type": "text", "fields": {"a": {"type": "text"}}}, "fields is given with type record and only then"),
    ],
)
def test_a_record_without_fields_or_fields_without_a_record_is_refused(field, message):
    with pytest.raises(ValueError, match=message):
        AnswerField.model_validate(field)


def test_a_field_of_an_unknown_type_is_refused_naming_the_field(tmp_path):
    suite = copy_packages(tmp_path, "forge-nsclc", ["TP-ELIGIBLE-v1"])
    manifest = suite / "TP-ELIGIBLE-v1" / "package.yaml"
    data = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    criterion = data["task"]["answer"]["assessments"]["items"]["fields"]["criteria"]["items"]
    criterion["fields"]["status"]["type"] = "verdict"
    manifest.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(SpecError) as info:
        check_package(suite / "TP-ELIGIBLE-v1")
    assert info.value.field == "task.answer.assessments.items.fields.criteria.items.fields.status.type"
    assert "'record'" in info.value.message and "\n" not in str(info.value)


@pytest.mark.parametrize(
    "expect, message",
    [
        ([{"protocol_id": "LUNG-EGFR-202", "eligibility": "maybe"}], "expect.assessments.eligibility: one of"),
        ([{"protocol_id": "LUNG-EGFR-202", "site": "Beijing"}], "expect.assessments.site: no such field"),
        ([{"protocol_version": "1.0"}], "expect.assessments.protocol_version: a text field is not compared"),
        ([{}], "expect.assessments: a record of some of protocol_id, protocol_version"),
    ],
)
def test_an_expected_record_is_checked_field_by_field_against_its_declaration(tmp_path, expect, message):
    copy_packages(tmp_path, "forge-nsclc", ["TP-ELIGIBLE-v1"])
    hidden = tmp_path / "verifiers" / "forge-nsclc" / "TP-ELIGIBLE-v1.yaml"
    data = yaml.safe_load(hidden.read_text(encoding="utf-8"))
    next(v for v in data["verifiers"] if v["kind"] == "answer.typed")["params"]["expect"]["assessments"] = expect
    hidden.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(SpecError) as info:
        check_package(tmp_path / "task_packages" / "forge-nsclc" / "TP-ELIGIBLE-v1")
    assert message in info.value.message


# --- the comparison --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "got, reason",
    [
        ({"protocol_id": "B", "eligibility": "Eligible", "version": {"current": True}}, None),  # only what is expected
        ({"eligibility": "ineligible", "version": {"current": True}}, "x.eligibility: 'ineligible' is not 'eligible'"),
        ({"eligibility": "eligible", "version": {"current": "true"}}, "x.version.current: 'true' is not true"),
        ({"eligibility": "eligible"}, "x.version: missing"),
        ("eligible", "x: 'eligible' is not a record"),
    ],
)
def test_a_record_is_compared_field_by_field_and_a_wrong_inner_field_is_named_by_its_path(got, reason):
    problem = mismatch(ASSESSMENT, {"eligibility": "eligible", "version": {"current": True}}, got, 0)
    assert (problem and _typed.at_path("x", problem)) == reason  # as answer.typed names output.x


def test_a_list_of_records_is_a_set_of_records_and_an_extra_one_is_shown_by_the_expected_fields():
    assessments = AnswerField(type="list", items=ASSESSMENT)
    want = [{"protocol_id": "A", "eligibility": "eligible"}, {"protocol_id": "B", "eligibility": "ineligible"}]
    b, a = {"protocol_id": "B", "eligibility": "ineligible"}, {"protocol_id": "A", "eligibility": "eligible"}
    assert mismatch(assessments, want, [b, a], 0) is None
    assert mismatch(assessments, want, [b], 0) == "missing {'protocol_id': 'A', 'eligibility': 'eligible'}"
    extra = {"protocol_id": "C", "eligibility": "eligible", "criteria": ["long", "content"]}
    assert mismatch(assessments, want, [a, b, extra], 0) == (
        "not expected: {'protocol_id': 'C', 'eligibility': 'eligible'}"
    )


def test_the_eligible_packages_assessments_are_graded_as_records(eligible):
    gold = eligible.hidden.gold.output
    assert typed(eligible, gold).passed
    undetermined = copy.deepcopy(gold)
    undetermined["assessments"][0]["eligibility"] = "undetermined"
    outcome = typed(eligible, undetermined)
    assert not outcome.passed
    assert outcome.reason == "output.assessments: missing {'protocol_id': 'LUNG-EGFR-202', 'eligibility': 'eligible'}"
    outcome = typed(eligible, {**gold, "in_scope": "true", "ranking": ["LUNG-EGFR-202"]})
    assert outcome.reason == "output.in_scope: 'true' is not true; output.ranking: missing LUNG-IO-301, LUNG-KRAS-105"


def test_a_grader_that_does_not_compare_records_lets_the_wrong_eligibility_through(eligible, monkeypatch):
    undetermined = copy.deepcopy(eligible.hidden.gold.output)
    undetermined["assessments"][0]["eligibility"] = "undetermined"
    assert not typed(eligible, undetermined).passed
    broken = _typed.Comparison(_typed.expected_record, lambda spec, want, got, tol: None)
    monkeypatch.setitem(_typed.COMPARISONS, "record", broken)  # the mechanism broken: any object is every record
    assert typed(eligible, undetermined).passed


# --- the agent is given it ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("task_id", PACKAGES)
def test_each_nsclc_package_declares_its_output_as_a_typed_answer_its_gold_meets(task_id):
    package = load_package(NSCLC / task_id)
    assert "output" not in package.public.task.context
    jsonschema.validate(package.hidden.gold.output, answer_schema(package.public.task.answer))


def test_the_llm_and_mcp_agents_are_given_the_record_schema(eligible):
    task = AgentTask.from_package(eligible.public, seed=0)
    criterion = task.answer_schema["properties"]["assessments"]["items"]["properties"]["criteria"]["items"]
    assert criterion["properties"]["status"]["enum"] == ["met", "not_met", "unknown", "conflict"]
    shown = '"enum":["met","not_met","unknown","conflict"]'
    assert shown in prompt(task)[1]["content"] and shown in task_text(task)
    assert '"output"' not in prompt(task)[1]["content"].split("Answer schema")[0]  # no free-text shape in the context
