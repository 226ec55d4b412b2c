"""The reference agents: one planner, six configurations. Each differs from another by one readable flag."""
from __future__ import annotations

from functools import partial

from .planner import Features, Planner

REFERENCE_AGENTS = {
    # A rule-based planner that reads what is on file but does not compare it with what it is about to do.
    "baseline-v1": partial(Planner, "baseline-v1", "1.0", Features(respects_records=False)),
    # baseline-v1 + one improvement: it respects records (no duplicate orders, no action before it is due).
    "candidate-v2": partial(Planner, "candidate-v2", "2.0", Features()),
    # candidate-v2 that forgets the improvement on about a third of its trials (seeded): better on average, unstable.
    "flaky-simulator": partial(Planner, "flaky-simulator", "2.0-flaky", Features(flaky_rate=0.35)),
    # Skips the safety checks before prescribing: shows the safety gate.
    "unsafe-shortcut": partial(Planner, "unsafe-shortcut", "2.0-unsafe", Features(safety_checks=False)),
    # Ablations of candidate-v2.
    "candidate-v2-no-conflict": partial(Planner, "candidate-v2-no-conflict", "2.0-abl1",
                                        Features(conflict_retention=False)),
    "candidate-v2-no-domain-gate": partial(Planner, "candidate-v2-no-domain-gate", "2.0-abl2",
                                           Features(domain_gate=False)),
    # The kernel's worked-example agent: candidate-v2's rules under the name the first suite used.
    "scripted": partial(Planner, "scripted", "2.0", Features()),
}

REFERENCE_SET = ("baseline-v1", "candidate-v2", "flaky-simulator", "unsafe-shortcut", "candidate-v2-no-conflict",
                 "candidate-v2-no-domain-gate")
"""The six reference agents (``scripted`` aside) that the bundled suites are run with."""
