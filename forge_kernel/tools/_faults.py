"""Fault injection: a declared timeout or error on the n-th call of a tool."""

from __future__ import annotations

from collections import Counter

from ..spec import Fault


class FaultPlan:
    """Counts the calls that reach each tool and says which one meets a fault."""

    def __init__(self, faults: list[Fault]):
        self._faults = {(f.tool, f.on_call): f for f in faults}
        self._calls: Counter[str] = Counter()

    def next(self, tool: str) -> Fault | None:
        """Count one call of ``tool``; the fault declared for this call, if any."""
        self._calls[tool] += 1
        return self._faults.get((tool, self._calls[tool]))
