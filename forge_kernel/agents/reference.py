"""The reference agents: one planner, six configurations, registered in the catalog. Each differs from another by
one readable flag."""

from __future__ import annotations

from functools import partial

from ..catalog import register
from .planner import Features, Planner


def reference(name: str, version: str, **flags) -> None:
    """Register the planner configured by ``flags`` (fields of Features) as agent ``name``."""
    register("agent", name, partial(Planner, name, version, Features(**flags)), version, flags, where=__name__)


# A rule-based planner that reads what is on file but does not compare it with what it is about to do.
reference("baseline-v1", "1.0", respects_records=False)
# baseline-v1 + one improvement: it respects records (no duplicate orders, no action before it is due).
reference("candidate-v2", "2.0")
# candidate-v2 that forgets the improvement on about a third of its trials (seeded): better on average, unstable.
reference("flaky-simulator", "2.0-flaky", flaky_rate=0.35)
# Skips the safety checks before prescribing: shows the safety gate.
reference("unsafe-shortcut", "2.0-unsafe", safety_checks=False)
# Ablations of candidate-v2.
reference("candidate-v2-no-conflict", "2.0-abl1", conflict_retention=False)
reference("candidate-v2-no-domain-gate", "2.0-abl2", domain_gate=False)
# The kernel's worked-example agent: candidate-v2's rules under the name the first suite used.
reference("scripted", "2.0")

REFERENCE_SET = (
    "baseline-v1",
    "candidate-v2",
    "flaky-simulator",
    "unsafe-shortcut",
    "candidate-v2-no-conflict",
    "candidate-v2-no-domain-gate",
)
"""The six reference agents (``scripted`` aside) that the bundled suites are run with."""
