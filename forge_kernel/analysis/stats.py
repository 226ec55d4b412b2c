"""Statistics for comparing agents: Wilson intervals, bootstrap intervals of means, exact McNemar, pass@k / pass^k, calibration, percentiles;
and Cohen's kappa, for a judge against its labelled set.

Every figure carries its sample size; below the minimum a figure is reported as too few samples, not a number.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from math import comb, sqrt

Z95 = 1.959963984540054
MIN_RATE_SAMPLES = 10
"""Below this many samples a rate is shown as counts only."""
MIN_PERCENTILE_SAMPLES = {50: 5, 95: 20, 99: 100}
"""A percentile needs this many observations to be reported."""


@dataclass(frozen=True)
class Rate:
    """k successes out of n, with a Wilson 95% interval."""

    k: int
    n: int

    @property
    def value(self) -> float | None:
        return self.k / self.n if self.n else None

    @property
    def interval(self) -> tuple[float, float] | None:
        return wilson(self.k, self.n) if self.n else None

    @property
    def enough(self) -> bool:
        return self.n >= MIN_RATE_SAMPLES

    def __str__(self) -> str:
        if not self.n:
            return "no samples"
        if not self.enough:
            return f"{self.k}/{self.n} (too few samples)"
        lo, hi = wilson(self.k, self.n)
        return f"{self.k}/{self.n} = {self.value:.0%} [{lo:.0%}, {hi:.0%}]"

    @classmethod
    def of(cls, d: dict) -> Rate:
        """The Rate of an ``as_dict`` form."""
        return cls(d["k"], d["n"])

    def as_dict(self) -> dict:
        interval = self.interval
        return {
            "k": self.k,
            "n": self.n,
            "rate": self.value,
            "ci95": list(interval) if interval else None,
            "too_few_samples": not self.enough,
        }


@dataclass(frozen=True)
class Mean:
    """The mean of n figures (each in [0, 1], one per trial), with a 95% percentile bootstrap interval."""

    value: float | None
    n: int
    interval: tuple[float, float] | None

    @classmethod
    def of(cls, values: Sequence[float]) -> Mean:
        """The mean of ``values`` with its ``bootstrap`` interval (none without values)."""
        if not values:
            return cls(None, 0, None)
        return cls(sum(values) / len(values), len(values), bootstrap(values))

    @property
    def enough(self) -> bool:
        return self.n >= MIN_RATE_SAMPLES

    def __str__(self) -> str:
        if self.value is None or self.interval is None:
            return "no samples"
        if not self.enough:
            return f"{self.value:.2f} (n={self.n}, too few samples)"
        return f"{self.value:.2f} [{self.interval[0]:.2f}, {self.interval[1]:.2f}] (n={self.n})"

    def as_dict(self) -> dict:
        return {
            "mean": self.value,
            "n": self.n,
            "ci95": list(self.interval) if self.interval else None,
            "too_few_samples": not self.enough,
        }


BOOTSTRAP_RESAMPLES = 2000


def bootstrap(values: Sequence[float], resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0) -> tuple[float, float]:
    """95% percentile bootstrap interval of the mean of ``values`` (resampled with replacement; a fixed seed, so a
    report is the same each time it is made)."""
    import numpy as np

    data = np.asarray(values, dtype=float)
    means = data[np.random.default_rng(seed).integers(0, len(data), (resamples, len(data)))].mean(axis=1)
    lo, hi = np.quantile(means, [0.025, 0.975])
    return float(lo), float(hi)


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for k successes in n trials."""
    if n <= 0:
        raise ValueError("n must be positive")
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs b (only A passes) and c (only B passes)."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(comb(n, i) for i in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


def pass_at_k(c: int, n: int, k: int) -> float:
    """Unbiased estimate of P(at least one of k trials passes), from c passes in n trials."""
    if not 0 < k <= n:
        raise ValueError("need 0 < k <= n")
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(c: int, n: int, k: int) -> float:
    """Unbiased estimate of P(all k trials pass): C(c, k) / C(n, k)."""
    if not 0 < k <= n:
        raise ValueError("need 0 < k <= n")
    return comb(c, k) / comb(n, k)


