"""The 鉴别诊断 packages' typed answers (SC-DDX-*, synthetic data only): the leading diagnosis compared by the
diagnosis table and the examinations by the order table, in either language or abbreviated; a wrong, missing or
extra item named; each mechanism shown accepting a valid alternative and, broken, failing."""

from __future__ import annotations

import asyncio

import pytest

from forge_kernel.engine import Images
from forge_kernel.engine.selftest import mutation_test, selftest_package
from forge_kernel.spec import AnswerField, load_package
from forge_kernel.verify.kinds import _typed
from forge_kernel.verify.kinds._typed import CONTAINS, known_key, mismatch
from tests.helpers import ROOT

SUPERCLUE = ROOT / "task_packages" / "superclue"
DDX = sorted(p.name for p in SUPERCLUE.glob("SC-DDX-*"))
LEADING = AnswerField(type="concept", terms="diagnoses", optional=True)
ORDERS = AnswerField(type="list", items=AnswerField(type="concept", terms="orders"))


def typed_expectation(task_id: str) -> dict:
    """The ``expect`` of a package's ``typed`` check."""
    [use] = [v for v in load_package(SUPERCLUE / task_id).hidden.verifiers if v.kind == "answer.typed"]
    return use.params["expect"]


@pytest.mark.parametrize(
    ("want", "given"),
    [
        ("急性冠脉综合征", "ACS"),
        ("上消化道出血", "UGIB"),
        ("上消化道出血", "duodenal ulcer bleeding"),  # the bleed named by its source
        ("异位妊娠", "宫外孕"),
        ("蛛网膜下腔出血", "subarachnoid hemorrhage"),
        ("急性缺血性脑卒中", "AIS"),
        ("后循环缺血性卒中", "posterior circulation infarction"),
        ("肺结核", "tuberculosis"),
        (["急性心力衰竭", "心力衰竭"], "心衰"),  # an accepted alternative, another entry of the table
    ],
)
def test_a_diagnosis_named_in_the_other_language_or_abbreviated_is_the_same_diagnosis(want, given):
    assert mismatch(LEADING, want, given, 0) is None


@pytest.mark.parametrize(
    ("want", "given"),
    [
        (["血hCG", "经阴道超声", "血常规"], ["beta-hCG", "TVUS", "CBC"]),
        (["心电图", "心肌酶"], ["ECG", "cardiac enzymes"]),
        (["胸部CT", "痰抗酸杆菌涂片", "T-SPOT.TB"], ["chest CT", "sputum AFB smear", "T-SPOT"]),
        (["尿常规", "24小时尿蛋白定量", "血清白蛋白"], ["urinalysis", "24h尿蛋白", "serum albumin"]),
        (["头颅MRI", "头颈部CTA"], ["brain MRI", "head and neck CTA"]),
    ],
)
def test_an_examination_named_in_the_other_language_or_abbreviated_is_the_same_order(want, given):
    assert mismatch(ORDERS, want, given, 0) is None


@pytest.mark.parametrize(
    ("want", "given", "problem"),
    [
        ("急性冠脉综合征", "主动脉夹层", "'主动脉夹层' is not '急性冠脉综合征'"),
        ("痛风", "hyperuricaemia", "'hyperuricaemia' is not '痛风'"),  # the risk factor is not the diagnosis
        ("急性心力衰竭", "心衰", "'心衰' is not '急性心力衰竭'"),  # only where the package accepts it
        ("上消化道出血", None, "missing"),
    ],
)
def test_a_wrong_or_missing_leading_diagnosis_fails_named(want, given, problem):
    assert mismatch(LEADING, want, given, 0) == problem


@pytest.mark.parametrize(
    ("want", "given", "problem"),
    [
        (["头颅CT", "头颅CTA"], ["head CT"], "missing 头颅CTA"),
        (["头颅CTA"], ["头颈部CTA"], "missing 头颅CTA"),  # head and neck CTA is another examination
        (["血尿酸", "关节超声"], ["uric acid", "joint ultrasound", "类风湿因子"], "not expected: 类风湿因子"),
        ([], ["急诊胃镜"], "not expected: 急诊胃镜"),
        ({CONTAINS: ["心电图", "心肌酶"]}, ["ECG"], "missing 心肌酶"),
    ],
)
def test_a_missing_extra_or_other_examination_fails_named(want, given, problem):
    assert mismatch(ORDERS, want, given, 0) == problem


