"""Agents that misbehave on purpose (or run slowly), for the engine and resume tests.

Use them as ``--agent tests.agents_for_tests:NAME`` with the repository root on PYTHONPATH.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import replace

from forge_kernel.agents import AGENTS
from forge_kernel.spec import AgentResult


class Crashing:
    """Makes one call, then raises."""

    name = "crashing"
    version = "0"

    async def run(self, task, session) -> AgentResult:
        await session.call("patient_search", mrn=task.context["mrn"])
        raise RuntimeError("agent bug on purpose")


class Hanging:
    """Makes one call, then waits forever (until the trial's max_seconds)."""

    name = "hanging"
    version = "0"

    async def run(self, task, session) -> AgentResult:
        await session.call("patient_search", mrn=task.context["mrn"])
        await asyncio.Event().wait()


class BudgetBreaker:
    """Calls a tool until the call budget stops it."""

    name = "budget-breaker"
    version = "0"

    async def run(self, task, session) -> AgentResult:
        while True:
            await session.call("patient_search", mrn=task.context["mrn"])


class BudgetSwallower:
    """Runs past the call budget, catches the BudgetExceeded and returns as if all went well."""

    name = "budget-swallower"
    version = "0"

    async def run(self, task, session) -> AgentResult:
        try:
            while True:
                await session.call("patient_search", mrn=task.context["mrn"])
        except Exception:
            return AgentResult(answer="done", status="completed")


class Spender:
    """Reports spending more than the cost budget."""

    name = "spender"
    version = "0"

    async def run(self, task, session) -> AgentResult:
        session.charge(task.budget.max_cost + 0.1)
        return AgentResult(answer="spent")


class WrongReturn:
    """Returns a dict instead of an AgentResult."""

    name = "wrong-return"
    version = "0"

    async def run(self, task, session):
        return {"answer": "done"}


class SeedEcho:
    """Answers with the seed it was given."""

    name = "seed-echo"
    version = "0"

    async def run(self, task, session) -> AgentResult:
        return AgentResult(answer=str(task.seed))


class SlowScripted:
    """The bundled ``scripted`` agent, ~0.05 s slower per trial: slow enough to be killed part-way through a run."""

    name = "slow-scripted"
    version = "slow"

    def __init__(self):
        self.inner = AGENTS["scripted"]()

    async def run(self, task, session) -> AgentResult:
        await asyncio.sleep(0.05)
        return await self.inner.run(task, session)


class VendorCandidate:
    """The bundled ``candidate-v2`` under a name of its own, as a team's agent would be: what a release of a
    ``module:attribute`` agent runs, isolated."""

    name = "vendor-candidate"
    version = "1.0"

    def __init__(self):
        self.inner = AGENTS["candidate-v2"]()

    async def run(self, task, session) -> AgentResult:
        return await self.inner.run(task, session)


class Confident:
    """The bundled ``scripted`` agent stating a confidence: 0.9 on medication tasks, 0.6 elsewhere."""

    name = "confident"
    version = "0"

    def __init__(self):
        self.inner = AGENTS["scripted"]()

    async def run(self, task, session) -> AgentResult:
        result = await self.inner.run(task, session)
        return replace(result, confidence=0.9 if task.category == "medication_management" else 0.6)


class OutOfRange:
    """Returns an AgentResult whose confidence it set to 7 after building it (past the dataclass's own check)."""

    name = "out-of-range"
    version = "0"

    async def run(self, task, session):
        result = AgentResult(answer="done")
        result.confidence = 7.0
        return result


FLOOD = "1" * 4000
"""An answer written against patterns that backtrack over digits."""


class DigitFlood:
    """Answers FLOOD."""

    name = "digit-flood"
    version = "0"

    async def run(self, task, session) -> AgentResult:
        return AgentResult(answer=FLOOD)


class FileProbe:
    """Trusted, in process: reports the files the harness, each process it forked (its grader) and each of theirs
    (the grader's helper, which the probe waits for: the grader forks it once it has the unit registry) hold
    open."""

    name = "file-probe"
    version = "0"

    async def run(self, task, session) -> AgentResult:
        me = os.getpid()
        for _ in range(200):
            if any(children_of(pid) for pid in children_of(me)):
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)  # each closes the other's pipes right after the fork
        family = {pid: children_of(pid) for pid in children_of(me)}
        return AgentResult(
            output={
                "harness": open_files(me),
                "children": {pid: open_files(pid) for pid in family},
                "grandchildren": {pid: [open_files(c) for c in theirs] for pid, theirs in family.items()},
            }
        )


def children_of(pid: int) -> list[str]:
    return [
        child
        for thread in os.listdir(f"/proc/{pid}/task")
        for child in open(f"/proc/{pid}/task/{thread}/children").read().split()
    ]


def open_files(pid: int) -> list[tuple[int, str]]:
    """A process's file descriptors and what each points at (``pipe:[…]``, ``socket:[…]``, a path)."""
    found = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            found.append((int(fd), os.readlink(f"/proc/{pid}/fd/{fd}")))
        except FileNotFoundError:  # the descriptor that listed the folder, closed since
            pass
    return sorted(found)


class GcProbe:
    """Reports what its process's garbage collector leaves alone (the objects frozen before the worker was forked)
    and how often it collects (its thresholds)."""

    name = "gc-probe"
    version = "0"

    async def run(self, task, session) -> AgentResult:
        import gc

        return AgentResult(
            output={"frozen": gc.get_freeze_count(), "tracked": len(gc.get_objects()), "thresholds": gc.get_threshold()}
        )
