"""The run dashboard: pass rates per dimension and agent with Wilson intervals, safety findings by severity, latency
percentiles, cost, model tokens and where each agent's time goes, and, given a baseline, the release gate of the
comparison. The charts are Altair specs drawn in the
browser by Vega, whose JavaScript comes from the installed vl-convert package (bundled with the dashboard's module,
nothing fetched). Altair takes seconds to import, so in a notebook the specs are made once the cell has shown the rest
of the dashboard. Clicking a cell (dimension x agent) filters a linked failure browser.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path

import anywidget
import pandas as pd
import traitlets
import vl_convert

from ..analysis import (
    compare,
    components,
    declared_policy,
    evaluate,
    latency_percentiles,
    load_policy,
    pass_rate_cells,
    safety_findings,
    task_passes,
    usage,
)
from ..spec import SYNTHETIC_BANNER, UsageError
from ..store import Run, open_run
from ._frontend import bundled, widget_css
from .failures import FailureBrowser

VEGA_LITE = "v6_4"
"""The Vega-Lite version bundled, the one Altair 6 writes."""


def cache_dir() -> Path:
    """Where built bundles are kept: $FORGE_CACHE, else ~/.cache/medagent-forge."""
    return Path(os.environ.get("FORGE_CACHE") or Path.home() / ".cache" / "medagent-forge")


@cache
def dashboard_esm() -> str:
    """The dashboard's module with Vega, Vega-Lite and vega-embed bundled in (built by vl-convert, ~0.9 MB, in about
    2 s; kept on disk by the hash of the module and the vl-convert version)."""
    source = bundled("dashboard.js")
    version = vl_convert.__version__  # type: ignore[attr-defined]  # set by the package, not in its stub
    digest = hashlib.sha256(f"{version}\0{VEGA_LITE}\0{source}".encode()).hexdigest()[:16]
    path = cache_dir() / f"dashboard-{digest}.js"
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        pass
    bundle = vl_convert.javascript_bundle(source, vl_version=VEGA_LITE)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.partial")
        partial.write_text(bundle, encoding="utf-8")
        os.replace(partial, path)
    except OSError:
        pass  # a read-only home: built again next time
    return bundle


def gate_state(
    baseline: Run, candidate: Run, baseline_agent: str, candidate_agent: str, policy: str | Path | None
) -> dict:
    """The release gate of candidate vs baseline, as the dashboard shows it, with the comparison's components
    (retrieval, citations) beside task success."""
    comparison = compare(baseline, candidate, baseline_agent, candidate_agent)
    result = evaluate(comparison, load_policy(policy), declared_policy(candidate))
    parts = components(comparison)
    return {
        "components": {"headline": parts.headline, "rows": parts.rows()},
        "baseline": baseline_agent,
        "candidate": candidate_agent,
        "green": result.green,
        "summary": result.summary,
        "checks": [
            {"name": c.name, "level": c.level, "status": c.status, "detail": c.detail, "note": c.note}
            for c in result.checks
        ],
    }


def after_this_cell(work: Callable[[], None]) -> None:
    """``work`` done once the notebook cell running now has shown its output, before the next cell runs (at once
    outside IPython)."""
    shell = sys.modules["IPython"].get_ipython() if "IPython" in sys.modules else None
    if shell is None:
        work()
        return

    def once(_result: object) -> None:
        shell.events.unregister("post_run_cell", once)
        work()

    shell.events.register("post_run_cell", once)


def task_rows(run: Run) -> dict:
    """Each task that some agent did not pass in every trial, unstable ones first: per agent "k of n" passed."""
    passes = task_passes(run)
    agents = sorted(passes["agent"].unique())
    rows = []
    for task_id, cells in passes.groupby("task_id", sort=True):
        if (cells["passed"] < cells["trials"]).any():
            by_agent = {c.agent: c for c in cells.itertuples(index=False)}
            rows.append(
                {
                    "task_id": task_id,
                    "dimension": cells["dimension"].iloc[0],
                    "unstable": bool(cells["unstable"].any()),
                    "cells": [
                        {"agent": a, "passed": int(c.passed), "trials": int(c.trials), "unstable": bool(c.unstable)}
                        if (c := by_agent.get(a)) is not None
                        else None
                        for a in agents
                    ],
                }
            )
    rows.sort(key=lambda r: not r["unstable"])
    return {"agents": agents, "rows": rows}


class RunDashboard(anywidget.AnyWidget):
    """A run at a glance. ``failures``: a FailureBrowser that a click on a dimension x agent cell filters (its
    ``select``). ``baseline`` and ``candidate`` (agent names; ``baseline_run`` if the baseline is in another run):
    the release gate of that comparison under ``policy`` (default: the bundled policy).
    """

    _css = widget_css("dashboard.css")
    banner = traitlets.Unicode(SYNTHETIC_BANNER).tag(sync=True)
    heading = traitlets.Dict().tag(sync=True)
    charts = traitlets.Dict().tag(sync=True)
    """Chart name -> its Vega-Lite spec (in a notebook, made once the cell has shown the dashboard), or
    ``{"error": ...}`` if they could not be made."""
    gate = traitlets.Dict(None, allow_none=True).tag(sync=True)
    usage = traitlets.Dict().tag(sync=True)
    """Per agent, as text: cost and model tokens per task and the median time per trial of each part
    (``analysis.usage``): ``{"columns": [...], "rows": [[agent, ...], ...]}``."""
    tasks = traitlets.Dict().tag(sync=True)
    """The tasks some agent did not pass in every trial (``task_rows``): ``{"agents": [...], "rows": [...]}``."""
    selection = traitlets.Dict().tag(sync=True)
    """The cell clicked: ``{"agent": ..., "dimension": ...}`` (dimension "" for a whole agent), or ``{"agent": ...,
    "task": ...}`` for a task's row, or empty."""

    @property
    def _esm(self) -> str:
        return dashboard_esm()

    def __init__(
        self,
        run: Run | str | Path,
        *,
        failures: FailureBrowser | None = None,
        baseline: str | None = None,
        candidate: str | None = None,
        baseline_run: Run | str | Path | None = None,
        policy: str | Path | None = None,
    ):
        run = run if isinstance(run, Run) else open_run(run)
        if (baseline is None) != (candidate is None):
            raise UsageError(
                "RunDashboard",
                "baseline" if baseline is None else "candidate",
                "the gate needs both a baseline and a candidate agent",
            )
        cells = pass_rate_cells(run)
        gate = None
        if baseline is not None and candidate is not None:  # both or neither (above)
            other = run if baseline_run is None else baseline_run
            other = other if isinstance(other, Run) else open_run(other)
            gate = gate_state(other, run, baseline, candidate, policy)
        outcomes, used = run.outcomes, usage(run.facts()).frame
        super().__init__(
            usage={"columns": list(used.columns), "rows": used.values.tolist()},
            heading={
                "run_id": run.run_id,
                "trials": len(outcomes),
                "passed": int(outcomes["passed"].sum()),
                "agents": sorted(outcomes["agent"].unique()),
                "tasks": int(outcomes["task_id"].nunique()),
            },
            gate=gate,
            tasks=task_rows(run),
        )
        self.run, self.failures = run, failures
        self.observe(lambda change: self._filter(change["new"]), names="selection")
        findings, latency = safety_findings(run), latency_percentiles(run)
        after_this_cell(lambda: self._draw(cells, findings, latency))

    def _draw(self, cells: pd.DataFrame, findings: pd.DataFrame, latency: pd.DataFrame) -> None:
        try:
            from . import _charts as charts  # Altair: seconds to import

            self.charts = {
                "pass_rates": charts.pass_rate_grid(cells),
                "overall": charts.overall_rates(cells),
                "safety": charts.safety_bars(findings),
                "latency": charts.latency_points(latency),
            }
        except Exception as exc:  # said in the dashboard, and raised
            self.charts = {"error": f"the charts could not be drawn: {type(exc).__name__}: {exc}"}
            raise

    def select(self, agent: str | None = None, dimension: str | None = None, task: str | None = None) -> None:
        """Pick a cell (as a click does): the linked failure browser shows that agent's failures in that
        dimension, or of that task (and plays its first failed trial, beside a passing one if the task is
        unstable); no agent clears it."""
        chosen = {"task": task} if task else {"dimension": dimension or ""}
        self.selection = {"agent": agent, **chosen} if agent else {}

    def _filter(self, selection: dict) -> None:
        if self.failures is None:
            return
        agent, task = selection.get("agent") or None, selection.get("task") or None
        self.failures.filter(agent=agent, dimension=selection.get("dimension") or None, task_id=task)
        failed = [r["trial_id"] for r in self.failures.rows if r["task_id"] == task and r["agent"] == agent]
        if failed:
            self.failures.play(failed[0])
