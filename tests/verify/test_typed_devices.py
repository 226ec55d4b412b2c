"""The 设备监测 packages' typed answers (SC-DEV-*, synthetic data only): the item by the nursing rules in either
language, the dwell and the time since the last care converted to hours (from days, 天 too), the date of the last
care in any written form, the rule's signs as a closed list, the due decision and the rule's action; each mechanism
shown accepting a valid alternative and, broken, failing."""

from __future__ import annotations

import asyncio

import pytest

from forge_kernel.engine import Images
from forge_kernel.engine.selftest import mutation_test, selftest_package
from forge_kernel.spec import AnswerField, answer_schema, load_package
from forge_kernel.tools import table
from forge_kernel.verify import quantities
from forge_kernel.verify.kinds import _typed
from forge_kernel.verify.kinds._typed import mismatch
from tests.helpers import ROOT
from tests.suites.test_suite_devices import BASELINE, CANDIDATE, NOT_DUE, decide, device, notes, trial
from tests.verify.test_typed_answer import typed
from tests.verify.test_typed_examination import dated_mutants
from tests.verify.test_typed_retrieval import iso_only

SUPERCLUE = ROOT / "task_packages" / "superclue"
DEV = sorted(p.name for p in SUPERCLUE.glob("SC-DEV-*"))
CARED = ["SC-DEV-CHEST-DRAIN", "SC-DEV-WOUND-DRESSING"]
"""The packages whose rule counts from the last recorded care (their output is dated)."""
ITEM = AnswerField(type="concept", terms="nursing_items")
HOURS = AnswerField(type="quantity", unit="h")
SHARED = ["item", "due", "action", "findings"]
"""The fields every device package declares; the rule's clock or score adds its own."""


def rule_of(item: str) -> dict:
    return next(r for r in table("device_rules") if r["type"] == item)


def rule_fields(rule: dict) -> list[str]:
    """The fields a rule's risk score or clock adds to the shared ones."""
    if "score" in rule:
        return ["score"]
    return ["since_care", "last_care"] if rule["clock"] == "last_care" else ["dwell"]


def by_type_only(name: str) -> str | None:
    """The nursing rules read without their aliases: the name mechanism broken."""
    return name if any(r["type"] == name for r in table("device_rules")) else None


def package(task_id: str):
    return load_package(SUPERCLUE / task_id)


def with_output(task_id: str, **fields):
    """The package and the gold output with ``fields`` changed."""
    found = package(task_id)
    return found, {**found.hidden.gold.output, **fields}


# --- names and units -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("want", "given"),
    [
        ("留置导尿管", "urinary catheter"),
        ("留置导尿管", "Foley 导尿管"),
        ("鼻胃管（硅胶）", "鼻胃管(硅胶)"),
        ("鼻胃管（硅胶）", "nasogastric tube (silicone)"),
        ("中心静脉导管", "CVC"),
        ("胸腔闭式引流管", "chest tube"),
        ("静脉血栓栓塞预防", "DVT prophylaxis"),
    ],
)
def test_an_item_named_in_english_by_an_alias_or_in_other_brackets_is_the_same_item(want, given):
    assert mismatch(ITEM, want, given, 0) is None


@pytest.mark.parametrize(
    ("want", "given"),
    [
        ("鼻胃管（硅胶）", "鼻胃管（聚氯乙烯）"),  # the tube's material sets its interval
        ("鼻胃管（硅胶）", "nasogastric tube"),  # which tube is not said
        ("留置导尿管", "留置导尿管拔除"),  # the order, not the device
    ],
)
def test_another_item_or_a_name_that_is_not_an_item_fails_named(want, given):
    assert mismatch(ITEM, want, given, 0) == f"{given!r} is not {want!r}"


def test_without_the_nursing_rules_an_item_named_in_english_fails(monkeypatch):
    monkeypatch.setattr(_typed, "nursing_item_of", by_type_only)
    assert mismatch(ITEM, "留置导尿管", "留置导尿管", 0) is None
    assert mismatch(ITEM, "留置导尿管", "urinary catheter", 0) == "'urinary catheter' is not '留置导尿管'"


