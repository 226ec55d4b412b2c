"""The failure ledger: one row per failed trial, safe to hand on.

A row holds the task and its version, the hidden-half version, the agent and its version, the trial index,
the failing verdicts (ids, categories, severities), a reference into the trajectory (run id, trial id, step
numbers), a suggested error class, the responsible component and the fix status. It never holds an answer,
a tool argument or result, a verdict reason, an error message or a reviewer comment: no patient content.
``steps`` are those the failing verdicts point at plus those of failed calls. A row is ``critical`` when a
hard safety verdict failed on a task of high or critical risk (``repro.py`` writes a bundle for each).

Error taxonomy, from verdicts and events: the first class in this order whose rule matches (``signals``
lists every class whose rule matched):

- ``verifier``: a verifier raised, so its verdict is an error (its reason begins ``error: ``): the grading
  code (a verifier kind or plugin, or an expectation that does not fit its params) is at fault, not the agent;
- ``gold``: a reviewer marked every failing hard verdict ``wrong_gold``;
- ``runtime``: the trial ended ``timeout``, ``agent_error`` or ``budget_exceeded``;
- ``policy``: the policy denied a call, or a safety verdict failed;
- ``parser``: a call had invalid arguments or named a tool the task does not have;
- ``tool/data``: a call failed in the tool (its own error, a crash or an injected fault) and no later call
  of the same tool succeeded;
- ``retrieval``: a read tool of the expected chain never ran successfully;
- ``agent/model``: none of the above matched; the agent had what it needed and decided wrongly.

The fix status is the most pressing status among the failing hard verdicts: ``open`` (no decision),
``confirmed``, ``fixed``, ``wont_fix``, ``wrong_gold``, in that order.
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from ..store import RunStore, load_events, load_trials, load_verdicts
from ..tools import TOOLS
from ..verify.verdict import ERROR_PREFIX
from .tasks import SAFETY_RISKS
from .triage import TriageFile

TAXONOMY = ("verifier", "gold", "runtime", "policy", "parser", "tool/data", "retrieval", "agent/model")
"""Error classes, in the order their rules are tried."""
COMPONENT = {"verifier": "verifiers (kind, plugin or params)", "gold": "task package (hidden half)",
             "runtime": "runtime", "tool/data": "tool catalog"}
"""Who fixes a class of failure; every other class is the agent's."""
RUNTIME_STATUSES = ("timeout", "agent_error", "budget_exceeded")
PARSER_CODES = ("invalid_args", "unknown_tool")
FIX_ORDER = ("open", "confirmed", "fixed", "wont_fix", "wrong_gold")

COLUMNS = {
    "run_id": "str", "trial_id": "int64", "task_id": "str", "task_version": "str", "hidden_version": "str",
    "suite": "str", "risk": "str", "agent": "str", "agent_version": "str", "trial": "int64", "status": "str",
    "failed_verifiers": "str", "failed_categories": "str", "failed_severities": "str", "steps": "str",
    "taxonomy": "str", "signals": "str", "component": "str", "fix_status": "str", "decisions": "str",
    "reviewers": "str", "critical": "bool",
}
"""Ledger columns and dtypes; list-valued cells are comma-joined, aligned across the ``failed_*`` columns."""
TEXT_COLUMNS = ["task_id", "task_version", "agent", "trial", "status", "taxonomy", "component", "fix_status",
                "failed_verifiers", "steps", "critical"]


def run_id(run_dir: str | Path) -> str:
    with RunStore.open(Path(run_dir), readonly=True) as store:
        return store.db.execute("SELECT value FROM meta WHERE key = 'run_id'").fetchone()[0]


def call_signals(events: pd.DataFrame) -> tuple[set[str], list[int]]:
    """Classes suggested by a trial's failed calls, and the steps of those calls."""
    signals, steps = set(), []
    ok = events["ok"].astype(bool)
    for e in events[~ok].itertuples():
        steps.append(e.step)
        if isinstance(e.denied, str):
            signals.add("policy")
        elif json.loads(e.error)["code"] in PARSER_CODES:
            signals.add("parser")
        elif not (ok & (events["tool"] == e.tool) & (events["step"] > e.step)).any():
            signals.add("tool/data")
    return signals, steps


