"""The 临床操作 packages' typed answers (SC-OPS-*, synthetic data only): orders (examinations, a vaccination, a
referral) compared by the order table in either language, vital signs by the lab table's names and their
measurements in any unit of their dimension, lists as sets; each mechanism shown accepting a valid alternative and,
broken, failing; the reference plan answering in exactly the declared fields."""

from __future__ import annotations

import asyncio

import pytest
from click.testing import CliRunner

from forge_kernel.agents import AGENTS
from forge_kernel.cli import main
from forge_kernel.ehr import EHRImage
from forge_kernel.engine import Images
from forge_kernel.engine.selftest import selftest_package
from forge_kernel.engine.trial import run_trial
from forge_kernel.spec import AnswerField, Package, load_package
from forge_kernel.verify.kinds import _typed
from forge_kernel.verify.kinds._typed import mismatch
from tests.helpers import ROOT

SUPERCLUE = ROOT / "task_packages" / "superclue"
OPS = sorted(p.name for p in SUPERCLUE.glob("SC-OPS-*"))
VITALS = "SC-OPS-ADMISSION-VITALS"
COMMON = ["requested", "on_file", "on_file_dates", "recorded", "decision"]
"""The fields every 临床操作 package declares, in the order it declares them."""
MEASURED = ["temperature", "heart_rate", "respiratory_rate", "systolic", "diastolic", "spo2"]
"""The measurements SC-OPS-ADMISSION-VITALS declares besides, one quantity per vital sign it records."""
ORDERS = AnswerField(type="list", items=AnswerField(type="concept", terms="orders"))
SIGNS = AnswerField(type="list", items=AnswerField(type="concept", terms="labs"))


def measured(field: str) -> AnswerField:
    """The declared type of one measurement of SC-OPS-ADMISSION-VITALS."""
    return load_package(SUPERCLUE / VITALS).public.task.answer[field]


@pytest.mark.parametrize(
    ("want", "given"),
    [
        (["24小时动态血压监测"], ["ABPM"]),
        (["75g口服葡萄糖耐量试验", "胰岛素释放试验"], ["75 g OGTT", "insulin release test"]),
        (["乙肝五项", "乙肝表面抗原"], ["hepatitis B panel", "HBsAg"]),
        (
            ["梅毒血清学检测", "HIV抗体", "NT超声", "ABO及Rh血型"],
            ["syphilis serology", "anti-HIV", "NT scan", "blood group"],
        ),
        (["流感疫苗"], ["flu vaccine"]),
        (["高血压专科门诊"], ["hypertension clinic"]),
        (["血脂四项", "空腹血糖", "腹部超声"], ["lipid profile", "FPG", "abdominal US"]),
    ],
)
def test_an_order_named_in_english_or_abbreviated_is_the_same_order(want, given):
    assert mismatch(ORDERS, want, given, 0) is None


def test_a_vital_sign_named_in_english_or_abbreviated_is_the_same_sign():
    want = ["体温", "心率", "呼吸频率", "收缩压", "舒张压", "血氧饱和度"]
    assert mismatch(SIGNS, want, ["temperature", "HR", "RR", "SBP", "diastolic BP", "SpO2"], 0) is None


@pytest.mark.parametrize(
    ("field", "want", "tol", "given"),
    [
        ("temperature", 37.8, 0.05, {"value": 100.0, "unit": "°F"}),
        ("temperature", 37.8, 0.05, {"value": 37.8, "unit": "℃"}),
        ("systolic", 128, 0.5, {"value": 17.1, "unit": "kPa"}),
        ("diastolic", 82, 0.5, {"value": 10.9, "unit": "kPa"}),
        ("heart_rate", 92, 0, {"value": 92, "unit": "次/分"}),
        ("heart_rate", 92, 0, "92 bpm"),
        ("spo2", 97, 0, {"value": 0.97, "unit": "1"}),
    ],
)
def test_a_measurement_in_another_unit_is_converted(field, want, tol, given):
    assert mismatch(measured(field), want, given, tol) is None


@pytest.mark.parametrize(
    ("spec", "want", "given", "problem"),
    [
        (ORDERS, ["血常规", "心电图", "胸片"], ["CBC", "ECG"], "missing 胸片"),
        (ORDERS, ["高血压专科门诊"], ["hypertension clinic", "心内科门诊"], "not expected: 心内科门诊"),
        (ORDERS, ["乙肝五项"], ["HBsAg"], "missing 乙肝五项"),  # the surface antigen alone is not the panel
        (ORDERS, [], ["flu shot"], "not expected: flu shot"),
        (SIGNS, ["收缩压", "舒张压"], ["SBP"], "missing 舒张压"),
    ],
)
def test_a_missing_extra_or_other_item_fails_named(spec, want, given, problem):
    assert mismatch(spec, want, given, 0) == problem


