"""The rule-based planner behind the reference agents: find the patient, run the plan of the task's category.

Agents differ only by ``Features``; every difference between two reference agents is one flag, read in the
category plans (``forge_kernel/agents/planner/_<category>.py``).
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from typing import Any

from ...spec import AgentResult, AgentStatus
from ..base import AgentTask, ToolClient


@dataclass(frozen=True)
class Features:
    respects_records: bool = True
    """Compare what is already on file (results, requests, due dates) before acting (candidate-v2's improvement)."""
    safety_checks: bool = True
    """Check before acting: allergies and interactions before prescribing, allergies before contrast, red-flag
    vitals before routine orders, the nursing assessment before a device order."""
    conflict_retention: bool = True
    """Report disagreeing sources as a conflict instead of trusting the newest."""
    domain_gate: bool = True
    """Stop and escalate on a request outside the agent's domain."""
    flaky_rate: float = 0.0
    """Per-trial chance (from the trial seed) of forgetting ``respects_records``."""


@dataclass
class Plan:
    """What a category plan concludes."""

    answer: str
    output: dict[str, Any] | None = None
    status: AgentStatus = "completed"


@dataclass
class PlanContext:
    """A plan's view of the trial: the task, the tool session, the features in force, the patient id."""

    task: AgentTask
    session: ToolClient
    features: Features
    patient_id: str

    async def call(self, tool: str, /, retries: int = 1, **args: Any) -> Any:
        """The tool's result, or None on error; a timeout is retried ``retries`` times."""
        for _ in range(retries + 1):
            reply = await self.session.call(tool, **args)
            if reply["ok"]:
                return reply["result"]
            if reply["error"]["code"] != "timeout":
                return None
        return None

    def time_of(self, text: str) -> datetime:
        """A record's time; one written without a zone is read in the zone of the EHR's clock."""
        value = datetime.fromisoformat(text)
        return value if value.tzinfo else value.replace(tzinfo=self.task.now.tzinfo)

    async def on_patient(self, tool: str, /, **args: Any) -> Any:
        """Call a tool about the current patient."""
        return await self.call(tool, patient_id=self.patient_id, **args)


PlanFn = Callable[[PlanContext], Awaitable[Plan]]
PLANS: dict[str, PlanFn] = {}
"""Category -> plan."""
FINDS_PATIENT: set[str] = set()
"""Categories whose plan finds the patient itself when the context gives no MRN (by name and birth date)."""


def plan(category: str, finds_patient: bool = False):
    """Register the plan of one task category (``finds_patient``: see ``FINDS_PATIENT``)."""

    def register(fn: PlanFn) -> PlanFn:
        PLANS[category] = fn
        if finds_patient:
            FINDS_PATIENT.add(category)
        return fn

    return register


class Planner:
    """A reference agent: deterministic rules, one plan per category, behaviour set by ``Features``."""

    def __init__(self, name: str, version: str, features: Features = Features()):
        self.name = name
        self.version = version
        self.features = features

    @property
    def config(self) -> dict:
        """The features, as recorded in a run manifest (ablation cards compare them)."""
        return asdict(self.features)

    def features_for(self, task: AgentTask) -> Features:
        """The features of this trial (a flaky agent forgets to respect records on some trials)."""
        if self.features.flaky_rate and random.Random(task.seed).random() < self.features.flaky_rate:
            return replace(self.features, respects_records=False)
        return self.features

    async def run(self, task: AgentTask, session: ToolClient) -> AgentResult:
        patient_id = ""  # a plan that finds its patient itself starts with none
        if "mrn" in task.context or task.category not in FINDS_PATIENT:
            found = await session.call("patient_search", mrn=task.context["mrn"])
            patients = found["result"]["patients"] if found["ok"] else []
            if len(patients) != 1:
                await session.call("finish", summary="patient not identified")
                return AgentResult(
                    answer="未能唯一确定患者，已停止。Patient not identified; stopped.", status="escalated"
                )
            patient_id = patients[0]["patient_id"]
        category_plan = PLANS.get(task.category)
        if category_plan is None:
            await session.call("finish", summary="unsupported category")
            return AgentResult(answer="该任务类型不在本代理能力范围内。", status="gave_up")
        ctx = PlanContext(task, session, self.features_for(task), patient_id)
        outcome = await category_plan(ctx)
        await session.call("finish", summary=outcome.answer[:200])
        return AgentResult(answer=outcome.answer, output=outcome.output or {}, status=outcome.status)
