"""Summaries of one run: per task and agent, and pass rates by slice."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pandas as pd

from ..store import load_trials


def run_summary(run_dir: str | Path, keys: tuple[str, ...] = ("agent",)) -> pd.DataFrame:
    """Trials, passes, pass rate, mean tool-call accuracy and completion per agent (or other keys)."""
    trials = load_trials(run_dir)
    grouped = trials.groupby(list(keys), sort=True)
    return pd.DataFrame({
        "trials": grouped.size(),
        "passed": grouped["passed"].sum(),
        "pass_rate": grouped["passed"].mean(),
        "accuracy": grouped["accuracy"].mean(),
        "completion": grouped["completion"].mean(),
    }).reset_index()


def pass_rates(run_dir: str | Path, by: str = "dimension") -> pd.DataFrame:
    """Trial pass rate per agent (rows) and value of a slice or package column (columns), plus 'all'."""
    trials = load_trials(run_dir)
    if by not in trials.columns:
        trials[by] = trials["slices"].map(lambda s: json.loads(s).get(by, "(none)"))
    table = trials.pivot_table(index="agent", columns=by, values="passed", aggfunc="mean")
    table["all"] = trials.groupby("agent")["passed"].mean()
    return table


def markdown_table(table: pd.DataFrame, index_name: str, fmt: Callable[[float], str]) -> str:
    """A DataFrame as a Markdown table; missing cells show as a dash."""
    header = [index_name, *map(str, table.columns)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, row in table.iterrows():
        cells = [str(name), *("—" if pd.isna(v) else fmt(v) for v in row)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
