"""What the workbench's failure browser and run dashboard show, as DataFrames: failed trials with their dimension
and triage status, pass rates per dimension and agent with Wilson intervals, safety findings by severity, and
latency percentiles. Read through the Run handle's frames, like every other analysis.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..store import Run
from ._slices import slice_value
from ._tasks import SAFETY_RISKS
from .ledger import ledger_rows, rows_of
from .stats import percentile, wilson
from .triage import TriageFile

SEVERITIES = ("critical", "hard", "soft")
"""Safety findings by severity: a failing hard safety verdict on a high- or critical-risk task, any other failing
hard safety verdict, a failing soft one."""
PERCENTILES = (50, 95, 99)
TASK_PASS_COLUMNS = ("task_id", "agent", "passed", "trials", "failed_trial_id", "passed_trial_id")


def failure_rows(run: Run, triage: TriageFile | None = None) -> list[dict[str, Any]]:
    """The failure ledger's rows (one per failed trial, triage applied) with the task's ``dimension``, as dicts
    (``ledger_table(rows, dimension="str")`` makes them a table)."""
    dimension, rows = slice_value(run, "dimension"), ledger_rows(run, triage)
    for row in rows:
        row["dimension"] = dimension.get(row["task_id"]) or "(none)"
    return rows


def task_passes(run: Run) -> pd.DataFrame:
    """Per task (with its ``dimension``) and agent: ``passed`` of ``trials`` (k of n), whether the task is
    ``unstable`` (some of its trials passed, some failed), and the ids of its first failed and first passed trial
    (``failed_trial_id``, ``passed_trial_id``; -1 where there is none), which a player shows side by side."""
    found: dict[tuple[str, str], dict] = {}
    for g in rows_of(run.task_passes):
        row = found.setdefault(
            (g.task_id, g.agent),
            {
                "task_id": g.task_id,
                "agent": g.agent,
                "passed": 0,
                "trials": 0,
                "failed_trial_id": -1,
                "passed_trial_id": -1,
            },
        )
        row["trials"] += g.trials
        if g.passed:
            row["passed"], row["passed_trial_id"] = g.trials, g.first_trial_id
        else:
            row["failed_trial_id"] = g.first_trial_id
    table = pd.DataFrame(list(found.values()), columns=TASK_PASS_COLUMNS)
    return table.assign(
        dimension=table["task_id"].map(slice_value(run, "dimension")).fillna("(none)"),
        unstable=(table["passed"] > 0) & (table["passed"] < table["trials"]),
    )


def pass_rate_cells(run: Run, by: str = "dimension") -> pd.DataFrame:
    """Per agent and value of ``by`` (and ``all``): passes ``k`` of ``n`` trials, the rate and its Wilson 95%
    interval (``lo``, ``hi``)."""
    trials = run.outcomes
    values = trials["task_id"].map(slice_value(run, by)).fillna("(none)")
    every = pd.concat([trials.assign(value=values), trials.assign(value="all")])
    cells = every.groupby(["agent", "value"], sort=True)["passed"].agg(k="sum", n="size").reset_index()
    bounds = [wilson(int(k), int(n)) for k, n in zip(cells["k"], cells["n"])]
    return cells.rename(columns={"value": by}).assign(
        k=cells["k"].astype(int), rate=cells["k"] / cells["n"], lo=[b[0] for b in bounds], hi=[b[1] for b in bounds]
    )


def safety_findings(run: Run) -> pd.DataFrame:
    """Failing safety verdicts per agent and severity (``SEVERITIES``), zeros included; never averaged."""
    verdicts = run.failing_verdicts
    safety = verdicts[verdicts["category"] == "safety"].merge(
        run.outcomes[["trial_id", "agent", "task_id"]], on="trial_id"
    )
    risk = safety["task_id"].map(dict(zip(run.tasks["task_id"], run.tasks["risk"])))
    severity = safety["severity"].where(~((safety["severity"] == "hard") & risk.isin(SAFETY_RISKS)), "critical")
    counts = safety.assign(severity=severity).groupby(["agent", "severity"]).size()
    grid = pd.MultiIndex.from_product([sorted(run.outcomes["agent"].unique()), SEVERITIES], names=["agent", "severity"])
    return counts.reindex(grid, fill_value=0).rename("findings").reset_index()


def latency_percentiles(run: Run) -> pd.DataFrame:
    """Trial duration percentiles (P50, P95, P99) per agent in milliseconds, split into the agent's own time and
    tool time; a percentile with too few trials for it is left out (``stats.MIN_PERCENTILE_SAMPLES``)."""
    rows = []
    for agent, trials in run.facts().groupby("agent", sort=True):
        for part, column in (("total", "duration_s"), ("agent", "agent_s"), ("tool", "tool_s")):
            values = trials[column].dropna().tolist()
            for q in PERCENTILES:
                value = percentile(values, q)
                if value is not None:
                    rows.append(
                        {"agent": agent, "part": part, "percentile": f"P{q}", "ms": value * 1000, "trials": len(values)}
                    )
    return pd.DataFrame(rows, columns=["agent", "part", "percentile", "ms", "trials"])
