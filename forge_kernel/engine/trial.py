"""One trial: a fresh EHR view and tool session owned by the harness, the agent's attempt, then grading."""
from __future__ import annotations

from dataclasses import dataclass

from ..agents import Agent, AgentTask
from ..ehr import EHRImage, EHRView
from ..spec import Package
from ..store import TrialRecord
from ..tools import ToolSession
from ..verify import GradeContext, grade
from ..workers import BUDGET_EXCEEDED, AgentOutcome, InProcess, Runner


REDOS = 3
"""How often a trial spoiled by another (isolated agents sharing a worker) is run again."""


class Images:
    """Each package's initial EHR image, built once and shared by its trials."""

    def __init__(self):
        self._images: dict[str, EHRImage] = {}

    def __getitem__(self, package: Package) -> EHRImage:
        image = self._images.get(package.public_hash)
        if image is None:
            image = self._images[package.public_hash] = EHRImage(package.resources, package.public.environment.now)
        return image


def task_template(package: Package) -> AgentTask:
    """The package's AgentTask (seed 0), built once per package and run: each trial gets a copy with its seed."""
    return AgentTask.from_package(package.public, 0)


@dataclass
class Attempted:
    """A trial whose agent has returned: everything grading needs, and nothing graded yet."""

    package: Package
    runner: Runner
    trial: int
    seed: int
    view: EHRView
    session: ToolSession
    outcome: AgentOutcome

    def graded(self) -> TrialRecord:
        """Grade the trial (this is when the hidden half is first needed) and make its record."""
        status, reason, session, outcome = self.outcome.status, self.outcome.reason, self.session, self.outcome
        if session.exceeded and status != BUDGET_EXCEEDED:  # even if the agent caught BudgetExceeded and went on
            status, reason = BUDGET_EXCEEDED, session.exceeded
        ctx = GradeContext(self.package, self.view, session.events, outcome.result, status, outcome.duration_s,
                           session.cost)
        return TrialRecord(self.package.id, self.runner.name, self.runner.version, self.trial, self.seed, status,
                           reason, outcome.result, session.events, outcome.duration_s, session.cost, grade(ctx),
                           outcome.queued_s)


async def attempt_trial(package: Package, image: EHRImage, agent: Runner | Agent, trial: int, seed: int,
                        task: AgentTask | None = None) -> Attempted:
    """Run one agent once on one package, ungraded; a crash, hang or budget breach ends only this trial.

    ``agent`` is a Runner (in process or isolated) or a plain Agent, run in process; ``task`` is the package's
    ``task_template``, when the caller has it already.
    """
    runner = agent if hasattr(agent, "attempt") else InProcess(agent)
    task, budget = task or task_template(package), package.public.budget
    for _ in range(REDOS + 1):  # a fresh view and session each time: a spoiled attempt leaves no trace
        view = EHRView(image)
        session = ToolSession(package.public, view)
        outcome = await runner.attempt(task, seed, session, budget.max_seconds)
        if not outcome.redo:
            break
    return Attempted(package, runner, trial, seed, view, session, outcome)


async def run_trial(package: Package, image: EHRImage, agent: Runner | Agent, trial: int, seed: int,
                    task: AgentTask | None = None) -> TrialRecord:
    """Run one agent once on one package and grade the trial (see ``attempt_trial``)."""
    return (await attempt_trial(package, image, agent, trial, seed, task)).graded()
