"""Agents for the isolation benchmarks (imported as the top-level module ``bench_agents``). SYNTHETIC data only."""

from __future__ import annotations

import asyncio

from forge_kernel.agents import AGENTS
from forge_kernel.spec import AgentResult

MODEL_LATENCY_S = 0.05
"""Simulated model latency before each tool call of PacedScripted."""
REPEATS = 19
"""Calls Repeater makes: the package's call budget (20) less one."""


class Paced:
    """A tool client that waits MODEL_LATENCY_S before every call, as an LLM agent waits for its model."""

    def __init__(self, client):
        self.client = client

    async def call(self, tool: str, /, **args):
        await asyncio.sleep(MODEL_LATENCY_S)
        return await self.client.call(tool, **args)

    def charge(self, usd: float) -> None:
        self.client.charge(usd)


class PacedScripted:
    """The bundled ``scripted`` agent with 50 ms of model latency per step (tool call)."""

    name, version = "paced-scripted", "1"

    def __init__(self):
        self.inner = AGENTS["scripted"]()

    async def run(self, task, session) -> AgentResult:
        return await self.inner.run(task, Paced(session))


class Repeater:
    """REPEATS look-ups of its patient, then an empty answer: the cost of a call, over and over."""

    name, version = "repeater", "1"

    async def run(self, task, session) -> AgentResult:
        for _ in range(REPEATS):
            await session.call("patient_search", mrn=task.context["mrn"])
        return AgentResult()


class Idle:
    """Returns at once: the cost of a trial with no call."""

    name, version = "idle", "1"

    async def run(self, task, session) -> AgentResult:
        return AgentResult()


class Sleeper:
    name, version = "sleeper", "1"

    async def run(self, task, session) -> AgentResult:
        await asyncio.sleep(float(__import__("os").environ.get("SLEEP", "0.35")))
        return AgentResult()


class FiftySteps:
    """``calls`` calls (50): its patient's look-up, record searches and temperature recordings in turn, then finish."""

    name, version = "fifty-steps", "1"
    calls = 50
    searched = "Observation"
    """The type its record searches ask for."""

    async def run(self, task, session) -> AgentResult:
        found = await session.call("patient_search", mrn=task.context["mrn"])
        patient = found["result"]["patients"][0]["patient_id"]
        for i in range(self.calls - 2):
            if i % 2:
                await session.call(
                    "vital_sign_create", patient_id=patient, name="体温", value=36.5 + i / 100, unit="Cel"
                )
            else:
                await session.call("record_search", patient_id=patient, type=self.searched)
        await session.call("finish", summary="done")
        return AgentResult(answer="synthetic benchmark trial")


class ThousandSteps(FiftySteps):
    """FiftySteps at 1,000 calls."""

    name, calls = "thousand-steps", 1000


class LongTrial(FiftySteps):
    """FiftySteps at 1,000 calls, searching its patient's two conditions: each call keeps its size as the trial goes
    on (the observations it records do not come back in its searches)."""

    name, calls, searched = "long-trial", 1000, "Condition"