@pytest.mark.parametrize(
    "given",
    [
        {"value": 49, "unit": "h"},
        {"value": 49, "unit": "小时"},
        {"value": 2, "unit": "天"},
        {"value": 2, "unit": "days"},
        {"value": 2, "unit": "d"},
        {"value": 2940, "unit": "min"},
        "2 days",
    ],
)
def test_a_dwell_in_days_or_minutes_in_either_language_is_converted_to_hours(given):
    assert mismatch(HOURS, 49, given, 4) is None


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        ({"value": 3, "unit": "天"}, "72 h is not 49 ± 4"),
        ({"value": 2, "unit": "h"}, "2 h is not 49 ± 4"),  # the days written as hours
        (2, "2 is not a quantity with its unit"),
        ({"value": 2, "unit": "mL"}, "2 mL is not in a unit of h"),
    ],
)
def test_a_dwell_off_by_a_day_in_the_wrong_unit_or_without_one_fails_named(given, problem):
    assert mismatch(HOURS, 49, given, 4) == problem


def test_without_the_chinese_time_words_a_dwell_in_天_fails(monkeypatch):
    monkeypatch.setattr(quantities, "TIME_WORDS", {})  # the mechanism broken: 天 is no unit
    assert mismatch(HOURS, 49, {"value": 2, "unit": "days"}, 4) is None
    assert mismatch(HOURS, 49, {"value": 2, "unit": "天"}, 4) == "2 天 is not in a unit of h"


# --- the packages' checks ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("task_id", "field", "value", "problem"),
    [
        ("SC-DEV-NG-TUBE", "due", True, "True is not false"),
        ("SC-DEV-URINARY-CATHETER", "action", "replace", "'replace' is not 'remove'"),
        ("SC-DEV-CVC", "findings", ["寒战"], "missing 红肿, 脓性分泌物"),
        ("SC-DEV-PIV", "findings", ["静脉炎"], "not expected: 静脉炎"),
        ("SC-DEV-CHEST-DRAIN", "last_care", "2026-11-27", "2026-11-27 is not 2026-11-28 ± 0 day(s)"),
        ("SC-DEV-DVT-PROPHYLAXIS", "score", 5, "5 is not 7 ± 0"),
        ("SC-DEV-TRACHEOSTOMY", "dwell", {"value": 16, "unit": "h"}, "16 h is not 383 ± 6"),
    ],
)
def test_a_wrong_field_fails_named(task_id, field, value, problem):
    found, output = with_output(task_id, **{field: value})
    outcome = typed(found, output)
    assert not outcome.passed and outcome.reason == f"output.{field}: {problem}"


def test_the_wound_needs_its_exudate_named_and_allows_the_soaked_dressing_beside_it():
    found, output = with_output("SC-DEV-WOUND-DRESSING", findings=["渗液", "敷料潮湿"])
    assert typed(found, output).passed
    outcome = typed(found, {**output, "findings": ["敷料潮湿"]})
    assert outcome.reason == "output.findings: missing 渗液"


def test_every_device_package_declares_the_shared_answer_and_the_fields_of_its_rule():
    shapes = set()
    for task_id in DEV:
        found = package(task_id)
        answer, output = found.public.task.answer, found.hidden.gold.output
        rule = rule_of(output["item"])
        assert list(answer) == SHARED + rule_fields(rule) and list(output) == list(answer), task_id
        assert answer["action"].options == ["replace", "remove", "maintain", "request"]
        signs = answer_schema(answer)["properties"]["findings"]["items"]["enum"]
        assert signs == list(dict.fromkeys(rule["early_signs"] + rule["keep_if"] + rule["escalate_signs"]))
        expected = next(v for v in found.hidden.verifiers if v.kind == "answer.typed").params["expect"]
        assert list(expected) == list(answer), task_id  # every field is checked
        shapes.add(repr({name: answer[name] for name in SHARED[:3]}))
    assert len(shapes) == 1