def test_at_least_the_expected_examinations_where_more_are_allowed():
    """SC-DDX-CHEST-PAIN: troponin may be requested beside the ECG and cardiac enzymes (the write audit allows it)."""
    want = typed_expectation("SC-DDX-CHEST-PAIN")["requested"]
    assert mismatch(ORDERS, want, ["ECG", "心肌酶", "troponin"], 0) is None


def test_without_the_diagnosis_table_a_diagnosis_abbreviated_fails(monkeypatch):
    monkeypatch.setattr(_typed, "diagnosis_vocabulary", lambda: {})  # the mechanism broken: no diagnosis vocabulary
    assert mismatch(LEADING, "急性冠脉综合征", "ACS", 0) == "'ACS' is not '急性冠脉综合征'"
    assert mismatch(LEADING, "急性冠脉综合征", "急性冠脉综合征", 0) is None  # the same name still compares


def test_without_the_diagnosis_table_the_english_variant_of_a_package_is_rejected(monkeypatch):
    package = load_package(SUPERCLUE / "SC-DDX-CHEST-PAIN")
    variant = "named-in-english"
    before = {c.case: c for c in asyncio.run(selftest_package(package, Images()))}
    assert before[variant].ok
    monkeypatch.setattr(_typed, "diagnosis_vocabulary", lambda: {})
    after = {c.case: c for c in asyncio.run(selftest_package(package, Images()))}
    assert not after[variant].ok and after[variant].detail == "fails typed"


def test_every_differential_package_declares_the_same_answer():
    answers = {t: load_package(SUPERCLUE / t).public.task.answer for t in DDX}
    assert len(DDX) == 10 and len({repr(a) for a in answers.values()}) == 1
    answer = answers[DDX[0]]
    assert list(answer) == ["leading", "requested", "decision"] and answer["leading"].optional
    assert answer["decision"].options == ["requested", "escalated", "undetermined"]


@pytest.mark.parametrize("task_id", DDX)
def test_every_accepted_name_resolves_in_its_table(task_id):
    """Not only one name of each expectation (what the package's check asks): every diagnosis accepted and every
    examination expected is a known term, so none is compared by its bare text."""
    expect = typed_expectation(task_id)
    leading = expect["leading"] if isinstance(expect["leading"], list) else [expect["leading"]]
    requested = expect["requested"][CONTAINS] if isinstance(expect["requested"], dict) else expect["requested"]
    assert all(known_key("diagnoses", name) for name in leading)
    assert all(known_key("orders", name) for name in requested)


@pytest.mark.parametrize("task_id", DDX)
def test_the_mutants_are_killed_and_the_answer_left_out_fails_the_typed_check(task_id):
    report = asyncio.run(mutation_test(load_package(SUPERCLUE / task_id), Images()))
    assert report.ok
    [text_only] = [r for r in report.results if r.mutant.operator == "text-only"]
    assert text_only.status == "rejected" and "typed" in text_only.detail.removeprefix("fails ").split(", ")


def test_a_diagnosis_with_its_subtype_in_brackets_is_that_diagnosis_but_an_examination_is_not():
    leading = AnswerField(type="concept", terms="diagnoses")
    assert mismatch(leading, "急性冠脉综合征", "ACS (NSTEMI)", 0) is None
    assert mismatch(leading, "急性冠脉综合征", "急性冠脉综合征（非ST段抬高型）", 0) is None
    orders = AnswerField(type="concept", terms="orders")
    assert mismatch(orders, "头颅CT", "头颅CT（增强）", 0) is not None  # a contrast study is another examination


def test_every_accepted_name_of_an_expectation_must_be_known():
    leading = AnswerField(type="concept", terms="diagnoses")
    assert _typed.expectation_problem(leading, ["急性冠脉综合征", "ACS"]) is None
    problem = _typed.expectation_problem(leading, ["急性冠脉综合征", "心梗样胸痛综合征"])
    assert problem == "'心梗样胸痛综合征' is not in the diagnoses terminology: add it to its table"
