"""The failure browser: a run's failed trials in a filterable, sortable table; a click opens one in the replay player
below it, and the reviewer's triage (status and comment per failing verifier) is saved to the triage YAML file,
checked exactly as ``forge ledger --triage`` reads it.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import anywidget
import ipywidgets
import pandas as pd
import traitlets
import yaml

from ..analysis import TriageFile, collection_paused, failure_rows, ledger_table, load_triage, rows_of, task_passes
from ..spec import SYNTHETIC_BANNER, SpecError, UsageError
from ..store import Run, open_run
from ._frontend import bundled, widget_css
from .player import ReplayPlayer, play

FILTERS = ("suite", "dimension", "task_id", "agent", "verifier", "error_class", "triage", "stability")
"""What the table filters on; ``verifier`` matches a trial where that verifier is one of those that failed;
``stability`` is ``UNSTABLE`` (the agent passed some trials of the task) or ``NEVER_PASSED``."""
SORTS = ("critical", "suite", "dimension", "task_id", "agent", "trial", "passes", "verifiers", "error_class", "triage")
UNSTABLE, NEVER_PASSED = "unstable", "failed every trial"
TIEBREAK = ["task_id", "agent", "trial"]
DECISIONS = ("open", "confirmed", "wrong_gold", "fixed", "wont_fix")
"""Triage statuses a reviewer can set; ``open`` removes the decision."""
MAX_ROWS = 500
"""Rows sent to the browser at a time; the header says how many more match."""
CATEGORY_ORDER = {"safety": 0, "success": 1, "answer": 2, "trace": 3, "budget": 4}


class FailureTable(anywidget.AnyWidget):
    """The table's front end: rows, filters and sort are synced; a click sets ``selected``; triage edits arrive as
    messages (``{"action": "triage", ...}``) and their outcome is ``message``."""

    _esm = bundled("failures.js")
    _css = widget_css("failures.css")
    banner = traitlets.Unicode(SYNTHETIC_BANNER).tag(sync=True)
    rows: traitlets.List[dict] = traitlets.List().tag(sync=True)
    """The rows shown: those matching ``filters``, sorted, at most ``MAX_ROWS``."""
    matching = traitlets.Int(0).tag(sync=True)
    total = traitlets.Int(0).tag(sync=True)
    options = traitlets.Dict().tag(sync=True)
    """Filter name -> the values present in the run."""
    filters = traitlets.Dict().tag(sync=True)
    """Filter name -> the value a row must have; a missing or empty one matches every row."""
    sort = traitlets.List(["critical", "desc"]).tag(sync=True)
    selected = traitlets.Int(None, allow_none=True).tag(sync=True)
    """The trial id opened in the player."""
    beside = traitlets.Dict().tag(sync=True)
    """The passing trial the player shows beside the opened one (``{"trial_id": ..., "trial": ...}``), or empty."""
    verdicts: traitlets.List[dict] = traitlets.List().tag(sync=True)
    """The opened trial's failing verdicts, each with its triage decision."""
    triage_file = traitlets.Unicode("").tag(sync=True)
    """Where triage is saved ("" : read-only)."""
    reviewer = traitlets.Unicode("").tag(sync=True)
    message = traitlets.Dict().tag(sync=True)
    """The outcome of the last triage edit: ``{"kind": "saved" | "error", "text": ...}``."""


def verifier_list(row: dict) -> list[dict]:
    """A ledger row's failing verdicts, hard before soft and safety first."""
    columns = (row[f"failed_{x}"].split(",") for x in ("verifiers", "categories", "severities"))
    ordered = sorted((s != "hard", CATEGORY_ORDER.get(c, 9), i, c, s) for i, c, s in zip(*columns))
    return [{"id": i, "category": c, "severity": s} for _, _, i, c, s in ordered]


def row_json(row: dict, passes: dict[tuple[str, str], Any]) -> dict:
    """One failed trial as the table shows it; ``passes``: ``task_passes`` rows by (task, agent)."""
    counts = passes[row["task_id"], row["agent"]]
    return {
        "trial_id": int(row["trial_id"]),
        "suite": row["suite"],
        "dimension": row["dimension"],
        "task_id": row["task_id"],
        "task_version": row["task_version"],
        "risk": row["risk"],
        "agent": row["agent"],
        "trial": int(row["trial"]),
        "status": row["status"],
        "failing": verifier_list(row),
        "error_class": row["taxonomy"],
        "triage": row["fix_status"],
        "critical": bool(row["critical"]),
        "passed": int(counts.passed),
        "trials": int(counts.trials),
        "passes": f"{counts.passed} of {counts.trials}",
        "stability": UNSTABLE if counts.unstable else NEVER_PASSED,
        "passing_trial_id": int(counts.passed_trial_id) if counts.unstable else None,
    }


