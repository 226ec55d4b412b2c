"""Amounts with units, as doses and answers write them: "20mg", "20 mg", "0.5 g", "5毫克", "140 mmHg", "8.2 mmol/L".

Read with pint and compared within a dimension (0.5 g is 500 mg; mg and mL never compare). UCUM codes and
Chinese unit words pint does not know (``/min``, ``10*9/L``, ``毫克``) are mapped first; a unit that still
cannot be read compares only by its normalised text. Parsing is cached: a grading reads the same strings often.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import pairwise
from typing import TypeGuard

UNIT_WORDS = {
    "毫克": "mg",
    "克": "g",
    "微克": "ug",
    "千克": "kg",
    "公斤": "kg",
    "毫升": "mL",
    "升": "L",
    "毫摩尔/升": "mmol/L",
    "毫米汞柱": "mmHg",
    "次/分": "1/min",
    "次/分钟": "1/min",
    "mcg": "ug",
    "μg": "ug",
    "µg": "ug",
    "cc": "mL",
    "ml": "mL",
    "Cel": "degC",
    "℃": "degC",
    "°C": "degC",
    "℉": "degF",
    "bpm": "1/min",
    "/min": "1/min",
    "次/min": "1/min",
    "breaths/min": "1/min",
    "beats/min": "1/min",
    "mm[Hg]": "mmHg",
    "10*9/L": "1e9/L",
    "10^9/L": "1e9/L",
    "×10^9/L": "1e9/L",
    "×10*9/L": "1e9/L",
    "10*12/L": "1e12/L",
    "10^12/L": "1e12/L",
    "×10^12/L": "1e12/L",
    "%": "percent",
    "/µL": "1/uL",
    "/μL": "1/uL",
    "/uL": "1/uL",
}
"""Unit words and UCUM codes -> what pint reads."""
TIME_WORDS = {"分钟": "min", "小时": "h", "天": "day", "日": "day", "周": "week", "个月": "month", "年": "year"}
"""Chinese words for spans of time: a unit of its own (a quantity's unit "天"), or after a bare number in prose
("48 小时"), where the grounding check reads them; prose is not read with them as units."""
CJK_UNITS = sorted((w for w in UNIT_WORDS if re.match(r"[\u4e00-\u9fff]", w)), key=len, reverse=True)
UNIT = (
    r"(?:×?10[*^]\d+/L|℃|°C|%|(?!/\d)/?[A-Za-zµμ][A-Za-z0-9µμ/%^*.\[\]]*|" + "|".join(map(re.escape, CJK_UNITS)) + ")"
)
NUMBER_UNIT = re.compile(rf"(?<![A-Za-z0-9.\-])(\d+(?:\.\d+)?)(?:\s*({UNIT}))?")
"""A number, and the unit written right after it (with or without a space), if any."""
DATE_LIKE = re.compile(
    r"\d{4}[-/]\d{1,2}[-/]\d{1,2}(?:[T ]\d{1,2}:\d{2}(?::\d{2})?(?:\.\d+)?(?:[+-]\d{2}:?\d{2}|Z)?)?"
    r"|\d{1,2}:\d{2}(?::\d{2})?|\d{4}年\d{1,2}月(?:\d{1,2}日)?|\d{1,2}月\d{1,2}日"
)
"""Dates and times, whose digits are not amounts."""


BODY_SURFACE = re.compile(r"/\{?1\.73_?m(?:\^?2|²)\}?")
"""Per 1.73 m² of body surface, as eGFR is given (/1.73m2, /1.73 m², UCUM's /{1.73_m2}): a unit of its own."""
UCUM_POWER = re.compile(r"(?<=[A-Za-z])([23])(?![\d.])")
"""A power written after its unit, as UCUM does (m2 is m^2)."""


@cache
def unit_registry():
    import pint  # imported here: loading its unit registry takes a third of a second

    registry = pint.UnitRegistry()
    registry.define("body_surface_1_73 = 1.73 * meter ** 2")
    return registry


def normal_unit(unit: str | None) -> str:
    text = (unit or "").strip().replace(" ", "")
    text = UNIT_WORDS.get(text, UNIT_WORDS.get(text.lower(), TIME_WORDS.get(text, text)))
    return UCUM_POWER.sub(r"^\1", BODY_SURFACE.sub("/body_surface_1_73", text))


SCALED = re.compile(r"(\d+(?:\.\d+)?e\d+)/(.+)")
"""A unit with a scale factor, which pint does not read: 1e9/L is 1e9 times 1/L."""


@lru_cache(maxsize=4096)
def _quantity(value: float, unit: str):
    scaled = SCALED.fullmatch(unit or "")
    if scaled:
        value, unit = value * float(scaled.group(1)), f"1/{scaled.group(2)}"
    try:
        return unit_registry().Quantity(value, unit or "dimensionless")
    except Exception:  # pint raises several kinds for what it cannot read; such a unit compares by its text
        return None


@dataclass(frozen=True)
class Amount:
    """A number with its unit (normalised; "" for a bare number)."""

    value: float
    unit: str = ""

    @property
    def quantity(self):
        """As pint reads it, or None where it cannot."""
        return _quantity(self.value, self.unit)

    def same(self, other: Amount, rel_tol: float = 1e-6, abs_tol: float = 0.0) -> bool:
        """The same amount: equal once ``other`` is converted into this unit (same dimension only), or, where
        pint cannot read a unit, the same number with the same unit text."""
        mine, theirs = self.quantity, other.quantity
        if mine is not None and theirs is not None:
            if mine.dimensionality != theirs.dimensionality:
                return False
            converted = theirs.to(mine.units).magnitude
            return math.isclose(mine.magnitude, converted, rel_tol=rel_tol, abs_tol=abs_tol)
        return self.unit == other.unit and math.isclose(self.value, other.value, rel_tol=rel_tol, abs_tol=abs_tol)


def is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def amounts(text: str) -> list[Amount]:
    """Every number in the text, with the unit written after it (the digits of dates and times are not amounts)."""
    return [Amount(float(m.group(1)), normal_unit(m.group(2))) for m in NUMBER_UNIT.finditer(DATE_LIKE.sub(" ", text))]


def amount(value: str | float | int | dict | None, unit: str | None = None) -> Amount | None:
    """One amount: a number with a unit, a FHIR Quantity (``{value, unit}`` or ``{value, code}``), or text that
    holds exactly one amount (e.g. "0.5 g"); else None."""
    if isinstance(value, dict):
        number = value.get("value")
        return amount(number, value.get("unit") or value.get("code") or "") if is_number(number) else None
    if is_number(value):
        return Amount(float(value), normal_unit(unit))
    found = amounts(str(value or ""))
    if len(found) != 1:
        return None
    return found[0] if unit is None else Amount(found[0].value, normal_unit(unit))


POWER_OF_TEN = r"[×xX]\s*10\s*[\^*]\s*\d+\s*/\s*L"
""""× 10^9/L" however it is spaced."""
TEXT_UNIT = (
    rf"(?:{POWER_OF_TEN}|℃|°C|%|(?!/\d)/?[A-Za-zµμ][A-Za-z0-9µμ/%^*.\[\]²³]*(?<!\.)|"
    + "|".join(map(re.escape, CJK_UNITS))
    + ")"
)
"""A unit as prose writes it: UNIT, plus spaced powers of ten and superscripts, without a closing full stop."""
PROSE_WORDS = {"a", "an", "in", "at", "as", "am", "or", "pm", "point", "points", "has", "b", "c", "e", "k", "t", "u"}
"""Words that follow numbers in prose ("58 in May", "3 a day", "9 or 12") but that pint would read as units."""
TEXT_AMOUNT = re.compile(rf"(?<![A-Za-z0-9.\-])(\d+(?:\.(\d+))?)(?:\s*({TEXT_UNIT}))?")


@dataclass(frozen=True)
class Located:
    """An amount as a text writes it: where, as what, and to how many decimals."""

    amount: Amount
    start: int
    written: str
    decimals: int

    @property
    def end(self) -> int:
        return self.start + len(self.written)


def text_unit(unit: str | None) -> str:
    """A unit read from prose, normalised ("x 10^9/L" is 10^9/L)."""
    power = re.fullmatch(r"[×xX]\s*10\s*[\^*]\s*(\d+)\s*/\s*L", unit or "")
    if (unit or "").lower() in PROSE_WORDS:
        return ""
    return normal_unit(f"×10^{power.group(1)}/L" if power else unit)


@lru_cache(maxsize=16384)
def located_amounts(text: str) -> tuple[Located, ...]:
    """Every amount of a prose text with where it starts (dates and times are not amounts); in "134/80 mmHg"
    both numbers are in mmHg. Remembered per text: the same results reach many trials."""
    blanked = DATE_LIKE.sub(lambda m: " " * len(m.group()), text)
    found = []
    for m in TEXT_AMOUNT.finditer(blanked):
        unit = text_unit(m.group(3))
        found.append(
            Located(
                Amount(float(m.group(1)), unit), m.start(), m.group() if unit else m.group(1), len(m.group(2) or "")
            )
        )
    for i, (first, second) in enumerate(pairwise(found)):
        between = text[first.start + len(first.written) : second.start]
        if not first.amount.unit and second.amount.unit and between == "/":
            found[i] = Located(
                Amount(first.amount.value, second.amount.unit),
                first.start,
                first.written + "/" + second.written,
                first.decimals,
            )
    return tuple(found)


@lru_cache(maxsize=4096)
def in_unit(found: Amount, unit: str) -> float | None:
    """The amount's value in another unit of its dimension, or None where pint cannot convert it."""
    target = _quantity(1.0, unit)
    if found.quantity is None or target is None or found.quantity.dimensionality != target.dimensionality:
        return None
    return found.quantity.to(target.units).magnitude / target.magnitude
