"""The replay player widget: a trial synced once, stepped through in the browser with no kernel round trip."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anywidget
import traitlets

from ..spec import UsageError
from ..store import Run, Trial, open_run
from ._frontend import ESM, player_state, widget_css


class ReplayPlayer(anywidget.AnyWidget):
    """One trial of a run, step by step, beside the patient-state diff, with its verdicts and scores.

    ``other`` puts a second trial of the same task beside it, aligned by step: a Trial (of any run, e.g. the
    baseline's), or ``(agent, trial)`` in this run. In the browser, with no kernel round trip: Left / Right step,
    C / V / F / W jump to the next change, verdict, fault or write (Shift: the previous), and the step list filters
    by tool or by verdict.
    """

    _esm = ESM
    _css = widget_css("player.css")
    trajectory = traitlets.Bytes().tag(sync=True)
    """The trial's compact trajectory (``forge_kernel.spec.compact``) as JSON: one binary buffer, sent as it is."""
    other = traitlets.Bytes(allow_none=True, default_value=None).tag(sync=True)
    """The trial shown beside it, as JSON, or None."""

    def __init__(self, run: Run | str | Path, task: str, agent: str, trial: int = 0, *, other: Any = None):
        run = run if isinstance(run, Run) else open_run(run)
        if isinstance(other, tuple):
            other = run.trial(task, *other)
        super().__init__(**player_state(run.trial(task, agent, trial), other))

    def show(self, trial: Any, other: Any = None) -> None:
        """Play another trial (a Trial or its compact form), with ``other`` beside it or None, in this player."""
        with self.hold_sync():  # one message: the front end reads both traits together
            for name, value in player_state(trial, other).items():
                setattr(self, name, value)


def play(trial: Trial, other: Trial | tuple[str, int] | None = None) -> ReplayPlayer:
    """The replay player of a trial of a Run (``run.trial(task, agent, k)``), with ``other`` beside it: a Trial (of
    any run, e.g. the baseline's), or ``(agent, trial)`` in the same run."""
    if trial.run is None:
        raise UsageError("play", "trial", "a trial as a Run reads it: run.trial(task, agent, k)")
    return ReplayPlayer(trial.run, trial.task_id, trial.agent, trial.trial, other=other)