@pytest.mark.parametrize(
    ("field", "want", "tol", "given", "problem"),
    [
        ("temperature", 37.8, 0.05, {"value": 37.8, "unit": "°F"}, "3.22222 Cel is not 37.8 ± 0.05"),
        ("systolic", 128, 0.5, {"value": 82, "unit": "mmHg"}, "82 mmHg is not 128 ± 0.5"),
        ("spo2", 97, 0, {"value": 97, "unit": "mmHg"}, "97 mmHg is not in a unit of %"),
        ("heart_rate", 92, 0, 92, "92 is not a quantity with its unit"),
    ],
)
def test_a_wrong_measurement_fails_named(field, want, tol, given, problem):
    assert mismatch(measured(field), want, given, tol) == problem


def test_without_the_order_table_an_order_named_in_english_fails(break_order_table):
    break_order_table()  # the mechanism broken: no order vocabulary
    assert mismatch(ORDERS, ["24小时动态血压监测"], ["ABPM"], 0) == "missing 24小时动态血压监测"


def test_without_the_lab_table_a_vital_sign_named_in_english_fails(monkeypatch):
    monkeypatch.setattr(_typed, "first_names", lambda table: {})
    assert mismatch(SIGNS, ["血氧饱和度"], ["SpO2"], 0) == "missing 血氧饱和度"


def test_without_unit_conversion_a_pressure_in_kpa_fails(monkeypatch):
    monkeypatch.setattr(_typed, "in_unit", lambda amount, unit: None)
    assert mismatch(measured("systolic"), 128, {"value": 17.1, "unit": "kPa"}, 0.5) == (
        "17.1 kPa is not in a unit of mmHg"
    )


def selftest(package: Package) -> dict[str, tuple[bool, str]]:
    """Each case of a package's selftest by name: passed as it must, and why."""
    return {r.case: (r.ok, r.detail) for r in asyncio.run(selftest_package(package, Images()))}


def test_with_the_order_table_broken_the_english_names_variant_fails_typed(break_order_table):
    package = load_package(SUPERCLUE / "SC-OPS-PRENATAL")  # loaded while its expected orders are known
    assert selftest(package)["named-in-english"] == (True, "passes every hard verifier")
    break_order_table()
    ok, detail = selftest(package)["named-in-english"]
    assert not ok and "typed" in detail


def test_with_unit_conversion_broken_the_other_units_variant_fails_typed(monkeypatch):
    package = load_package(SUPERCLUE / VITALS)
    assert selftest(package)["other-units"] == (True, "passes every hard verifier")
    monkeypatch.setattr(_typed, "in_unit", lambda amount, unit: None)
    assert selftest(package)["other-units"] == (False, "fails typed")


def test_every_operations_package_declares_the_same_answer_and_grades_every_field():
    packages = {t: load_package(SUPERCLUE / t) for t in OPS}
    assert len(packages) == 10
    declared = {t: p.public.task.answer for t, p in packages.items()}
    assert len({repr({f: a[f] for f in COMMON}) for a in declared.values()}) == 1
    assert {t: list(a) for t, a in declared.items() if list(a) != COMMON} == {VITALS: COMMON + MEASURED}
    assert declared[VITALS]["decision"].options == ["requested", "recorded", "not_needed"]
    for task_id, package in packages.items():
        [typed] = [v for v in package.hidden.verifiers if v.kind == "answer.typed"]
        assert list(typed.params["expect"]) == list(declared[task_id]), task_id
        assert set(package.hidden.gold.output) == set(declared[task_id]), task_id
        assert not [v for v in package.hidden.verifiers if v.kind in ("answer.text", "answer.number")], task_id


@pytest.mark.parametrize("task_id", OPS)
def test_the_reference_plan_answers_in_exactly_the_declared_fields(task_id):
    package = load_package(SUPERCLUE / task_id)
    image = EHRImage(package.resources, package.public.environment.now)
    record = asyncio.run(run_trial(package, image, AGENTS["candidate-v2"](), 0, 1))
    assert list(record.result.output) == list(package.public.task.answer)
    assert record.result.output == package.hidden.gold.output
    assert all(v.passed for v in record.grading.verdicts), task_id


def test_the_selftest_with_mutants_is_clean_for_every_operations_package():
    result = CliRunner().invoke(main, ["selftest", "--mutants", *(str(SUPERCLUE / t) for t in OPS)])
    assert result.exit_code == 0, result.output
    assert "10/10 package(s) tell the gold solution and valid variants from every counterexample" in result.output
    assert "  unit-swap: 3/3 rejected, 0 declared valid, 0 survived" in result.output
    assert "  date-other-format: 4/4 passed as they must (valid by construction)" in result.output
    assert "survived" not in result.output.replace(", 0 survived", "")
