"""Intervals for a difference of two pass rates (the report's ablation deltas)."""

from __future__ import annotations

from math import sqrt

from ..analysis import wilson


def delta_interval(k1: int, n1: int, k2: int, n2: int) -> tuple[float, float] | None:
    """Newcombe's hybrid score 95% interval for k2/n2 - k1/n1 (independent samples); None without samples."""
    if not n1 or not n2:
        return None
    p1, p2 = k1 / n1, k2 / n2
    (l1, u1), (l2, u2) = wilson(k1, n1), wilson(k2, n2)
    d = p2 - p1
    return d - sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2), d + sqrt((u2 - p2) ** 2 + (p1 - l1) ** 2)
