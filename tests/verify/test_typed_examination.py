"""The 检查申请 packages' typed answers (SC-EXM-*, synthetic data only): examinations compared by the order table
in either language, lists as sets, the dates of what is on file in any written form (the date-other-format mutants
reach the items of a list of dates); each mechanism shown accepting a valid alternative and, broken, failing."""

from __future__ import annotations

import asyncio

import pytest

from forge_kernel.engine import Images
from forge_kernel.engine.selftest import mutation_test
from forge_kernel.spec import AnswerField, load_package
from forge_kernel.verify.kinds import _typed
from forge_kernel.verify.kinds._typed import mismatch
from forge_kernel.verify.mutants import replaced, value_at
from tests.helpers import ROOT
from tests.verify.test_typed_retrieval import iso_only

SUPERCLUE = ROOT / "task_packages" / "superclue"
EXM = sorted(p.name for p in SUPERCLUE.glob("SC-EXM-*"))
ON_FILE = ["SC-EXM-ANNUAL-CHECKUP", "SC-EXM-CORONARY-CTA", "SC-EXM-HEAD-CT", "SC-EXM-PREOP"]
"""The packages where a recent result or request on file makes a request unnecessary (their output is dated)."""
ORDERS = AnswerField(type="list", items=AnswerField(type="concept", terms="orders"))
DATES = AnswerField(type="list", items=AnswerField(type="date"))


@pytest.mark.parametrize(
    ("want", "given"),
    [
        (["血常规", "凝血功能", "胃镜"], ["CBC", "coagulation panel", "gastroscopy"]),
        (["尿白蛋白/肌酐比值", "踝肱指数", "神经传导速度", "眼底照相"], ["UACR", "ABI", "NCS", "fundus photography"]),
        (["甲胎蛋白", "异常凝血酶原", "糖类抗原19-9"], ["AFP", "PIVKA-II", "CA 19-9"]),
        (["甲状旁腺激素", "血钙", "颈部超声", "感染四项"], ["PTH", "serum calcium", "颈部彩超", "术前四项"]),
    ],
)
def test_an_examination_named_in_the_other_language_or_abbreviated_is_the_same_order(want, given):
    assert mismatch(ORDERS, want, given, 0) is None


@pytest.mark.parametrize(
    ("want", "given", "problem"),
    [
        (["感染四项", "胸片"], ["感染四项"], "missing 胸片"),
        (["头颅CT"], ["head CT", "头颅MRI"], "not expected: 头颅MRI"),
        (["心电图"], ["动态心电图"], "missing 心电图"),  # Holter is another examination
        ([], ["腹部超声"], "not expected: 腹部超声"),
    ],
)
def test_a_missing_extra_or_other_examination_fails_named(want, given, problem):
    assert mismatch(ORDERS, want, given, 0) == problem


def test_without_the_order_table_an_examination_named_in_english_fails(break_order_table):
    break_order_table()  # the mechanism broken: no order vocabulary
    assert mismatch(ORDERS, ["血常规"], ["CBC"], 0) == "missing 血常规"


def test_the_dates_on_file_compare_as_a_set_in_any_written_form():
    assert (
        mismatch(DATES, ["2026-11-20", "2026-11-29"], ["2026年11月29日", "20 November 2026", "2026-11-20"], 0) is None
    )
    assert mismatch(DATES, ["2026-11-20", "2026-11-29"], ["2026-11-20"], 0) == "missing 2026-11-29"


def test_every_examination_package_declares_the_same_answer_whatever_is_on_file():
    answers = {t: load_package(SUPERCLUE / t).public.task.answer for t in EXM}
    assert len({repr(a) for a in answers.values()}) == 1
    assert list(answers[EXM[0]]) == ["requested", "on_file", "on_file_dates", "withheld", "decision"]


def test_a_list_item_is_read_and_replaced_by_its_index():
    output = {"on_file_dates": ["2026-11-20", "2026-11-29"], "decision": "requested"}
    assert value_at(output, ("on_file_dates", "1")) == "2026-11-29"
    assert value_at(output, ("on_file_dates", "2")) is None
    changed = replaced(output, ("on_file_dates", "1"), "2026年11月29日")
    assert changed == {"on_file_dates": ["2026-11-20", "2026年11月29日"], "decision": "requested"}
    assert output["on_file_dates"][1] == "2026-11-29"  # a copy


def dated_mutants(task_id: str):
    report = asyncio.run(mutation_test(load_package(SUPERCLUE / task_id), Images()))
    return report, [r for r in report.results if r.mutant.operator == "date-other-format"]


@pytest.mark.parametrize("task_id", ON_FILE)
def test_each_date_on_file_written_otherwise_passes_as_it_must(task_id):
    report, dated = dated_mutants(task_id)
    gold = load_package(SUPERCLUE / task_id).hidden.gold.output["on_file_dates"]
    assert [r.mutant.target for r in dated] == [f"output.on_file_dates.{i}" for i in range(len(gold))]
    assert all(r.status == "passed as it must" for r in dated) and report.ok


def test_a_grader_that_reads_only_iso_dates_rejects_the_dates_on_file(monkeypatch):
    monkeypatch.setattr(_typed, "read_date", iso_only)
    report, dated = dated_mutants("SC-EXM-PREOP")
    assert [r.status for r in dated] == ["must pass, rejected"] * 2 and not report.ok
    assert all("typed" in r.detail for r in dated)
