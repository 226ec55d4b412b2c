"""Field matchers (equals, contains, regex, numeric tolerance, one_of) and dotted-path look-ups."""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, field_validator

from ..spec import Strict
from .quantities import amount
from .tables import synonym_key


def within(value: float, target: float, tol: float) -> bool:
    """``|value - target| <= tol``, with room for float rounding (3.4 is within 3.5 ± 0.1)."""
    return abs(value - target) <= tol + 1e-9


def valid_regex(pattern: str | None, groups: int = 0) -> str | None:
    """The pattern, if it compiles with at least ``groups`` groups; else a ValueError for the params model."""
    if pattern is not None:
        try:
            compiled = re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"bad regex: {exc}") from None
        if compiled.groups < groups:
            raise ValueError(f"regex needs {groups} group(s)")
    return pattern


class Matcher(Strict):
    """Every condition given must hold for a value to match."""

    equals: Any = None
    contains: str | None = None
    """Case-insensitive substring."""
    regex: str | None = None
    approx: float | None = None
    tol: float = Field(0.0, ge=0)
    """Tolerance of ``approx`` and of ``amount`` (in the unit of ``amount``)."""
    one_of: list[Any] | None = None
    amount: str | None = None
    """An amount with its unit, e.g. "20 mg": the value (text such as "20mg" or "20 毫克", or a FHIR Quantity
    ``{value, unit}``) holds exactly this one amount, in the same unit; text with several amounts never matches."""
    convertible: bool = False
    """With ``amount``: another unit of the same dimension matches once converted (0.5 g for 500 mg)."""
    same_as: str | None = None
    """The value stands for the same as this term through the vocabularies (routes, frequencies, orders, drugs):
    ``same_as: qd`` matches 每日一次 and once daily, ``same_as: 血常规`` matches CBC."""

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        return valid_regex(value)

    @field_validator("amount")
    @classmethod
    def _one_amount(cls, value: str | None) -> str | None:
        if value is not None and amount(value) is None:
            raise ValueError(f"not one amount with its unit: {value!r}")
        return value

    def matches(self, value: Any) -> bool:
        if self.equals is not None and value != self.equals:
            return False
        if self.contains is not None and self.contains.lower() not in str(value).lower():
            return False
        if self.regex is not None and not re.search(self.regex, str(value)):
            return False
        if self.approx is not None:
            numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
            if not numeric or not within(value, self.approx, self.tol):
                return False
        if self.amount is not None and not self.same_amount(value):
            return False
        if self.same_as is not None and not (isinstance(value, str) and self.same_term(value)):
            return False
        return self.one_of is None or value in self.one_of

    def same_term(self, value: str) -> bool:
        return self.same_as is not None and synonym_key(value) == synonym_key(self.same_as)

    def same_amount(self, value: Any) -> bool:
        """The value holds the amount of ``amount`` (in its unit, or converted where ``convertible``)."""
        wanted = amount(self.amount)
        assert wanted is not None  # validated
        given = amount(value) if isinstance(value, (str, dict, int, float)) else None
        if given is None or not (self.convertible or given.unit == wanted.unit):
            return False
        return wanted.same(given, abs_tol=self.tol + 1e-9)  # room for float rounding, as in within()


def values_at(doc: Any, path: str) -> list[Any]:
    """All values at a dotted path; lists along the way are searched element by element."""
    nodes = [doc]
    for part in path.split("."):
        found = []
        for node in nodes:
            if isinstance(node, dict):
                if part in node:
                    found.append(node[part])
            elif isinstance(node, list):
                found += [item[part] for item in node if isinstance(item, dict) and part in item]
        nodes = found
    values: list[Any] = []
    for node in nodes:
        if isinstance(node, list):
            values += node
        else:
            values.append(node)
    return values


def matches_all(doc: Any, where: dict[str, Matcher]) -> bool:
    """True when, for every path, some value there matches its matcher."""
    return all(any(m.matches(v) for v in values_at(doc, path)) for path, m in where.items())
