"""The 信息检索 packages' typed answers (SC-IR-*, synthetic data only): concepts compared by the drug, lab and
diagnosis tables, dates in any written form, and the date-other-format mutants, which are valid by construction and
must pass; each mechanism shown accepting a valid alternative and, broken, failing."""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from datetime import date

import pytest
from click.testing import CliRunner

from forge_kernel.cli import main
from forge_kernel.engine import Images
from forge_kernel.engine.selftest import mutation_test, operators_line, totals_line
from forge_kernel.spec import AnswerField, load_package
from forge_kernel.verify.kinds import _typed
from forge_kernel.verify.kinds._typed import mismatch
from forge_kernel.verify.mutants import value_at, written_otherwise
from tests.helpers import ROOT

SUPERCLUE = ROOT / "task_packages" / "superclue"
DATED = ["SC-IR-ADMISSION-DATES", "SC-IR-ASPIRIN-STATUS", "SC-IR-DEMOGRAPHICS", "SC-IR-LATEST-DIAGNOSIS"]
"""The converted packages whose typed answer holds a date or an interval."""
ISO = re.compile(r"\d{4}-\d{2}-\d{2}")


def concepts(terms: str) -> AnswerField:
    return AnswerField(type="list", items=AnswerField(type="concept", terms=terms))


@pytest.mark.parametrize(
    ("terms", "want", "given"),
    [
        ("drugs", ["阿莫西林", "头孢克洛", "布洛芬"], ["amoxicillin", "cefaclor", "ibuprofen"]),  # class members' names
        ("drugs", ["阿卡波糖", "二甲双胍"], ["acarbose", "metformin"]),
        ("labs", ["白细胞", "C反应蛋白", "血钾", "空腹血糖"], ["WBC", "CRP", "potassium", "fasting glucose"]),
        ("diagnoses", ["高血压", "2 型糖尿病"], ["essential hypertension", "type 2 diabetes"]),
    ],
)
def test_a_concept_named_in_the_other_language_is_the_same_concept(terms, want, given):
    assert mismatch(concepts(terms), want, given, 0) is None


@pytest.mark.parametrize(
    ("terms", "want", "given", "problem"),
    [
        ("drugs", ["阿莫西林", "头孢克洛"], ["amoxicillin"], "missing 头孢克洛"),
        ("drugs", ["阿莫西林"], ["amoxicillin", "sulfamethoxazole"], "not expected: sulfamethoxazole"),
        ("labs", ["空腹血糖"], ["血糖"], "missing 空腹血糖"),  # another test, not another name
        ("labs", ["中性粒细胞百分比"], ["CBC"], "missing 中性粒细胞百分比"),
    ],
)
def test_a_missing_extra_or_other_concept_fails_named(terms, want, given, problem):
    assert mismatch(concepts(terms), want, given, 0) == problem


def test_without_the_lab_table_a_lab_named_in_english_fails(monkeypatch):
    monkeypatch.setattr(_typed, "first_names", lambda table: {})  # the mechanism broken: no lab vocabulary
    assert mismatch(concepts("labs"), ["白细胞"], ["WBC"], 0) == "missing 白细胞"


def test_without_the_class_members_a_drug_named_in_english_fails(monkeypatch):
    monkeypatch.setattr(_typed, "drug_vocabulary", lambda: {})  # the mechanism broken: drugs.yaml aliases only
    assert mismatch(concepts("drugs"), ["头孢克洛"], ["cefaclor"], 0) == "missing 头孢克洛"


@pytest.mark.parametrize(("zh", "written"), [(True, "2026年11月30日"), (False, "30 November 2026")])
def test_a_date_is_written_otherwise_in_the_tasks_language(zh, written):
    assert written_otherwise(date(2026, 11, 30), zh) == written


@pytest.mark.parametrize("task_id", DATED)
def test_every_date_of_the_typed_answer_written_otherwise_passes_as_it_must(task_id):
    package = load_package(SUPERCLUE / task_id)
    report = asyncio.run(mutation_test(package, Images()))
    dated = [r for r in report.results if r.mutant.operator == "date-other-format"]
    assert dated and all(r.status == "passed as it must" for r in dated), [(r.mutant.target, r.detail) for r in dated]
    written = [value_at(r.mutant.trajectory.output, tuple(r.mutant.target.split(".")[1:])) for r in dated]
    assert all(isinstance(w, str) and not ISO.fullmatch(w) for w in written), written
    assert report.ok


def iso_only(value):
    """A date reader that knows only YYYY-MM-DD: the date reading broken."""
    return date.fromisoformat(value) if isinstance(value, str) and ISO.fullmatch(value) else None


def test_a_grader_that_reads_only_iso_dates_fails_the_selftest_naming_the_mutant(monkeypatch):
    monkeypatch.setattr(_typed, "read_date", iso_only)
    folder = SUPERCLUE / "SC-IR-ADMISSION-DATES"
    report = asyncio.run(mutation_test(load_package(folder), Images()))
    wrong = [r for r in report.results if r.status == "must pass, rejected"]
    assert {r.mutant.target for r in wrong} == {"output.stay.start", "output.stay.end"} and not report.ok
    assert all("typed" in r.detail for r in wrong)
    result = CliRunner().invoke(main, ["selftest", "--mutants", str(folder)])
    assert result.exit_code == 1
    assert "      must pass, rejected: date-other-format output.stay.start (output.stay.start as 12 November 2026)" in (
        result.output
    )
    assert "  date-other-format: 0/2 passed as they must (valid by construction), 2 rejected" in result.output


def test_the_report_lines_count_must_pass_mutants_as_passed_not_rejected():
    counts = Counter({"passed as it must": 5, "must pass, rejected": 1})
    assert totals_line("date-other-format", counts) == (
        "date-other-format: 5/6 passed as they must (valid by construction), 1 rejected"
    )
    assert totals_line("drop-call", Counter({"rejected": 3})) == (
        "drop-call: 3/3 rejected, 0 declared valid, 0 survived"
    )


def test_the_per_package_line_says_passed_for_a_must_pass_operator():
    package = load_package(SUPERCLUE / "SC-IR-LATEST-DIAGNOSIS")
    line = operators_line(asyncio.run(mutation_test(package, Images())))
    assert "date-other-format 1/1 passed" in line and "drop-call 3/3" in line
