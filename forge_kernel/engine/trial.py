"""One trial: fresh EHR view and tool session, the agent under its budget, then grading."""
from __future__ import annotations

import asyncio
from time import perf_counter

from ..agents import Agent, AgentTask
from ..ehr import EHRImage, EHRView
from ..spec import AgentResult, Package
from ..store import TrialRecord
from ..tools import ToolSession
from ..verify import GradeContext, grade


class Images:
    """Each package's initial EHR image, built once and shared by its trials."""

    def __init__(self):
        self._images: dict[str, EHRImage] = {}

    def __getitem__(self, package: Package) -> EHRImage:
        image = self._images.get(package.public_hash)
        if image is None:
            image = self._images[package.public_hash] = EHRImage(package.resources, package.public.environment.now)
        return image


async def run_trial(package: Package, image: EHRImage, agent: Agent, trial: int, seed: int) -> TrialRecord:
    """Run one agent once on one package; a crash, hang or budget breach ends only this trial."""
    view = EHRView(image)
    session = ToolSession(package.public, view)
    task = AgentTask.from_package(package.public, seed)
    status, reason, result = "completed", None, None
    started = perf_counter()
    try:
        result = await asyncio.wait_for(agent.run(task, session), package.public.budget.max_seconds)
    except TimeoutError:
        status, reason = "timeout", f"no result within {package.public.budget.max_seconds} s"
    except Exception as exc:  # an agent's bug must not end the run
        status, reason = "agent_error", f"{type(exc).__name__}: {exc}"
    duration = perf_counter() - started
    if session.exceeded:  # BudgetExceeded, even if the agent caught it and went on
        status, reason = "budget_exceeded", session.exceeded
    if not isinstance(result, AgentResult):
        if status == "completed":
            status, reason = "agent_error", f"returned {type(result).__name__}, not AgentResult"
        result = AgentResult(status="error")
    ctx = GradeContext(package, view, session.events, result, status, duration, session.cost)
    return TrialRecord(package.id, agent.name, agent.version, trial, seed, status, reason, result,
                       session.events, duration, session.cost, grade(ctx))
