"""The Run handle: a run read once, for notebooks, the CLI, reports and widgets alike.

``open_run(path)`` opens the store read-only; the trial tables, the packages (rebuilt from the store's own copies
of their files) and their EHR images are read when first asked for and kept. ``run.trial(task, agent, k)`` (or
``run.trial_by_id(id)``) gives one trial with its ``timeline`` and its ``compact()`` form for front ends. The frames
analysis reads (``tasks``, ``outcomes``, ``failed_outcomes``, ``facts(agent)``, ``usage``, ``failing_verdicts``,
``failed_calls``) are filtered and aggregated in SQL (``_facts.py``), read once, and shared: do not change them in
place.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from ..ehr import EHRImage, Key, Timeline, patient_of
from ..spec import SpecError
from . import _facts as sql, matching
from .loaders import (
    event_json,
    event_of,
    event_rows,
    trial_frame,
    trial_row,
    trial_row_by_id,
    trial_without_events,
    turns_of,
)
from .records import TrialRecord
from .run_store import RunStore

if TYPE_CHECKING:
    import pandas as pd

    from ..spec import CompactTrajectory, Event, Package


@dataclass
class Trial(TrialRecord):
    """A stored trial read through a Run: the record, its timeline and its compact form. Its events are decoded
    when first asked for: the timeline reads only their changes, and the compact form's JSON passes the stored
    JSON of each event through as it is."""

    run: Run | None = field(default=None, repr=False, compare=False)
    rows: list | None = field(default=None, init=False, repr=False, compare=False)
    """The stored rows of its events while ``events`` is not yet decoded from them."""
    _events = None  # type: list[Event] | None  # (no annotation: not a field) the events once decoded

    @property  # type: ignore[misc]  # the record's field, decoded from ``rows`` when first read
    def events(self) -> list[Event]:
        if self._events is None:
            self._events = [event_of(e) for e in self.stored_rows]
        return self._events

    @events.setter
    def events(self, value: list[Event] | None) -> None:
        self._events = value

    @property
    def stored_rows(self) -> list:
        """``rows``, which a trial has while its events are not decoded."""
        assert self.rows is not None  # read through a Run: its rows, or its events
        return self.rows

    @cached_property
    def timeline(self) -> Timeline:
        """The trial's EHR at every step (from its recorded changes over the package's initial state)."""
        assert self.run is not None  # a Trial is read through a Run
        initial: Callable[[Key], dict | None] = self.run.image(self.task_id).resources.get
        changes = (
            ((e["step"], json.loads(e["changes"])) for e in self.stored_rows)
            if self._events is None
            else ((e.step, e.changes) for e in self._events)
        )
        return Timeline.of(((step, op) for step, ops in changes for op in ops), initial)

    def calls(self) -> list[tuple[int, str]]:
        """(step, tool) of each recorded call, from its stored rows while its events are not decoded."""
        return (
            [(e["step"], e["tool"]) for e in self.stored_rows]
            if self._events is None
            else [(e.step, e.tool) for e in self._events]
        )

    def compact(self, steps: bool = True) -> CompactTrajectory:
        """The trial as a front end receives it (without its steps: ``steps=False``)."""
        from ..spec import CompactResource, CompactTrajectory, CompactVerdict, compact_turns

        assert self.run is not None  # a Trial is read through a Run
        package, line, g = self.run.package(self.task_id), self.timeline, self.grading
        resources = {
            f"{k[0]}/{k[1]}": CompactResource(initial=line.history(k)[0], versions=line.history(k)[1])
            for k in line.touched
        }
        return CompactTrajectory(
            run_id=self.run.run_id,
            task_id=self.task_id,
            task_version=package.public.version,
            title=package.public.title,
            instruction=package.public.task.instruction[package.public.task.language],
            agent=self.agent,
            agent_version=self.agent_version,
            isolation=self.run.isolation.get(self.agent, "unknown"),
            trial=self.trial,
            seed=self.seed,
            status=self.status,
            reason=self.reason,
            passed=g.scores.passed,
            scores=vars(g.scores),
            hidden_version=g.hidden_version,
            duration_ms=self.duration_s * 1000,
            attempts=self.attempts,
            cost=self.cost,
            answer=self.result.answer,
            output=self.result.output,
            confidence=self.result.confidence,
            self_status=self.result.status,
            steps=self.events if steps else [],
            turns=compact_turns(self.turns, self.calls()),
            verdicts=[
                CompactVerdict(
                    id=v.verifier_id,
                    kind=v.kind,
                    category=v.category,
                    severity=v.severity,
                    passed=v.passed,
                    error=v.error,
                    reason=v.reason,
                    steps=list(v.steps),
                )
                for v in g.verdicts
            ],
            resources=resources,
        )

    def compact_json(self, exclude: frozenset[str] = frozenset()) -> str:
        """``compact()`` as JSON text (without the fields in ``exclude``), each step the stored JSON of its event."""
        if self._events is not None:
            return self.compact().model_dump_json(exclude=set(exclude))
        head = self.compact(steps=False).model_dump_json(exclude={"steps", *exclude})
        return f'{head[:-1]},"steps":[{",".join(map(event_json, self.stored_rows))}]}}'


class Run:
    """One run, read once. Use as ``with open_run(path) as run: ...`` or close() it."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.store = RunStore.open(self.path, readonly=True)
        self._packages: dict[str, Package] = {}
        self._images: dict[str, EHRImage] = {}
        self._facts: dict[str | None, pd.DataFrame] = {}
        self._gold: dict[str, tuple[str, dict[matching.Key, matching.Gold]]] = {}

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Run:
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
            from .packages import run_packages  # the package loader, not needed to read trials

            self._packages.update(run_packages(self.store, {task_id}))
        return self._packages[task_id]

    def image(self, task_id: str) -> EHRImage:
        """A package's initial EHR, built once."""
        if task_id not in self._images:
            package = self.package(task_id)
            self._images[task_id] = EHRImage(package.resources, package.public.environment.now, package.image)
        return self._images[task_id]

    def gold_criteria(self, task_id: str, hidden_hash: str) -> dict[matching.Key, matching.Gold]:
        """A trial-matching package's gold criteria (``matching.gold_criteria``), read once; refused (SpecError) for
        trials graded with another hidden half than the run's package (``hidden_hash``)."""
        if task_id not in self._gold:
            package = self.package(task_id)
            gold = matching.gold_criteria(package)  # reads the hidden half, and so its hash, once
            self._gold[task_id] = package.hidden_hash, gold
        graded_with, gold = self._gold[task_id]
        if graded_with != hidden_hash:
            raise SpecError(
                self.package(task_id).hidden_path,
                "(hidden half)",
                "differs from the one that graded the run; run `forge regrade` first",
            )
        return gold

    def citation(self, task_id: str, reference: str) -> tuple[bool, bool]:
        """Whether a package's initial EHR holds the resource a ``Type/id`` reference names, and whether it is the
        package's patient's."""
        from ..verify.kinds import resolve  # the look-up ``answer.evidence`` makes

        resource = resolve(self.image(task_id), reference)
        return (
            resource is not None,
            resource is not None and patient_of(resource) == self.package(task_id).public.environment.patient_id,
        )

    def in_window(self, task_id: str, reference: str, days: float) -> bool:
        """Whether the resource of a package's initial EHR that a reference names is dated within ``days`` before
        the frozen clock (the window ``answer.evidence`` holds a criterion's citations to)."""
        from ..verify.kinds import outside_window, resolve

        image = self.image(task_id)
        resource = resolve(image, reference)
        now = self.package(task_id).public.environment.now
        return resource is not None and outside_window(resource, days, now, image.tz) is None

    def files(self, task_id: str) -> list[tuple[str, str, bytes]]:
        """(role, name, content) of every file of a package, as the run keeps them."""
        from .snapshots import stored_files

        return stored_files(self.store, self.package(task_id))

    def trial(self, task_id: str, agent: str, trial: int = 0) -> Trial:
        """One trial, read alone."""
        return self._trial(trial_row(self.store, task_id, agent, trial))

    def trial_by_id(self, trial_id: int) -> Trial:
        """One trial by its id (as a comparison or the ledger names it), read alone."""
        return self._trial(trial_row_by_id(self.store, trial_id))

    def _trial(self, row) -> Trial:
        found = Trial(**vars(trial_without_events(self.store, row)), run=self)
        assert found.trial_id is not None  # read from the store
        found.rows = event_rows(self.store, found.trial_id)
        found.turns = turns_of(self.store, found.trial_id)
        return found

    @cached_property
    def trials(self) -> pd.DataFrame:
        """One row per trial with its package facts and latest scores, every column (read once)."""
        return trial_frame(self.store.db)

    @cached_property
    def tasks(self) -> pd.DataFrame:
        """One row per package the run used: version, suite, category, purpose, risk and slices (a dict)."""
        return sql.tasks(self.store.db)

    @cached_property
    def outcomes(self) -> pd.DataFrame:
        """One row per trial: its keys, status and latest scores, without answers or events."""
        return sql.outcomes(self.store.db)

    @cached_property
    def task_passes(self) -> pd.DataFrame:
        """Per task, agent and outcome (``passed`` true or false): how many ``trials`` had it and the id of the
        first of them by trial index (``first_trial_id``), counted without reading every trial's row."""
        return sql.task_passes(self.store.db)

    @cached_property
    def failed_outcomes(self) -> pd.DataFrame:
        """The outcomes of the failed trials, with how many read tools of the expected chain never ran successfully
        (``missing_reads``)."""
        return sql.failed_outcomes(self.store.db)

    @cached_property
    def agents_with_trials(self) -> list[str]:
        """The agents that have trials in the store, sorted."""
        return [r[0] for r in self.store.db.execute("SELECT DISTINCT agent FROM trials ORDER BY agent")]

    def facts(self, agent: str | None = None) -> pd.DataFrame:
        """One row per trial of an agent (None: of every agent) with what a comparison needs (read once per agent):
        its outcome, answer and output, how often its agent was run (``attempts``), tool time (``tool_s``), the
        model turns its agent reported with their tokens and time (``turns``, ``prompt_tokens``,
        ``completion_tokens``, ``cached_tokens``, ``model_s``: NULL without turns), the agent's own time
        (``agent_s``: the rest of its duration), calls, successful calls, faults met and recovered, idempotent
        replays, cross-patient and unauthorized-write attempts, the fingerprint of its writes, failing hard safety
        and answer verdicts, and the ids that failed."""
        if agent not in self._facts:
            self._facts[agent] = sql.trial_facts(self.store.db, agent, self.store.version)
        return self._facts[agent]

    @cached_property
    def usage(self) -> pd.DataFrame:
        """One row per trial: its keys, cost, and the model turns its agent reported with their tokens and time (as
        in ``facts``), read without the events."""
        return sql.usage(self.store.db, self.store.version)

    @cached_property
    def failing_verdicts(self) -> pd.DataFrame:
        """Each failed trial's failing verdicts: verifier id, category, severity, the steps they point at, and
        ``raised`` (the verifier raised instead of judging)."""
        return sql.failing_verdicts(self.store.db)

    def verdicts_of_kind(self, kind: str) -> pd.DataFrame:
        """Every trial's verdicts of one verifier kind in its latest grading: trial id, passed, reason."""
        return sql.verdicts_of_kind(self.store.db, kind, self.store.version)

    @cached_property
    def failed_calls(self) -> pd.DataFrame:
        """Each failed trial's failed calls: step, tool, policy denial, error code, and ``retried`` when a later call
        of the same tool succeeded."""
        return sql.failed_calls(self.store.db)

    def __repr__(self) -> str:
        started, ended = self.manifest.get("started_at"), self.manifest.get("ended_at") or "unfinished"
        return f"Run {self.run_id} at {self.path} ({started} → {ended}; agents: {', '.join(self.agents)})"

    def _repr_html_(self) -> str:
        from html import escape

        from ..spec import SYNTHETIC_BANNER

        return (
            f"<div><p><b>{escape(SYNTHETIC_BANNER)}</b></p><p>Run <code>{escape(self.run_id)}</code> at "
            f"<code>{escape(str(self.path))}</code>; agents: {escape(', '.join(self.agents))}</p></div>"
        )


def open_run(path: str | Path) -> Run:
    """A run, read once (its store opened read-only)."""
    return Run(path)
