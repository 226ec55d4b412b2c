"""Amounts with units: the same dose written in other ways agrees, other doses and other dimensions do not."""

import pytest

from forge_kernel.verify.quantities import Amount, amount, amounts


@pytest.mark.parametrize(
    "a, b",
    [
        ("20mg", "20 mg"),
        ("0.5 g", "500 mg"),
        ("5毫克", "5 mg"),
        ("0.5克", "500mg"),
        ("1000 mcg", "1 mg"),
        ("37.5℃", "37.5 Cel"),
        ("88 /min", "88 bpm"),
        ("18 breaths/min", "18 次/分"),
        ("72 beats/min", "72 次/min"),
        ("12.5×10^9/L", "12.5 10*9/L"),
        ("250 mL", "0.25 L"),
    ],
)
def test_the_same_amount_written_differently(a, b):
    assert amount(a).same(amount(b)) and amount(b).same(amount(a))


@pytest.mark.parametrize("a, b", [("20 mg", "40 mg"), ("20 mg", "20 mL"), ("0.5 g", "5 mg"), ("140 mmHg", "140")])
def test_other_amounts_or_dimensions_differ(a, b):
    assert not amount(a).same(amount(b))


def test_a_unit_pint_cannot_read_compares_by_its_text():
    assert Amount(2, "tablets").same(Amount(2, "tablets")) and not Amount(2, "tablets").same(Amount(2, "puffs"))


@pytest.mark.parametrize(
    "text, found",
    [
        ("剂量20毫克每日一次", [(20, "mg")]),
        ("血红蛋白95g/L，较前下降", [(95, "g/L")]),
        ("BP 140/90 mmHg", [(140, ""), (90, "mmHg")]),
        ("MRN SC-0101, HbA1c 7.2%", [(7.2, "percent")]),
        ("2026-11-30 10:00 体温37.8℃", [(37.8, "degC")]),
    ],
)
def test_amounts_in_text_skip_ids_dates_and_times(text, found):
    assert [(a.value, a.unit) for a in amounts(text)] == found


def test_text_with_several_amounts_is_not_one_amount():
    assert amount("20 mg or 40 mg") is None and amount("none") is None
