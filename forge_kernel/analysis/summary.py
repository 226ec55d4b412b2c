"""Summaries of one run: per agent (or other keys), and pass rates by slice."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from ..store import Run
from ._slices import slice_value
from ._tasks import per_task
from .display import Shown, markdown_lines, seconds
from .stats import percentile


def two_places(x: float) -> str:
    return f"{x:.2f}"


@dataclass(repr=False, eq=False)
class Table(Shown):
    """A table of figures: ``frame`` holds it; text and HTML show its numbers to two places."""

    frame: pd.DataFrame
    index: bool = True
    """Whether the frame's index is part of the table."""

    def text(self) -> str:
        text: str = self.frame.to_string(index=self.index, float_format=two_places)
        return text

    def html(self) -> str:
        html: str = self.frame.to_html(index=self.index, float_format=two_places)
        return html


def run_summary(run: Run, keys: tuple[str, ...] = ("agent",)) -> Table:
    """Trials, passes, pass rate, mean tool-call accuracy and completion per agent (or other keys of
    ``run.outcomes``)."""
    grouped = run.outcomes.groupby(list(keys), sort=True)
    return Table(
        pd.DataFrame(
            {
                "trials": grouped.size(),
                "passed": grouped["passed"].sum(),
                "pass_rate": grouped["passed"].mean(),
                "accuracy": grouped["accuracy"].mean(),
                "completion": grouped["completion"].mean(),
            }
        ).reset_index(),
        index=False,
    )


def pass_rates(run: Run, by: str = "dimension") -> Table:
    """Trial pass rate per agent (rows) and value (columns) of a trial column, a package column or a declared
    slice, plus 'all'."""
    trials = run.outcomes
    values = trials[by] if by in trials.columns else trials["task_id"].map(slice_value(run, by))
    table = trials.assign(**{by: values}).pivot_table(index="agent", columns=by, values="passed", aggfunc="mean")
    table["all"] = trials.groupby("agent")["passed"].mean()
    return Table(table)


TIMES = (("model_s", "model"), ("tool_s", "tool"), ("agent_s", "agent's own"), ("queued_s", "queued"))
"""The parts of a trial's time a frame may hold (``Run.facts``: each; ``Run.usage``: the model's only)."""


def usage(trials: pd.DataFrame) -> Table:
    """Per agent of ``trials`` (``Run.usage`` or ``Run.facts()``): cost per task; where an agent of the run reported
    model turns, its turns and tokens per task (a dash for one that reported none); the median time per trial of
    each part of it the frame holds (``TIMES``; the model's only where turns were reported). Figures as text."""

    def count(x: float) -> str:
        return "—" if pd.isna(x) else f"{x:,.0f}"

    means = per_task(trials, ("agent",)).groupby("agent").mean()
    columns = {"cost per task": means["cost"].map(lambda x: f"${x:.4f}")}
    turns = bool(trials["turns"].any())
    if turns:
        columns.update(
            {
                "model turns per task": means["turns"].where(means["prompt_tokens"].notna()).map(count),
                "tokens in": means["prompt_tokens"].map(count),
                "cached": means["cached_tokens"].map(count),
                "tokens out": means["completion_tokens"].map(count),
            }
        )
    by_agent = trials.groupby("agent")
    for column, part in TIMES:
        if column in trials.columns and (turns or column != "model_s"):
            columns[f"{part} time P50"] = by_agent[column].agg(lambda x: seconds(percentile(x.dropna().tolist(), 50)))
    return Table(pd.DataFrame(columns).rename_axis("agent").reset_index(), index=False)


def markdown_table(table: pd.DataFrame, index_name: str, fmt: Callable[[float], str]) -> str:
    """A DataFrame as a Markdown table; missing cells show as a dash."""
    rows = [[str(name), *("—" if pd.isna(v) else fmt(v) for v in row)] for name, row in table.iterrows()]
    return "\n".join(markdown_lines([index_name, *map(str, table.columns)], rows))
