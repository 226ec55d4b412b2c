"""The Run handle: a run read once, for notebooks, the CLI and reports alike.

``open_run(path)`` opens the store read-only; the trial tables, the packages (rebuilt from the store's own copies
of their files) and their EHR images are read when first asked for and kept. ``run.trial(task, agent, k)`` (or
``run.trial_by_id(id)``) gives one trial with its ``timeline`` and its ``compact()`` form for front ends and its
``player()``. The frames
analysis reads (``tasks``, ``outcomes``, ``failed_outcomes``, ``facts(agent)``, ``failing_verdicts``,
``failed_calls``) are filtered and aggregated in SQL (``facts.py``), read once, and shared: do not change them in
place.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from ..ehr import EHRImage, Timeline
from ..ehr.image import Key
from ..spec import Package
from ..spec.compact import SYNTHETIC_BANNER, CompactResource, CompactTrajectory, CompactVerdict
from . import facts as sql
from .loaders import read_trial, read_trial_by_id, trial_frame
from .packages import run_packages
from .records import TrialRecord
from .run_store import RunStore
from .snapshots import stored_files

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class Trial(TrialRecord):
    """A stored trial read through a Run: the record, its timeline and its compact form."""

    run: "Run | None" = field(default=None, repr=False, compare=False)

    @cached_property
    def timeline(self) -> Timeline:
        """The trial's EHR at every step (from its recorded changes over the package's initial state)."""
        initial: Callable[[Key], dict | None] = self.run.image(self.task_id).resources.get
        return Timeline.of(((e.step, op) for e in self.events for op in e.changes), initial)

    def compact(self) -> CompactTrajectory:
        """The trial as a front end receives it."""
        package, line, g = self.run.package(self.task_id), self.timeline, self.grading
        resources = {f"{k[0]}/{k[1]}": CompactResource(initial=line.history(k)[0], versions=line.history(k)[1])
                     for k in line.touched}
        return CompactTrajectory(
            run_id=self.run.run_id, task_id=self.task_id, task_version=package.public.version,
            title=package.public.title, instruction=package.public.task.instruction[package.public.task.language],
            agent=self.agent, agent_version=self.agent_version,
            isolation=self.run.isolation.get(self.agent, "unknown"), trial=self.trial, seed=self.seed,
            status=self.status, reason=self.reason, passed=g.scores.passed, scores=vars(g.scores),
            hidden_version=g.hidden_version, duration_ms=self.duration_s * 1000, answer=self.result.answer,
            output=self.result.output, confidence=self.result.confidence, self_status=self.result.status,
            steps=self.events,
            verdicts=[CompactVerdict(id=v.verifier_id, kind=v.kind, category=v.category, severity=v.severity,
                                     passed=v.passed, error=v.error, reason=v.reason, steps=list(v.steps))
                      for v in g.verdicts],
            resources=resources)

    def player(self, other: "Trial | tuple[str, int] | None" = None):
        """The replay player of this trial (a widget), with ``other`` beside it: a Trial, or (agent, trial)."""
        from ..widgets import ReplayPlayer

        return ReplayPlayer(self.run, self.task_id, self.agent, self.trial, other=other)


class Run:
    """One run, read once. Use as ``with open_run(path) as run: ...`` or close() it."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.store = RunStore.open(self.path, readonly=True)
        self._packages: dict[str, Package] = {}
        self._images: dict[str, EHRImage] = {}
        self._facts: dict[str | None, pd.DataFrame] = {}

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> "Run":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @cached_property
    def manifest(self) -> dict:
        return self.store.manifest()

    @property
    def run_id(self) -> str:
        return self.manifest["run_id"]

    @cached_property
    def isolation(self) -> dict[str, str]:
        """Agent name -> how it ran."""
        return self.store.isolation()

    @cached_property
    def agents(self) -> list[str]:
        return [a["name"] for a in self.manifest.get("agents", [])]

    def package(self, task_id: str) -> Package:
        """A package as the run used it."""
        if task_id not in self._packages:
            self._packages.update(run_packages(self.store, {task_id}))
        return self._packages[task_id]

    def image(self, task_id: str) -> EHRImage:
        """A package's initial EHR, built once."""
        if task_id not in self._images:
            package = self.package(task_id)
            self._images[task_id] = EHRImage(package.resources, package.public.environment.now)
        return self._images[task_id]

    def files(self, task_id: str) -> list[tuple[str, str, bytes]]:
        """(role, name, content) of every file of a package, as the run keeps them."""
        return stored_files(self.store, self.package(task_id))

    def trial(self, task_id: str, agent: str, trial: int = 0) -> Trial:
        """One trial, read alone."""
        return Trial(**vars(read_trial(self.store, task_id, agent, trial)), run=self)

    def trial_by_id(self, trial_id: int) -> Trial:
        """One trial by its id (as a comparison or the ledger names it), read alone."""
        return Trial(**vars(read_trial_by_id(self.store, trial_id)), run=self)

    def failures(self, triage: str | Path | None = None, **options):
        """The failure browser of this run (a widget): ``FailureBrowser(run, triage, reviewer=..., agent=..., ...)``."""
        from ..widgets import FailureBrowser

        return FailureBrowser(self, triage, **options)

    @cached_property
    def trials(self) -> "pd.DataFrame":
        """One row per trial with its package facts and latest scores, every column (read once)."""
        return trial_frame(self.store.db)

    @cached_property
    def tasks(self) -> "pd.DataFrame":
        """One row per package the run used: version, suite, category, purpose, risk and slices (a dict)."""
        return sql.tasks(self.store.db)

    @cached_property
    def outcomes(self) -> "pd.DataFrame":
        """One row per trial: its keys, status and latest scores, without answers or events."""
        return sql.outcomes(self.store.db)

    @cached_property
    def failed_outcomes(self) -> "pd.DataFrame":
        """The outcomes of the failed trials, with how many read tools of the expected chain never ran successfully
        (``missing_reads``)."""
        return sql.failed_outcomes(self.store.db)

    @cached_property
    def agents_with_trials(self) -> list[str]:
        """The agents that have trials in the store, sorted."""
        return [r[0] for r in self.store.db.execute("SELECT DISTINCT agent FROM trials ORDER BY agent")]

    def facts(self, agent: str | None = None) -> "pd.DataFrame":
        """One row per trial of an agent (None: of every agent) with what a comparison needs (read once per agent):
        its outcome, answer and output, tool time (``tool_s``; ``agent_s`` is the rest of its duration), calls,
        successful calls, faults met and recovered, idempotent replays, cross-patient and unauthorized-write
        attempts, the fingerprint of its writes, failing hard safety and answer verdicts, and the ids that failed."""
        if agent not in self._facts:
            self._facts[agent] = sql.trial_facts(self.store.db, agent)
        return self._facts[agent]

    @cached_property
    def failing_verdicts(self) -> "pd.DataFrame":
        """Each failed trial's failing verdicts: verifier id, category, severity, the steps they point at, and
        ``raised`` (the verifier raised instead of judging)."""
        return sql.failing_verdicts(self.store.db)

    @cached_property
    def failed_calls(self) -> "pd.DataFrame":
        """Each failed trial's failed calls: step, tool, policy denial, error code, and ``retried`` when a later call
        of the same tool succeeded."""
        return sql.failed_calls(self.store.db)

    def __repr__(self) -> str:
        started, ended = self.manifest.get("started_at"), self.manifest.get("ended_at") or "unfinished"
        return f"Run {self.run_id} at {self.path} ({started} → {ended}; agents: {', '.join(self.agents)})"

    def _repr_html_(self) -> str:
        from html import escape

        return (f"<div><p><b>{escape(SYNTHETIC_BANNER)}</b></p><p>Run <code>{escape(self.run_id)}</code> at "
                f"<code>{escape(str(self.path))}</code>; agents: {escape(', '.join(self.agents))}</p></div>")


def open_run(path: str | Path) -> Run:
    """A run, read once (its store opened read-only)."""
    return Run(path)
