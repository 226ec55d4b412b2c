"""One trial: a fresh EHR view and tool session owned by the harness, the agent's attempt, then grading."""
from __future__ import annotations

from ..agents import Agent, AgentTask
from ..ehr import EHRImage, EHRView
from ..spec import Package
from ..store import TrialRecord
from ..tools import ToolSession
from ..verify import GradeContext, grade
from ..workers import BUDGET_EXCEEDED, InProcess, Runner


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


async def run_trial(package: Package, image: EHRImage, agent: Runner | Agent, trial: int, seed: int,
                    task: AgentTask | None = None) -> TrialRecord:
    """Run one agent once on one package; a crash, hang or budget breach ends only this trial.

    ``agent`` is a Runner (in process or isolated) or a plain Agent, run in process; ``task`` is the package's
    ``task_template``, when the caller has it already.
    """
    runner = agent if hasattr(agent, "attempt") else InProcess(agent)
    view = EHRView(image)
    session = ToolSession(package.public, view)
    budget = package.public.budget
    outcome = await runner.attempt(task or task_template(package), seed, session, budget.max_seconds)
    status, reason = outcome.status, outcome.reason
    if session.exceeded and status != BUDGET_EXCEEDED:  # even if the agent caught BudgetExceeded and went on
        status, reason = BUDGET_EXCEEDED, session.exceeded
    ctx = GradeContext(package, view, session.events, outcome.result, status, outcome.duration_s, session.cost)
    return TrialRecord(package.id, runner.name, runner.version, trial, seed, status, reason, outcome.result,
                       session.events, outcome.duration_s, session.cost, grade(ctx), outcome.queued_s)
