"""Field matchers (equals, contains, regex, numeric tolerance, one_of) and dotted-path look-ups."""
from __future__ import annotations

import re
from typing import Any

from ..spec.package import Strict


class Matcher(Strict):
    """Every condition given must hold for a value to match."""

    equals: Any = None
    contains: str | None = None
    """Case-insensitive substring."""
    regex: str | None = None
    approx: float | None = None
    tol: float = 0.0
    one_of: list[Any] | None = None

    def matches(self, value: Any) -> bool:
        if self.equals is not None and value != self.equals:
            return False
        if self.contains is not None and self.contains.lower() not in str(value).lower():
            return False
        if self.regex is not None and not re.search(self.regex, str(value)):
            return False
        if self.approx is not None:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or abs(value - self.approx) > self.tol:
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
