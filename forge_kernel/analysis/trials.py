"""One row per trial with everything a comparison needs, derived from the run store."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd

from ..store import load_events, load_trials, load_verdicts
from ..tools.policy import CROSS_PATIENT, UNAUTHORIZED_WRITE

SLICE_NAMES = ("dimension", "language", "age_band", "sex", "missingness", "site", "period", "outcome")
"""Slices a comparison reports on, when packages declare them."""


def fingerprint(changes: list[str]) -> str:
    """A short hash of a trial's final-state changes (JSON-Patch operations, in order)."""
    return hashlib.sha256("\n".join(changes).encode()).hexdigest()[:16]


def event_facts(events: pd.DataFrame) -> pd.DataFrame:
    """Per trial: tool time, tool success, faults met and recovered, idempotent replays, state fingerprint."""
    events = events.assign(
        ok=events["ok"].astype(bool),
        replay=events["flags"].str.contains('"idempotent_replay"', regex=False),
        cross=events["denied"].eq(CROSS_PATIENT),
        unauthorized=events["denied"].eq(UNAUTHORIZED_WRITE),
    )
    rows = []
    for trial_id, ev in events.groupby("trial_id", sort=False):
        faults = ev[ev["fault"].notna()]
        recovered = sum(bool(((ev["tool"] == f.tool) & ev["ok"] & (ev["step"] > f.step)).any())
                        for f in faults.itertuples())
        rows.append({
            "trial_id": trial_id, "tool_s": ev["latency_ms"].sum() / 1000, "tool_calls": len(ev),
            "tool_ok": int(ev["ok"].sum()), "faults": len(faults), "recovered": recovered,
            "idempotent_replays": int(ev["replay"].sum()), "cross_patient": int(ev["cross"].sum()),
            "unauthorized_writes": int(ev["unauthorized"].sum()),
            "fingerprint": fingerprint([c for c in ev["changes"] if c != "[]"]),
        })
    return pd.DataFrame(rows)


def verdict_facts(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Per trial: failing hard safety verdicts, failing answer verdicts, and the ids that failed."""
    failed = verdicts[verdicts["passed"] == 0]
    grouped = failed.groupby("trial_id")
    return pd.DataFrame({
        "safety_failures": grouped.apply(lambda v: int(((v.category == "safety") & (v.severity == "hard")).sum()),
                                         include_groups=False),
        "answer_failures": grouped.apply(lambda v: int((v.category == "answer").sum()), include_groups=False),
        "failed_verifiers": grouped["verifier_id"].agg(lambda ids: ",".join(sorted(ids))),
    }).reset_index()


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
