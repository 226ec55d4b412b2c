"""The typed answer: declared in the public half, given to the agent as a JSON Schema, compared by type in the hidden
half (``answer.typed``): quantities converted between units, dates in the forms both languages write, concepts by the
terminology tables, statuses from a closed set, lists as sets, numbers as JSON numbers. Each comparison is shown
rejecting what it guards against and accepting valid alternatives, on the bundled SC-DA packages (synthetic data
only)."""

from __future__ import annotations

import asyncio
from typing import get_args

import jsonschema
import pytest
import yaml

from forge_kernel.agents import AgentTask, agent_factory
from forge_kernel.agents.llm import prompt
from forge_kernel.engine import Images, run_trial
from forge_kernel.engine.selftest import mutation_test
from forge_kernel.engine.validate import check_halves, check_package
from forge_kernel.spec import AnswerField, SpecError, VerifierUse, answer_schema, find_packages, load_package
from forge_kernel.spec.package import AnswerType
from forge_kernel.verify import bind
from forge_kernel.verify.kinds import _typed
from forge_kernel.verify.kinds._typed import mismatch
from tests.helpers import ROOT, copy_packages, trial

SUPERCLUE = ROOT / "task_packages" / "superclue"


@pytest.fixture(scope="module")
def bmi():
    return load_package(SUPERCLUE / "SC-DA-BMI")


def typed(package, output, **params):
    """The answer.typed verdict on a trial that gave ``output``, with the package's own params unless given."""
    use = next(v for v in package.hidden.verifiers if v.kind == "answer.typed")
    use = use.model_copy(update={"params": params or use.params})
    kind, validated = bind(use, package.hidden_path, package.public.task.answer)
    image = Images()[package]
    return kind.check(trial(package, image, [], output=output), validated)


GOOD = {"bmi": {"value": 28.4, "unit": "kg/m2"}, "category": "obese"}


@pytest.mark.parametrize(
    "bmi_value",
    [
        {"value": 28.4, "unit": "kg/m2"},
        {"value": 28.4, "unit": "kg/m²"},
        {"value": 28.43, "unit": "kg/m^2"},
        {"value": 2.84, "unit": "g/cm2"},  # another unit of the dimension, converted
        "28.4 kg/m²",  # one amount written as text
    ],
)
def test_a_quantity_passes_in_any_unit_of_its_dimension(bmi, bmi_value):
    outcome = typed(bmi, {**GOOD, "bmi": bmi_value})
    assert outcome.passed, outcome.reason


@pytest.mark.parametrize(
    "bmi_value, reason",
    [
        (28.4, "28.4 is not a quantity with its unit"),
        ({"value": 28.4, "unit": "g/cm2"}, "284 kg/m2 is not 28.4 ± 0.1"),
        ({"value": 28.4, "unit": "mmol/L"}, "28.4 mmol/L is not in a unit of kg/m2"),
        ({"value": 27.8, "unit": "kg/m2"}, "27.8 kg/m2 is not 28.4 ± 0.1"),
        (None, "missing"),
    ],
)
def test_a_quantity_fails_without_its_unit_in_another_size_or_dimension_or_off_value(bmi, bmi_value, reason):
    outcome = typed(bmi, {**GOOD, "bmi": bmi_value})
    assert not outcome.passed and outcome.reason == f"output.bmi: {reason}"


def test_a_status_comes_from_its_closed_set_and_every_wrong_field_is_named(bmi):
    assert typed(bmi, {**GOOD, "category": "Obese"}).passed  # case does not matter
    outcome = typed(bmi, {"bmi": 30, "category": "肥胖"})
    assert outcome.reason == "output.bmi: 30 is not a quantity with its unit; output.category: '肥胖' is not 'obese'"


def test_the_egfr_unit_per_body_surface_converts():
    egfr = load_package(SUPERCLUE / "SC-DA-EGFR")
    for value in ({"value": 42, "unit": "mL/min/1.73m2"}, {"value": 0.7, "unit": "mL/s/1.73 m²"}):
        assert typed(egfr, {"egfr": value, "stage": "G3b"}).passed, value
    wrong = typed(egfr, {"egfr": {"value": 42, "unit": "mL/s/1.73m2"}, "stage": "G3b"})
    assert not wrong.passed and "2520" in wrong.reason


