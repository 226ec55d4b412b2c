"""Summaries of one run: per agent (or other keys), and pass rates by slice."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pandas as pd

from ..store import Run
from .display import Shown, markdown_lines
from ._slices import slice_value


def two_places(x: float) -> str:
    return f"{x:.2f}"


@dataclass(repr=False, eq=False)
class Table(Shown):
    """A table of figures: ``frame`` holds it; text and HTML show its numbers to two places."""

    frame: pd.DataFrame
    index: bool = True
    """Whether the frame's index is part of the table."""

    def text(self) -> str:
        return self.frame.to_string(index=self.index, float_format=two_places)

    def html(self) -> str:
        return self.frame.to_html(index=self.index, float_format=two_places)


def run_summary(run: Run, keys: tuple[str, ...] = ("agent",)) -> Table:
    """Trials, passes, pass rate, mean tool-call accuracy and completion per agent (or other keys of
    ``run.outcomes``)."""
    grouped = run.outcomes.groupby(list(keys), sort=True)
    return Table(pd.DataFrame({
        "trials": grouped.size(),
        "passed": grouped["passed"].sum(),
        "pass_rate": grouped["passed"].mean(),
        "accuracy": grouped["accuracy"].mean(),
        "completion": grouped["completion"].mean(),
    }).reset_index(), index=False)


def pass_rates(run: Run, by: str = "dimension") -> Table:
    """Trial pass rate per agent (rows) and value (columns) of a trial column, a package column or a declared
    slice, plus 'all'."""
    trials = run.outcomes
    values = trials[by] if by in trials.columns else trials["task_id"].map(slice_value(run, by))
    table = trials.assign(**{by: values}).pivot_table(index="agent", columns=by, values="passed", aggfunc="mean")
    table["all"] = trials.groupby("agent")["passed"].mean()
    return Table(table)


def markdown_table(table: pd.DataFrame, index_name: str, fmt: Callable[[float], str]) -> str:
    """A DataFrame as a Markdown table; missing cells show as a dash."""
    rows = [[str(name), *("—" if pd.isna(v) else fmt(v) for v in row)] for name, row in table.iterrows()]
    return "\n".join(markdown_lines([index_name, *map(str, table.columns)], rows))
