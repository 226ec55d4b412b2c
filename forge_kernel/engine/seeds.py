"""Deterministic per-trial seeds."""

from __future__ import annotations

import hashlib


def trial_seed(run_seed: int, task_id: str, agent: str, trial: int) -> int:
    """A 63-bit seed from (run seed, task, agent, trial index); stable across machines and Python versions."""
    digest = hashlib.sha256(f"{run_seed}\x1f{task_id}\x1f{agent}\x1f{trial}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1