@pytest.mark.parametrize(
    "spec, want, got, ok",
    [
        (AnswerField(type="date"), "2026-11-30", "2026-11-30", True),
        (AnswerField(type="date"), "2026-11-30", "2026年11月30日", True),
        (AnswerField(type="date"), "2026-11-30", "November 30, 2026", True),
        (AnswerField(type="date"), "2026-11-30", "30 Nov 2026", True),
        (AnswerField(type="date"), "2026-11-30", "2026-11-29", False),
        (AnswerField(type="date"), "2026-11-30", "11月30日", False),  # no year: not one date
        (
            AnswerField(type="interval"),
            {"start": "2026-11-18", "end": "2026-11-21"},
            {"start": "18 Nov 2026", "end": "2026年11月21日"},
            True,
        ),
        (
            AnswerField(type="interval"),
            {"start": "2026-11-18", "end": "2026-11-21"},
            {"start": "2026-11-18", "end": "2026-11-22"},
            False,
        ),
        (AnswerField(type="concept", terms="orders"), "血常规", "complete blood count", True),
        (AnswerField(type="concept", terms="orders"), "血常规", "CBC", True),
        (AnswerField(type="concept", terms="orders"), "血常规", "尿常规", False),
        (AnswerField(type="concept", terms="drugs"), "奥美拉唑", "omeprazole", True),
        (AnswerField(type="concept", terms="drugs"), "奥美拉唑", "泮托拉唑", False),
        (AnswerField(type="boolean"), False, False, True),
        (AnswerField(type="boolean"), False, "false", False),
        (AnswerField(type="number"), 9, 9.0, True),
        (AnswerField(type="number"), 9, 10, False),
        (AnswerField(type="number"), 9, "9 分", False),  # a number field takes a JSON number
        (AnswerField(type="number"), 9, {"value": 9, "unit": "1"}, False),
        (AnswerField(type="number"), 9, True, False),
        (AnswerField(type="quantity", unit="℃"), 40, {"value": 104, "unit": "℉"}, True),  # units with an offset
        (AnswerField(type="quantity", unit="℃"), 40, {"value": 40, "unit": "°F"}, False),
        (AnswerField(type="quantity", unit="%"), -9.0, {"value": -0.09, "unit": "1"}, True),  # a fraction
    ],
)
def test_dates_concepts_booleans_and_numbers_compare_by_type(spec, want, got, ok):
    assert (mismatch(spec, want, got, 0) is None) is ok


def test_a_list_is_a_set_and_contains_asks_for_at_least_these():
    orders = AnswerField(type="list", items=AnswerField(type="concept", terms="orders"))
    assert mismatch(orders, ["血常规", "肝功能"], ["liver function", "CBC"], 0) is None
    assert mismatch(orders, ["血常规", "肝功能"], ["CBC"], 0) == "missing 肝功能"
    assert mismatch(orders, ["血常规"], ["CBC", "尿常规"], 0) == "not expected: 尿常规"
    assert mismatch(orders, {"contains": ["血常规"]}, ["CBC", "尿常规"], 0) is None


def test_every_answer_type_has_one_comparison():
    assert set(_typed.COMPARISONS) == set(get_args(AnswerType))


@pytest.mark.parametrize(
    "spec, value, problem",
    [
        (AnswerField(type="date"), {"start": "2026-11-18", "end": "2026-11-21"}, "a date (YYYY-MM-DD)"),
        (AnswerField(type="interval"), "2026-11-18", "{start, end} dates"),
        (AnswerField(type="interval"), {"start": "2026-11-18"}, "{start, end} dates"),
        (AnswerField(type="boolean"), "false", "true or false"),
        (AnswerField(type="text"), "anything", "a text field is not compared by value"),
        (AnswerField(type="list", items=AnswerField(type="number")), {"contains": [1, "2"]}, "a number"),
    ],
)
def test_an_expected_value_that_does_not_fit_its_type_is_named(spec, value, problem):
    assert _typed.expectation_problem(spec, value) == problem


def test_a_number_is_given_to_the_agent_as_a_json_number_and_expected_as_one():
    assert answer_schema({"total": AnswerField(type="number")})["properties"]["total"]["type"] == "number"
    assert _typed.expectation_problem(AnswerField(type="number"), "9") == "a number"
    assert _typed.expectation_problem(AnswerField(type="number"), 9) is None


TYPED = sorted(p.name for p in SUPERCLUE.glob("SC-DA-*"))
"""The 数据分析 packages: every one answers in typed fields."""


@pytest.mark.parametrize("task_id", TYPED)
def test_each_analysis_package_is_graded_by_its_typed_answer_which_its_gold_output_meets(task_id):
    package = load_package(SUPERCLUE / task_id)
    kinds = {v.kind for v in package.hidden.verifiers}
    assert "answer.typed" in kinds
    jsonschema.validate(package.hidden.gold.output, answer_schema(package.public.task.answer))


@pytest.mark.parametrize("task_id", TYPED)
def test_the_reference_agent_answers_in_the_schema_the_task_declares(task_id):
    package = load_package(SUPERCLUE / task_id)
    record = asyncio.run(run_trial(package, Images()[package], agent_factory("candidate-v2")(), 0, 7))
    jsonschema.validate(record.result.output, answer_schema(package.public.task.answer))


def test_the_agent_is_given_the_typed_answer_as_a_json_schema_the_gold_output_meets(bmi):
    task = AgentTask.from_package(bmi.public, seed=0)
    schema = task.answer_schema
    assert schema == answer_schema(bmi.public.task.answer)
    jsonschema.validate(bmi.hidden.gold.output, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**GOOD, "bmi": 28.4}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**GOOD, "category": "肥胖"}, schema)
    assert "Answer schema" in prompt(task)[1]["content"] and '"enum":["underweight"' in prompt(task)[1]["content"]
    public = bmi.public.model_copy(update={"task": bmi.public.task.model_copy(update={"answer": {}})})
    untyped = AgentTask.from_package(public, seed=0)  # a task that declares no typed answer
    assert untyped.answer_schema is None and "Answer schema" not in prompt(untyped)[1]["content"]


