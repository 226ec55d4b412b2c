"""The failure ledger: one row per failed trial, safe to hand on.

A row holds the task and its version, the hidden-half version, the agent and its version, the trial index,
the failing verdicts (ids, categories, severities), a reference into the trajectory (run id, trial id, step
numbers), a suggested error class, the responsible component and the fix status. It never holds an answer,
a tool argument or result, a verdict reason, an error message or a reviewer comment: no patient content.
``steps`` are those the failing verdicts point at plus those of failed calls. A row is ``critical`` when a
hard safety verdict failed on a task of high or critical risk (``engine/repro.py`` writes a bundle for each).

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

import gc
import json
from collections import defaultdict, namedtuple
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd

from ..store import Run
from ._tasks import SAFETY_RISKS
from .display import Shown, html_paragraphs, plain_table
from .triage import TriageFile

TAXONOMY = ("verifier", "gold", "runtime", "policy", "parser", "tool/data", "retrieval", "agent/model")
"""Error classes, in the order their rules are tried."""
COMPONENT = {
    "verifier": "verifiers (kind, plugin or params)",
    "gold": "task package (hidden half)",
    "runtime": "runtime",
    "tool/data": "tool catalog",
}
"""Who fixes a class of failure; every other class is the agent's."""
RUNTIME_STATUSES = ("timeout", "agent_error", "budget_exceeded")
PARSER_CODES = ("invalid_args", "unknown_tool")
FIX_ORDER = ("open", "confirmed", "fixed", "wont_fix", "wrong_gold")

COLUMNS = {
    "run_id": "str",
    "trial_id": "int64",
    "task_id": "str",
    "task_version": "str",
    "hidden_version": "str",
    "suite": "str",
    "risk": "str",
    "agent": "str",
    "agent_version": "str",
    "trial": "int64",
    "status": "str",
    "failed_verifiers": "str",
    "failed_categories": "str",
    "failed_severities": "str",
    "steps": "str",
    "taxonomy": "str",
    "signals": "str",
    "component": "str",
    "fix_status": "str",
    "decisions": "str",
    "reviewers": "str",
    "critical": "bool",
}
"""Ledger columns and dtypes; list-valued cells are comma-joined, aligned across the ``failed_*`` columns."""
TEXT_COLUMNS = [
    "task_id",
    "task_version",
    "agent",
    "trial",
    "status",
    "taxonomy",
    "component",
    "fix_status",
    "failed_verifiers",
    "steps",
    "critical",
]
HTML_ROWS = 100
"""Rows a notebook shows (the table holds them all)."""


@dataclass(repr=False, eq=False)
class Ledger(Shown):
    """A run's failure ledger: ``table`` holds one row per failed trial (``COLUMNS``)."""

    run_id: str
    table: pd.DataFrame

    @property
    def head(self) -> str:
        return (
            f"failure ledger · run {self.run_id} · {len(self.table)} failed trial(s) · "
            f"{int(self.table['critical'].sum())} critical · ids, versions, verdict ids and step numbers only"
        )

    @property
    def critical(self) -> pd.DataFrame:
        """The rows of critical failures."""
        return self.table[self.table["critical"]]

    def counts(self) -> pd.DataFrame:
        """Failed trials by agent (rows) and error class (columns), with totals."""
        counts = pd.crosstab(self.table["agent"], self.table["taxonomy"], margins=True, margins_name="total")
        return counts[[c for c in (*TAXONOMY, "total") if c in counts.columns]]

    def rows(self) -> pd.DataFrame:
        return self.table[TEXT_COLUMNS].assign(critical=self.table["critical"].map({True: "CRITICAL", False: ""}))

    def text(self) -> str:
        """Counts by error class and agent, then one line per failed trial (critical ones marked)."""
        if self.table.empty:
            return self.head
        return "\n".join([self.head, "", self.counts().to_string(), "", plain_table(self.rows())])

    def html(self) -> str:
        if self.table.empty:
            return html_paragraphs(self.head)
        more = len(self.table) - HTML_ROWS
        html: str = (
            html_paragraphs(self.head)
            + self.counts().to_html()
            + self.rows().head(HTML_ROWS).to_html(index=False)
            + (html_paragraphs(f"… and {more} more row(s) in .table") if more > 0 else "")
        )
        return html


def call_signals(calls: list[Any]) -> tuple[set[str], list[int]]:
    """Classes suggested by a trial's failed calls (rows of ``Run.failed_calls``), and the steps of those calls."""
    signals = set()
    for call in calls:
        if isinstance(call.denied, str):
            signals.add("policy")
        elif call.code in PARSER_CODES:
            signals.add("parser")
        elif not call.retried:
            signals.add("tool/data")
    return signals, [call.step for call in calls]