@pytest.mark.parametrize("task_id", DEV)
def test_the_reference_plan_answers_in_exactly_the_declared_fields(task_id):
    """The candidate's output passes the typed check; the baseline, which acts whatever the records say, is wrong
    exactly on ``due`` where the action is not due."""
    found = package(task_id)
    candidate, baseline = trial(SUPERCLUE / task_id, CANDIDATE), trial(SUPERCLUE / task_id, BASELINE)
    assert list(candidate.result.output) == list(found.public.task.answer)
    typed_of = {
        name: next(v for v in r.grading.verdicts if v.verifier_id == "typed")
        for name, r in (("candidate", candidate), ("baseline", baseline))
    }
    assert typed_of["candidate"].passed, typed_of["candidate"].reason
    if task_id in NOT_DUE:
        assert typed_of["baseline"].reason == "output.due: True is not false"
    else:
        assert typed_of["baseline"].passed


def test_the_plan_counts_the_care_from_insertion_when_none_is_recorded_and_leaves_its_date_out():
    drain = "胸腔闭式引流管"
    result, _ = decide([*device("d1", drain, "2026-11-26T09:00:00+08:00"), *notes("水柱波动好。")], {"device": drain})
    assert result.output == {
        "item": drain,
        "due": True,
        "action": "maintain",
        "findings": [],
        "since_care": {"value": 96.0, "unit": "h"},
        "last_care": None,
    }


# --- selftest: counterexamples, valid variants, mutants ------------------------------------------------------------


@pytest.mark.parametrize("task_id", DEV)
def test_a_wrong_due_or_action_fails_typed_and_the_item_in_english_passes(task_id):
    found = package(task_id)
    cases = {c.name: c.must_fail for c in found.hidden.counterexamples}
    assert cases["due-wrong"] == cases["action-wrong"] == ["typed"]
    results = {r.case: r for r in asyncio.run(selftest_package(found, Images()))}
    assert all(results[name].ok for name in ("due-wrong", "action-wrong", "item-in-english")), results


@pytest.mark.parametrize(
    ("broken", "variant"),
    [
        ((_typed, "nursing_item_of", by_type_only), "item-in-english"),
        ((quantities, "TIME_WORDS", {}), "dwell-in-days"),
    ],
)
def test_with_a_mechanism_broken_its_valid_variant_fails_typed(monkeypatch, broken, variant):
    monkeypatch.setattr(*broken)
    results = {r.case: r for r in asyncio.run(selftest_package(package("SC-DEV-URINARY-CATHETER"), Images()))}
    assert not results[variant].ok and results[variant].detail == "fails typed"
    assert results["gold"].ok


@pytest.mark.parametrize("task_id", DEV)
def test_every_mutant_of_a_device_package_is_rejected_or_passes_as_it_must(task_id):
    report = asyncio.run(mutation_test(package(task_id), Images()))
    assert report.ok, [(r.mutant.operator, r.mutant.target, r.status) for r in report.results]
    text_only = [r for r in report.results if r.mutant.operator == "text-only"]
    assert [r.status for r in text_only] == ["rejected"] and "typed" in text_only[0].detail


@pytest.mark.parametrize("task_id", CARED)
def test_the_date_of_the_last_care_written_otherwise_passes_as_it_must(task_id):
    report, dated = dated_mutants(task_id)
    assert [(r.mutant.target, r.status) for r in dated] == [("output.last_care", "passed as it must")] and report.ok


def test_a_grader_that_reads_only_iso_dates_rejects_the_date_of_the_last_care(monkeypatch):
    monkeypatch.setattr(_typed, "read_date", iso_only)
    report, dated = dated_mutants("SC-DEV-CHEST-DRAIN")
    assert [r.status for r in dated] == ["must pass, rejected"] and not report.ok
    assert "typed" in dated[0].detail