@pytest.mark.parametrize(
    "field, edit, message",
    [
        ("expect.weight", {"weight": 80}, "the task's answer declares no such field"),
        ("expect.category", {"category": "肥胖"}, "one of ['underweight', 'normal', 'overweight', 'obese']"),
        ("expect.bmi", {"bmi": "28.4"}, "a number in kg/m2"),
    ],
)
def test_an_expectation_the_public_answer_does_not_declare_is_one_line_naming_it(tmp_path, field, edit, message):
    copy_packages(tmp_path, "superclue", ["SC-DA-BMI"])
    hidden = tmp_path / "verifiers" / "superclue" / "SC-DA-BMI.yaml"
    data = yaml.safe_load(hidden.read_text(encoding="utf-8"))
    use = next(v for v in data["verifiers"] if v["kind"] == "answer.typed")
    use["params"]["expect"] |= edit
    hidden.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(SpecError) as info:
        check_package(tmp_path / "task_packages" / "superclue" / "SC-DA-BMI")
    assert (info.value.file, info.value.field) == (str(hidden), "verifiers.category.params")
    assert f"{field}: {message}" in info.value.message and "\n" not in str(info.value)


@pytest.mark.parametrize(
    "field, message",
    [
        ({"type": "quantity"}, "unit is given with type quantity and only then"),
        ({"type": "date", "unit": "kg"}, "unit is given with type quantity and only then"),
        ({"type": "status", "options": ["a", "b"], "terms": "drugs"}, "terms is given with type concept and only then"),
    ],
)
def test_a_badly_typed_answer_field_is_refused(field, message):
    with pytest.raises(ValueError, match=message):
        AnswerField.model_validate(field)


def test_the_unit_swap_operator_is_killed_by_the_typed_check(bmi):
    report = asyncio.run(mutation_test(bmi, Images()))
    [swap] = [r for r in report.results if r.mutant.operator == "unit-swap"]
    assert swap.status == "rejected" and "category" in swap.detail.split("fails ")[-1].split(", ")


def test_a_grader_that_ignores_units_lets_the_swapped_unit_through(bmi, monkeypatch):
    swapped = {**GOOD, "bmi": {"value": 28.4, "unit": "g/cm2"}}
    assert not typed(bmi, swapped).passed
    monkeypatch.setattr(_typed, "in_unit", lambda found, unit: found.value)  # the mechanism broken: no conversion
    assert typed(bmi, swapped).passed


def test_a_typed_expectation_without_its_package_is_shaped_only(bmi):
    """Without the task's answer only the params' shape is checked; given it, each expected field is checked
    against its declaration."""
    use = VerifierUse(id="v", kind="answer.typed", category="answer", params={"expect": {"anything": 1}})
    assert bind(use)[1].expect == {"anything": 1}
    with pytest.raises(SpecError) as empty:
        bind(use.model_copy(update={"params": {"expect": {}}}))
    assert empty.value.field == "verifiers.v.params.expect"
    with pytest.raises(SpecError) as undeclared:
        bind(use, answer=bmi.public.task.answer)
    assert "expect.anything: the task's answer declares no such field" in undeclared.value.message


def test_an_expected_concept_its_terminology_does_not_know_is_refused_and_every_bundled_one_resolves(tmp_path):
    """A typo in an expected name would make a check no answer can pass: the package's check names it. Every
    bundled package passes that check."""
    for manifest in find_packages([str(ROOT / "task_packages")]):
        check_halves(load_package(manifest))
    copy_packages(tmp_path, "superclue", ["SC-IR-CURRENT-MEDS"])
    hidden = tmp_path / "verifiers" / "superclue" / "SC-IR-CURRENT-MEDS.yaml"
    data = yaml.safe_load(hidden.read_text(encoding="utf-8"))
    use = next(v for v in data["verifiers"] if v["kind"] == "answer.typed")
    use["params"]["expect"]["medications"].append("氨氯地平片剂XR")  # a known drug's name inside a longer one: known
    hidden.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    check_package(tmp_path / "task_packages" / "superclue" / "SC-IR-CURRENT-MEDS")
    use["params"]["expect"]["medications"].append("xyzzy")
    hidden.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(SpecError) as info:
        check_package(tmp_path / "task_packages" / "superclue" / "SC-IR-CURRENT-MEDS")
    assert "expect.medications: 'xyzzy' is not in the drugs terminology" in info.value.message


def test_a_schema_field_without_words_to_say_carries_no_empty_description():
    schema = answer_schema({"refs": AnswerField(type="list", items=AnswerField(type="text"), description="cited")})
    assert schema["properties"]["refs"]["description"] == "cited"
    assert "description" not in schema["properties"]["refs"]["items"]  # a prompt's tokens are not spent on ""
