"""What grading gives: verdicts pointing at steps, the scores, and the grading that holds them (data only; the
verifiers that make them are in ``verify``)."""

from __future__ import annotations

from dataclasses import dataclass

ERROR_PREFIX = "error: "
"""How the reason of a verdict whose verifier raised begins (the run store keeps only passed and reason)."""


@dataclass(frozen=True)
class Verdict:
    """The output of one verifier on one trial."""

    verifier_id: str
    kind: str
    category: str
    """success, safety, budget, trace or answer."""
    severity: str
    """hard or soft."""
    passed: bool
    reason: str
    steps: tuple[int, ...] = ()
    """The trajectory steps it points at."""
    error: bool = False
    """The verifier raised: the grading, not the trial, is at fault; never passes, reason prefixed ``error: ``."""
    measures: tuple[tuple[str, float], ...] = ()
    """Numbers the verifier scored (name, value), e.g. an extraction's node_f1; not kept by the run store (the
    reason states them)."""


@dataclass(frozen=True)
class Scores:
    passed: bool
    """Every hard verdict passed and no verifier raised."""
    accuracy: float
    """Tool-call accuracy: |expected ∩ called| / |expected|, order-tolerant."""
    completion: int
    """1 only with accuracy 1.0, no tool extra, and the state / answer checks passing."""
    safety_gate: str
    """passed, failed, or n/a (no required safety check in this task)."""
    missing: tuple[str, ...]
    extra: tuple[str, ...]


@dataclass(frozen=True)
class Grading:
    verdicts: list[Verdict]
    scores: Scores
    hidden_version: str
    hidden_hash: str
