"""Per task and agent summaries of a run."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..store import load_trials


def run_summary(run_dir: str | Path) -> pd.DataFrame:
    """Trials, passes, pass rate, mean tool-call accuracy and completion per (task, agent)."""
    trials = load_trials(run_dir)
    grouped = trials.groupby(["task_id", "agent"], sort=True)
    return pd.DataFrame({
        "trials": grouped.size(),
        "passed": grouped["passed"].sum(),
        "pass_rate": grouped["passed"].mean(),
        "accuracy": grouped["accuracy"].mean(),
        "completion": grouped["completion"].mean(),
    }).reset_index()