def write_triage(path: Path, decisions: list[dict]) -> TriageFile:
    """Write the decisions to ``path`` only if the file reads back as a valid triage file; else a SpecError naming
    the field, and the file as it was."""
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(yaml.safe_dump({"decisions": decisions}, allow_unicode=True, sort_keys=False), encoding="utf-8")
    try:
        checked = load_triage(partial)
    except SpecError as exc:
        partial.unlink()
        raise SpecError(path, exc.field, exc.message) from None
    os.replace(partial, path)
    return checked


class FailureBrowser(ipywidgets.VBox):
    """A run's failed trials (``rows``), filterable by suite, dimension, agent, verifier, error class and triage
    status, from the table or with ``filter(...)``; ``play(trial_id)`` (or a click) plays one below the table.

    ``triage``: the triage YAML file edits are saved to (created on the first save); without it the table is
    read-only. ``reviewer``: the name saved with each decision.
    """

    def __init__(
        self, run: Run | str | Path, triage: str | Path | None = None, *, reviewer: str = "", **filters: str | None
    ):
        self.run = run if isinstance(run, Run) else open_run(run)
        self._readers = {threading.get_ident(): self.run}
        self.triage_path = Path(triage) if triage is not None else None
        self.triage = load_triage(self.triage_path) if self.triage_path and self.triage_path.exists() else TriageFile()
        self.player: ReplayPlayer | None = None
        self._playing: int | None = None
        """The failed trial the player shows."""
        self._reasons: dict[str, str] = {}
        """The opened trial's verdict reasons, by verifier id."""
        self._failed: list[dict] = []
        """The failure ledger's rows, with each task's dimension."""
        self._frame: pd.DataFrame | None = None
        """Those rows as a table, made when ``frame`` is first read."""
        self.table = FailureTable(triage_file=str(self.triage_path or ""), reviewer=reviewer)
        super().__init__(children=[self.table])
        self._load()
        self.table.options = {name: sorted(set(self._values(name))) for name in FILTERS}
        self.table.observe(lambda _: self._show(), names=["filters", "sort"])
        self.filter(**filters)
        self.table.observe(self._clicked, names="selected")
        self.table.on_msg(self._message)

    # ---- the table -----------------------------------------------------------------------------------------------

    @property
    def frame(self) -> pd.DataFrame:
        """Every failed trial of the run (the failure ledger's columns, plus ``dimension``)."""
        if self._frame is None:
            self._frame = ledger_table(self._failed, dimension="str")
        return self._frame

    @property
    def rows(self) -> list[dict]:
        """The rows the table shows (filtered and sorted)."""
        return self.table.rows

    def filter(self, **filters: str | None) -> None:
        """Show only the failures with these values (``suite``, ``dimension``, ``agent``, ``verifier``,
        ``error_class``, ``triage``); None or "" clears one. Filters not named stay as they are."""
        unknown = sorted(set(filters) - set(FILTERS))
        if unknown:
            raise UsageError("FailureBrowser", unknown[0], f"no such filter; filters: {', '.join(FILTERS)}")
        merged = {**self.table.filters, **filters}
        self.table.filters = {k: v for k, v in merged.items() if v}

    def _values(self, name: str) -> list[str]:
        if name == "verifier":
            return [v["id"] for row in self._rows for v in row["failing"]]
        return [row[name] for row in self._rows]

    def _reader(self) -> Run:
        """The run, opened for the calling thread: JupyterLab sends widget messages on a kernel subshell (a thread
        of its own), and a SQLite connection serves only the thread that opened it."""
        thread = threading.get_ident()
        if thread not in self._readers:
            self._readers[thread] = open_run(self.run.path)
        return self._readers[thread]

    def _load(self) -> None:
        run = self._reader()
        with collection_paused():
            self._failed, self._frame = failure_rows(run, self.triage), None
            passes = {(r.task_id, r.agent): r for r in rows_of(task_passes(run))}
            self._rows = [row_json(r, passes) for r in self._failed]
        self.table.total = len(self._rows)
        self._show()

    def _matches(self, row: dict) -> bool:
        for name, value in self.table.filters.items():
            if name == "verifier":
                if value not in {v["id"] for v in row["failing"]}:
                    return False
            elif str(row[name]) != str(value):
                return False
        return True

    def _show(self) -> None:
        column, direction = [*self.table.sort, "asc"][:2]
        if column not in SORTS:
            column = "critical"
        shown = sorted((r for r in self._rows if self._matches(r)), key=lambda r: [r[k] for k in TIEBREAK])
        key = {
            "verifiers": lambda r: ",".join(v["id"] for v in r["failing"]),
            "passes": lambda r: (r["passed"] / r["trials"], r["trials"]),
        }.get(column, lambda r: r[column])
        shown.sort(key=key, reverse=direction == "desc")
        with self.table.hold_sync():
            self.table.matching = len(shown)
            self.table.rows = shown[:MAX_ROWS]
            self._show_verdicts()

    # ---- the player ----------------------------------------------------------------------------------------------

    def play(self, trial_id: int | None, beside_passing: bool = True) -> ReplayPlayer | None:
        """Play a failed trial in the player below the table (None closes it); the player. A trial of an unstable
        task plays beside a passing trial of the same task and agent, aligned by step (unless not
        ``beside_passing``)."""
        if trial_id is None:
            self.children = [self.table]
            self._playing = None
            self.table.selected = None
            self.table.beside = {}
            self._show_verdicts()
            return None
        row = self._row(trial_id)
        reader = self._reader()
        trial = reader.trial_by_id(row["trial_id"])
        passing = row["passing_trial_id"]
        other = reader.trial_by_id(passing) if beside_passing and passing is not None else None
        if self.player is None:
            self.player = play(trial, other)
        else:
            self.player.show(trial, other)
        self._reasons = {v.verifier_id: v.reason for v in trial.grading.verdicts}
        self.table.beside = {} if other is None else {"trial_id": passing, "trial": other.trial}
        self._playing = row["trial_id"]
        self.table.selected = row["trial_id"]
        self.table.message = {}
        self.children = [self.table, self.player]
        self._show_verdicts()
        return self.player

    def _clicked(self, change: dict) -> None:
        """A row clicked in the table: play it, or say in the table why it cannot be."""
        if change["new"] == self._playing:
            return  # set by play() itself
        try:
            self.play(change["new"])
        except Exception as exc:  # shown where the click was made, not lost in the kernel's log
            self.table.message = {"kind": "error", "text": f"{type(exc).__name__}: {exc}"}

    def _row(self, trial_id: int) -> dict:
        for row in self._rows:
            if row["trial_id"] == trial_id:
                return row
        raise UsageError(f"run {self.run.run_id}", "trial_id", f"{trial_id} is no failed trial of this run")

    # ---- triage ---------------------------------------------------------------------------------------------------

    def _show_verdicts(self) -> None:
        if self.table.selected is None:
            self.table.verdicts = []
            return
        row = self._row(self.table.selected)
        shown = []
        for v in row["failing"]:
            decision = self.triage.lookup(row["task_id"], row["task_version"], row["agent"], v["id"])
            shown.append(
                {
                    **v,
                    "reason": self._reasons.get(v["id"], ""),
                    "decision": decision.decision if decision else "open",
                    "comment": decision.comment if decision else "",
                    "reviewer": decision.reviewer if decision else "",
                    "every_agent": bool(decision and decision.agent is None),
                }
            )
        self.table.verdicts = shown

    def save_triage(
        self,
        trial_id: int,
        verifier: str,
        decision: str,
        comment: str = "",
        reviewer: str | None = None,
        every_agent: bool = False,
    ) -> TriageFile:
        """Record a reviewer's decision on one failing verifier of a failed trial, for its task version and agent
        (``every_agent``: for every agent), in the triage file; ``open`` removes it. The file is written only if it
        then reads back as valid; otherwise a SpecError ``file: field: message`` and nothing changes."""
        if self.triage_path is None:
            raise UsageError("FailureBrowser", "triage", "no triage file to save to: FailureBrowser(run, triage=PATH)")
        row = self._row(trial_id)
        if verifier not in {v["id"] for v in row["failing"]}:
            raise UsageError(f"trial {trial_id}", "verifier", f"{verifier} did not fail in this trial")
        key = (row["task_id"], row["task_version"], None if every_agent else row["agent"], verifier)
        current = load_triage(self.triage_path) if self.triage_path.exists() else TriageFile()
        decisions = [d.model_dump(exclude_none=True) for d in current.decisions if d.key != key]
        if decision != "open":
            reviewer = self.table.reviewer if reviewer is None else reviewer
            for field, said, ask in (("comment", comment, "write why"), ("reviewer", reviewer, "write your name")):
                if not said.strip():
                    raise UsageError(f"{verifier} {decision}", field, f"{ask}: a triage decision is kept with it")
            decisions.append(
                {
                    "task_id": key[0],
                    "task_version": key[1],
                    **({} if every_agent else {"agent": key[2]}),
                    "verifier_id": verifier,
                    "decision": decision,
                    "reviewer": reviewer,
                    "comment": comment,
                }
            )
        self.triage = write_triage(self.triage_path, decisions)
        self._load()
        return self.triage

    def _message(self, _widget: Any, content: dict, _buffers: Any) -> None:
        """A triage edit from the table: saved, or its one-line error shown there; or the passing trial put beside
        the opened one, or taken away."""
        if content.get("action") == "beside" and self._playing is not None:
            self.play(self._playing, beside_passing=bool(content.get("on")))
        if content.get("action") != "triage":
            return
        try:
            self.save_triage(
                int(content["trial_id"]),
                str(content["verifier"]),
                str(content["decision"]),
                str(content.get("comment", "")),
                str(content.get("reviewer", "")),
                bool(content.get("every_agent")),
            )
        except (SpecError, UsageError) as exc:
            self.table.message = {"kind": "error", "text": str(exc), "verifier": content.get("verifier")}
        else:
            self.table.message = {
                "kind": "saved",
                "verifier": content["verifier"],
                "text": f"saved to {self.triage_path.name if self.triage_path else ''}: "
                f"{content['verifier']} "
                f"{content['decision']}",
            }