def brier(confidences: Sequence[float], outcomes: Sequence[bool]) -> float:
    """Mean squared difference between stated confidence and outcome (0 best)."""
    if not confidences or len(confidences) != len(outcomes):
        raise ValueError("need equally many confidences and outcomes")
    return sum((p - float(y)) ** 2 for p, y in zip(confidences, outcomes)) / len(confidences)


@dataclass(frozen=True)
class Bin:
    lo: float
    hi: float
    count: int
    confidence: float | None
    accuracy: float | None


def reliability(confidences: Sequence[float], outcomes: Sequence[bool], bins: int = 10) -> list[Bin]:
    """Equal-width confidence bins with their mean confidence and observed accuracy."""
    members: list[list[tuple[float, bool]]] = [[] for _ in range(bins)]
    for p, y in zip(confidences, outcomes):
        members[min(int(p * bins), bins - 1)].append((p, y))
    return [
        Bin(
            i / bins,
            (i + 1) / bins,
            len(m),
            sum(p for p, _ in m) / len(m) if m else None,
            sum(y for _, y in m) / len(m) if m else None,
        )
        for i, m in enumerate(members)
    ]


def ece(confidences: Sequence[float], outcomes: Sequence[bool], bins: int = 10) -> float:
    """Expected calibration error: bin-weighted |accuracy - confidence|."""
    n = len(confidences)
    if not n or n != len(outcomes):
        raise ValueError("need equally many confidences and outcomes")
    return sum(
        b.count / n * abs(b.accuracy - b.confidence)
        for b in reliability(confidences, outcomes, bins)
        if b.accuracy is not None and b.confidence is not None
    )  # the bins with members


def percentile(values: Sequence[float], q: int) -> float | None:
    """The q-th percentile (linear interpolation), or None with too few values for it."""
    if len(values) < MIN_PERCENTILE_SAMPLES.get(q, 1):
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


@dataclass(frozen=True)
class Kappa:
    """Two raters' agreement on n items: the share of items they label alike, and Cohen's kappa with a 95%
    interval (None where chance agreement is 1: both gave one and the same label throughout)."""

    n: int
    observed: float
    kappa: float | None
    interval: tuple[float, float] | None

    def __str__(self) -> str:
        head = f"n {self.n}, observed agreement {self.observed:.0%}, "
        if self.kappa is None or self.interval is None:  # both or neither
            return head + "kappa undefined (one label throughout)"
        return head + f"kappa {self.kappa:.2f} [{self.interval[0]:.2f}, {self.interval[1]:.2f}]"


def cohens_kappa(pairs: Sequence[tuple[str, str]], z: float = Z95) -> Kappa:
    """Cohen's kappa of (first rater's label, second rater's label) pairs, with the large-sample interval of
    Fleiss, Cohen and Everitt (1969), clipped to [-1, 1]: var = (A + B - C) / (n (1 - pe)^2), where A = sum_i p_ii
    (1 - (p_i. + p_.i)(1 - k))^2, B = (1 - k)^2 sum_(i != j) p_ij (p_.i + p_j.)^2 and C = (k - pe (1 - k))^2."""
    n = len(pairs)
    if not n:
        raise ValueError("need at least one pair")
    p = {pair: count / n for pair, count in Counter(pairs).items()}
    first: defaultdict[str, float] = defaultdict(float)
    second: defaultdict[str, float] = defaultdict(float)
    for (label_1, label_2), share in p.items():
        first[label_1] += share
        second[label_2] += share
    labels = first.keys() | second.keys()
    observed = sum(p.get((k, k), 0.0) for k in labels)
    chance = sum(first[k] * second[k] for k in labels)
    if chance >= 1 - 1e-12:
        return Kappa(n, observed, None, None)
    kappa = (observed - chance) / (1 - chance)
    a = sum(p.get((k, k), 0.0) * (1 - (first[k] + second[k]) * (1 - kappa)) ** 2 for k in labels)
    b = (1 - kappa) ** 2 * sum(share * (second[i] + first[j]) ** 2 for (i, j), share in p.items() if i != j)
    c = (kappa - chance * (1 - kappa)) ** 2
    half = z * sqrt(max(a + b - c, 0.0) / n) / (1 - chance)
    return Kappa(n, observed, kappa, (max(-1.0, kappa - half), min(1.0, kappa + half)))
