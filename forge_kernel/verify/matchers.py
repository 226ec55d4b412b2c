"""Field matchers (equals, contains, regex, numeric tolerance, one_of) and dotted-path look-ups."""
from __future__ import annotations

import re
from typing import Any

from pydantic import Field, field_validator

from ..spec.package import Strict


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
    one_of: list[Any] | None = None

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        return valid_regex(value)

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
        return self.one_of is None or value in self.one_of


def values_at(doc: Any, path: str) -> list[Any]:
    """All values at a dotted path; lists along the way are searched element by element."""
    nodes = [doc]
    for part in path.split("."):
        found = []
        for node in nodes:
            for item in node if isinstance(node, list) else [node]:
                if isinstance(item, dict) and part in item:
                    found.append(item[part])
        nodes = found
    return [v for node in nodes for v in (node if isinstance(node, list) else [node])]


def matches_all(doc: Any, where: dict[str, Matcher]) -> bool:
    """True when, for every path, some value there matches its matcher."""
    return all(any(m.matches(v) for v in values_at(doc, path)) for path, m in where.items())
