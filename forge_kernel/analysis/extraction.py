"""Extraction metrics: how well an agent read a protocol's criteria tree, from the measures its
``extraction.criteria`` verdicts state (node F1, the share of fields read right, severe errors: an inclusion read as
an exclusion, an operator turned round, a threshold off by a unit's factor), averaged over its trials, with 95%
intervals. Nothing is graded again: the stored verdicts are read."""

from __future__ import annotations

from typing import Annotated

import pandas as pd
from pydantic import BaseModel, PlainSerializer

from ..store import Run
from ..verify import measures_in
from .stats import Mean, Rate

KIND = "extraction.criteria"
MeanOut = Annotated[Mean, PlainSerializer(Mean.as_dict)]
RateOut = Annotated[Rate, PlainSerializer(Rate.as_dict)]


class ExtractionFigures(BaseModel):
    """An agent's protocol extraction over its trials of extraction tasks."""

    tasks: int
    trials: int
    node_f1: MeanOut
    field_accuracy: MeanOut
    severe: RateOut
    """Trials with at least one severe error / trials."""


def extraction_figures(trials: pd.DataFrame, run: Run) -> ExtractionFigures | None:
    """The figures of ``trials`` (one agent's rows of ``run.facts``) on extraction tasks; None without any."""
    verdicts = run.verdicts_of_kind(KIND).merge(trials[["trial_id", "task_id"]], on="trial_id")
    if verdicts.empty:
        return None
    measures = [measures_in(reason) for reason in verdicts["reason"]]
    return ExtractionFigures(
        tasks=int(verdicts["task_id"].nunique()),
        trials=len(measures),
        node_f1=Mean.of([m.get("node_f1", 0.0) for m in measures]),
        field_accuracy=Mean.of([m.get("field_accuracy", 0.0) for m in measures]),
        severe=Rate(sum(m.get("severe_errors", 0.0) > 0 for m in measures), len(measures)),
    )