def ledger_row(run: str, trial, verdicts: pd.DataFrame, events: pd.DataFrame, triage: TriageFile) -> dict:
    """The ledger row of one failed trial, from its failing verdicts and its events."""
    decisions = {v: triage.lookup(trial.task_id, trial.task_version, trial.agent, v) for v in verdicts["verifier_id"]}
    hard = verdicts.loc[verdicts["severity"] == "hard", "verifier_id"]
    statuses = [decisions[v].decision if decisions[v] else "open" for v in hard]
    signals, error_steps = call_signals(events)
    signals |= {c for c, hit in {
        "verifier": verdicts["reason"].str.startswith(ERROR_PREFIX).any(),
        "gold": all(s == "wrong_gold" for s in statuses),
        "runtime": trial.status in RUNTIME_STATUSES,
        "policy": (verdicts["category"] == "safety").any(),
        "retrieval": any(t in TOOLS and TOOLS[t].kind == "read" for t in json.loads(trial.missing)),
    }.items() if hit}
    signals = signals or {"agent/model"}
    taxonomy = next(c for c in TAXONOMY if c in signals)
    steps = sorted({s for v in verdicts["steps"] for s in json.loads(v)} | set(error_steps))
    hard_safety = ((verdicts["category"] == "safety") & (verdicts["severity"] == "hard")).any()
    decided = {v: d for v, d in decisions.items() if d}
    return {
        "run_id": run, "trial_id": trial.trial_id, "task_id": trial.task_id, "task_version": trial.task_version,
        "hidden_version": trial.hidden_version, "suite": trial.suite, "risk": trial.risk, "agent": trial.agent,
        "agent_version": trial.agent_version, "trial": trial.trial, "status": trial.status,
        "failed_verifiers": ",".join(verdicts["verifier_id"]), "failed_categories": ",".join(verdicts["category"]),
        "failed_severities": ",".join(verdicts["severity"]), "steps": ",".join(map(str, steps)),
        "taxonomy": taxonomy, "signals": ",".join(c for c in TAXONOMY if c in signals),
        "component": COMPONENT.get(taxonomy, "agent"), "fix_status": min(statuses, key=FIX_ORDER.index),
        "decisions": ",".join(f"{v}={d.decision}" for v, d in decided.items()),
        "reviewers": ",".join(sorted({d.reviewer for d in decided.values()})),
        "critical": bool(hard_safety and trial.risk in SAFETY_RISKS),
    }


def failure_ledger(run_dir: str | Path, triage: TriageFile | None = None) -> pd.DataFrame:
    """Every failed trial of a run's latest grading, with the triage file's decisions applied."""
    triage = triage or TriageFile()
    trials = load_trials(run_dir)
    failed = trials[~trials["passed"]]
    verdicts = load_verdicts(run_dir)
    verdicts = dict(tuple(verdicts[(verdicts["passed"] == 0) & verdicts["trial_id"].isin(failed["trial_id"])]
                          .groupby("trial_id")))
    events = load_events(run_dir)
    no_events = events.iloc[:0]
    events = dict(tuple(events[events["trial_id"].isin(failed["trial_id"])].groupby("trial_id")))
    run = run_id(run_dir)
    rows = [ledger_row(run, t, verdicts[t.trial_id], events.get(t.trial_id, no_events), triage)
            for t in failed.itertuples()]
    return pd.DataFrame(rows, columns=list(COLUMNS)).astype(COLUMNS)


def write_ledger(ledger: pd.DataFrame, csv: str | Path | None = None, parquet: str | Path | None = None) -> None:
    """Export the ledger to CSV and/or Parquet."""
    if csv:
        ledger.to_csv(csv, index=False)
    if parquet:
        ledger.to_parquet(parquet, index=False)


def read_ledger(path: str | Path) -> pd.DataFrame:
    """Read an exported ledger (``.parquet`` or CSV) back with the ledger's dtypes."""
    path = Path(path)
    if path.suffix == ".parquet":
        return pd.read_parquet(path)
    return pd.read_csv(path, dtype=COLUMNS, keep_default_na=False)


def ledger_text(ledger: pd.DataFrame) -> str:
    """Counts by error class and agent, then one line per failed trial (critical ones marked)."""
    run = ledger["run_id"].iloc[0] if len(ledger) else "-"
    head = (f"failure ledger · run {run} · {len(ledger)} failed trial(s) · "
            f"{int(ledger['critical'].sum())} critical · ids, versions, verdict ids and step numbers only")
    if ledger.empty:
        return head
    counts = pd.crosstab(ledger["agent"], ledger["taxonomy"], margins=True, margins_name="total")
    counts = counts[[c for c in (*TAXONOMY, "total") if c in counts.columns]]
    rows = ledger[TEXT_COLUMNS].assign(critical=ledger["critical"].map({True: "CRITICAL", False: ""}))
    return "\n".join([head, "", counts.to_string(), "", rows.to_string(index=False)])
