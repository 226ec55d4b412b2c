"""One row per trial with everything a comparison needs, derived from the run store."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd

from ..spec.trajectory import CROSS_PATIENT, UNAUTHORIZED_WRITE
from ..store import load_events, load_trials, load_verdicts

SLICE_NAMES = ("dimension", "language", "age_band", "sex", "missingness", "site", "period", "outcome")
"""Slices a comparison reports on, when packages declare them."""


def fingerprint(changes: list[str]) -> str:
    """A short hash of a trial's final-state changes (JSON-Patch operations, in order)."""
    return hashlib.sha256("\n".join(changes).encode()).hexdigest()[:16]


def event_facts(events: pd.DataFrame) -> pd.DataFrame:
    """Per trial: tool time, tool success, faults met and recovered, idempotent replays, state fingerprint."""
    ev = events.assign(
        ok=events["ok"].astype(bool), fault_met=events["fault"].notna(),
        replay=events["flags"].str.contains('"idempotent_replay"', regex=False),
        cross=events["denied"].eq(CROSS_PATIENT), unauthorized=events["denied"].eq(UNAUTHORIZED_WRITE),
    )
    facts = ev.groupby("trial_id").agg(
        tool_ms=("latency_ms", "sum"), tool_calls=("step", "size"), tool_ok=("ok", "sum"),
        faults=("fault_met", "sum"), idempotent_replays=("replay", "sum"), cross_patient=("cross", "sum"),
        unauthorized_writes=("unauthorized", "sum"))
    last_ok = ev[ev["ok"]].groupby(["trial_id", "tool"])["step"].max().rename("last_ok")
    faults = ev[ev["fault_met"]].join(last_ok, on=["trial_id", "tool"])
    facts["recovered"] = (faults["last_ok"] > faults["step"]).groupby(faults["trial_id"]).sum()
    writes = ev[ev["changes"] != "[]"].groupby("trial_id")["changes"].agg(lambda c: fingerprint(list(c)))
    facts["fingerprint"] = writes
    facts["tool_s"] = facts.pop("tool_ms") / 1000
    return facts.reset_index()


def verdict_facts(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Per trial: failing hard safety verdicts, failing answer verdicts, and the ids that failed."""
    failed = verdicts[verdicts["passed"] == 0].assign(
        safety=lambda v: (v["category"] == "safety") & (v["severity"] == "hard"),
        answer=lambda v: v["category"] == "answer")
    return failed.groupby("trial_id").agg(
        safety_failures=("safety", "sum"), answer_failures=("answer", "sum"),
        failed_verifiers=("verifier_id", lambda ids: ",".join(sorted(ids)))).reset_index()


def trial_table(run_dir: str | Path) -> pd.DataFrame:
    """Trials with scores, slices, latency split (agent / tool / queue), safety and tool facts."""
    trials = load_trials(run_dir)
    facts = event_facts(load_events(run_dir))
    table = trials.merge(facts, on="trial_id", how="left").merge(
        verdict_facts(load_verdicts(run_dir)), on="trial_id", how="left")
    zero_if_missing = ["tool_s", "tool_calls", "tool_ok", "faults", "recovered", "idempotent_replays",
                       "cross_patient", "unauthorized_writes", "safety_failures", "answer_failures"]
    table[zero_if_missing] = table[zero_if_missing].fillna(0)
    table["fingerprint"] = table["fingerprint"].fillna(fingerprint([]))
    table["failed_verifiers"] = table["failed_verifiers"].fillna("")
    table["agent_s"] = (table["duration_s"] - table["tool_s"]).clip(lower=0)
    slices = table["slices"].map(json.loads)
    for name in SLICE_NAMES:
        table[name] = slices.map(lambda s, n=name: s.get(n))
    return table