def ledger_row(run_id: str, trial: Any, verdicts: list[Any], calls: list[Any], triage: TriageFile) -> dict[str, Any]:
    """The ledger row of one failed trial, from its failing verdicts and its failed calls."""
    signals, call_steps = call_signals(calls)
    steps, statuses, decided = set(call_steps), [], {}
    hard_safety = False
    for v in verdicts:
        decision = triage.lookup(trial.task_id, trial.task_version, trial.agent, v.verifier_id)
        if decision:
            decided[v.verifier_id] = decision
        if v.severity == "hard":
            statuses.append(decision.decision if decision else "open")
        if v.raised:
            signals.add("verifier")
        if v.category == "safety":
            signals.add("policy")
            hard_safety = hard_safety or v.severity == "hard"
        steps.update(step_numbers(v.steps))
    if statuses.count("wrong_gold") == len(statuses):
        signals.add("gold")
    if trial.status in RUNTIME_STATUSES:
        signals.add("runtime")
    if trial.missing_reads > 0:
        signals.add("retrieval")
    signals = signals or {"agent/model"}
    taxonomy = next(c for c in TAXONOMY if c in signals)
    return {
        "run_id": run_id,
        "trial_id": trial.trial_id,
        "task_id": trial.task_id,
        "task_version": trial.task_version,
        "hidden_version": trial.hidden_version,
        "suite": trial.suite,
        "risk": trial.risk,
        "agent": trial.agent,
        "agent_version": trial.agent_version,
        "trial": trial.trial,
        "status": trial.status,
        "failed_verifiers": ",".join([v.verifier_id for v in verdicts]),
        "failed_categories": ",".join([v.category for v in verdicts]),
        "failed_severities": ",".join([v.severity for v in verdicts]),
        "steps": ",".join(map(str, sorted(steps))),
        "taxonomy": taxonomy,
        "signals": ",".join([c for c in TAXONOMY if c in signals]),
        "component": COMPONENT.get(taxonomy, "agent"),
        "fix_status": min(statuses, key=FIX_ORDER.index),
        "decisions": ",".join([f"{v}={d.decision}" for v, d in decided.items()]),
        "reviewers": ",".join(sorted({d.reviewer for d in decided.values()})),
        "critical": hard_safety and trial.risk in SAFETY_RISKS,
    }


@lru_cache(maxsize=4096)
def step_numbers(steps: str) -> tuple[int, ...]:
    """A verdict's steps (JSON), read once for each distinct list."""
    return tuple(json.loads(steps))


def rows_of(frame: pd.DataFrame) -> Iterator[Any]:
    """A frame's rows as named tuples of plain Python values, made from its columns as lists (faster to walk than
    its own rows)."""
    row = namedtuple("row", frame.columns)  # type: ignore[misc]  # the columns are the query's names
    return map(row._make, zip(*(frame[column].tolist() for column in frame.columns), strict=True))


def by_trial(frame: pd.DataFrame) -> dict[int, list[Any]]:
    """A frame's rows (named tuples), grouped by trial id, in order."""
    groups = defaultdict(list)
    for row in rows_of(frame):
        groups[row.trial_id].append(row)
    return groups


def failure_ledger(run: Run, triage: TriageFile | None = None) -> Ledger:
    """Every failed trial of a run's latest grading, with the triage file's decisions applied."""
    return Ledger(run.run_id, ledger_table(ledger_rows(run, triage)))


@contextmanager
def collection_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while many rows are made at once (rows hold no cycle): at 100,000
    trials its full passes over the rows already made cost about a quarter of the failure table's time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def ledger_rows(run: Run, triage: TriageFile | None = None) -> list[dict[str, Any]]:
    """The failure ledger's rows as dicts (``ledger_table`` makes its table of them)."""
    triage = triage or TriageFile()
    with collection_paused():
        tasks = run.tasks[["task_id", "version", "suite", "risk"]].rename(columns={"version": "task_version"})
        failed = run.failed_outcomes.merge(tasks, on="task_id", how="left")
        verdicts, calls = by_trial(run.failing_verdicts), by_trial(run.failed_calls)
        return [ledger_row(run.run_id, t, verdicts[t.trial_id], calls[t.trial_id], triage) for t in rows_of(failed)]


def ledger_table(rows: list[dict[str, Any]], **extra: str) -> pd.DataFrame:
    """The ledger's rows as its table, with ``extra`` columns (name -> dtype) after its own."""
    columns = {**COLUMNS, **extra}
    return pd.DataFrame(rows, columns=list(columns)).astype(columns)


def write_ledger(ledger: Ledger, csv: str | Path | None = None, parquet: str | Path | None = None) -> None:
    """Export the ledger's table to CSV and/or Parquet."""
    if csv:
        ledger.table.to_csv(csv, index=False)
    if parquet:
        ledger.table.to_parquet(parquet, index=False)


def read_ledger(path: str | Path) -> pd.DataFrame:
    """Read an exported ledger (``.parquet`` or CSV) back with the ledger's dtypes."""
    path = Path(path)
    if path.suffix == ".parquet":
        return pd.read_parquet(path)
    return pd.read_csv(path, dtype=COLUMNS, keep_default_na=False)
