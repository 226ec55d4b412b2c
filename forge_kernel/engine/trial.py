"""One trial: a fresh EHR view and tool session owned by the harness, the agent's attempt, then grading."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, cast

from ..agents import Agent, AgentTask
from ..ehr import EHRImage, EHRView
from ..spec import Event, Grading, Package
from ..store import TrialRecord, Ungraded
from ..tools import ToolSession
from ..verify import GradeContext, grade
from ..workers import BUDGET_EXCEEDED, AgentOutcome, InProcess, Runner

REDOS = 3
"""How often a trial spoiled by another (isolated agents sharing a worker) is run again."""


def acted(events: list[Event]) -> bool:
    """Whether a trial did what its record must keep whatever spoiled the rest: a write made, a call denied."""
    return any(e.denied or (e.kind == "write" and e.ok) for e in events)


class Images:
    """Each package's initial EHR image, built once and shared by its trials (a shared image's records by every
    package that names it)."""

    def __init__(self) -> None:
        self._images: dict[str, EHRImage] = {}

    def __getitem__(self, package: Package) -> EHRImage:
        image = self._images.get(package.public_hash)
        if image is None:
            image = self._images[package.public_hash] = initial_image(package)
        return image


def initial_image(package: Package) -> EHRImage:
    """A package's initial EHR: its own resources over its shared image's, whose indexes are built once."""
    return EHRImage(package.resources, package.public.environment.now, package.image)


def task_template(package: Package) -> AgentTask:
    """The package's AgentTask (seed 0), built once per package and run: each trial gets a copy with its seed."""
    return AgentTask.from_package(package.public, 0)


def grading_of(trial: Ungraded, package: Package, view: EHRView, judge: bool = False) -> Grading:
    """Grade a trial on its final EHR state (this is when the hidden half is first needed); with ``judge``, the
    rubric verdicts too (``verify.grade``)."""
    ctx = GradeContext(package, view, trial.events, trial.result, trial.status, trial.duration_s, trial.cost)
    return grade(ctx, judge)


def graded(trial: Ungraded, package: Package, view: EHRView, judge: bool = False) -> TrialRecord:
    """The trial's record, graded (``grading_of``)."""
    return TrialRecord(**vars(trial), grading=grading_of(trial, package, view, judge))


def replayed(image: EHRImage, events: list[Event]) -> EHRView:
    """A fresh view of the image with the trial's recorded writes made again: its final EHR state."""
    view = EHRView(image)
    view.replay([(e.step, op) for e in events for op in e.changes])
    return view


class Named(Protocol):
    """The agent as a trial's record names it: a Runner, or the client of a served trial."""

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...


@dataclass
class Attempted:
    """A trial whose agent has returned, with its live view and session."""

    package: Package
    runner: Named
    trial: int
    seed: int
    view: EHRView
    session: ToolSession
    outcome: AgentOutcome
    attempts: int
    """How often the agent was run (see ``Ungraded.attempts``)."""

    def ungraded(self) -> Ungraded:
        status, reason, session, outcome = self.outcome.status, self.outcome.reason, self.session, self.outcome
        if session.exceeded and status != BUDGET_EXCEEDED:  # even if the agent caught BudgetExceeded and went on
            status, reason = BUDGET_EXCEEDED, session.exceeded
        return Ungraded(
            self.package.id,
            self.runner.name,
            self.runner.version,
            self.trial,
            self.seed,
            status,
            reason,
            outcome.result,
            session.events,
            outcome.duration_s,
            session.cost,
            outcome.queued_s,
            turns=session.turns,
            attempts=self.attempts,
        )

    def graded(self, judge: bool = False) -> TrialRecord:
        """Grade the trial on its live view and make its record."""
        return graded(self.ungraded(), self.package, self.view, judge)


async def attempt_trial(
    package: Package, image: EHRImage, agent: Runner | Agent, trial: int, seed: int, task: AgentTask | None = None
) -> Attempted:
    """Run one agent once on one package, ungraded; a crash, hang or budget breach ends only this trial.

    ``agent`` is a Runner (in process or isolated) or a plain Agent, run in process; ``task`` is the package's
    ``task_template``, when the caller has it already.
    """
    runner = cast("Runner", agent) if hasattr(agent, "attempt") else InProcess(agent)
    task, budget = task or task_template(package), package.public.budget
    session: ToolSession | None = (
        None  # each attempt gets a fresh view and session: a spoiled one leaves its calls and cost, and a count
    )
    for attempts in range(1, REDOS + 2):  # noqa: B007  (the count is read after the loop)
        view = EHRView(image)
        session = ToolSession(package.public, view, earlier=session)  # counted against the next one's budgets
        outcome = await runner.attempt(task, seed, session, budget.max_seconds)
        if not outcome.redo or acted(session.events):  # else stalling its own loop would wipe what it did
            break
    assert session is not None  # the loop ran once at least
    return Attempted(package, runner, trial, seed, view, session, outcome, attempts)


async def run_trial(
    package: Package,
    image: EHRImage,
    agent: Runner | Agent,
    trial: int,
    seed: int,
    task: AgentTask | None = None,
    judge: bool = False,
) -> TrialRecord:
    """Run one agent once on one package and grade the trial (see ``attempt_trial``; ``judge``: ``grading_of``)."""
    return (await attempt_trial(package, image, agent, trial, seed, task)).graded(judge)
