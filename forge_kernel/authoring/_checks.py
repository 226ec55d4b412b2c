"""What an author asks of a draft: is it valid, does its selftest pass (with mutants), how do the reference agents
do on it. Each runs on the package exactly as it will be saved."""

from __future__ import annotations

import asyncio
import concurrent.futures
import tempfile
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..agents import AGENTS, REFERENCE_SET
from ..engine import (
    CaseResult,
    Images,
    MutationReport,
    check_halves,
    failing_hard,
    mutation_test,
    run_trial,
    selftest_package,
)
from ..spec import ForgeError, Package, validate_fixture
from ._draft import Draft, json_bytes


def run_sync(work: Coroutine) -> Any:
    """Run a coroutine to its end, also from inside a running event loop (a notebook's): in a thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, work).result()


def problems(draft: Draft, fhir: bool = False) -> list[str]:
    """What is wrong with the draft, as ``file: field: message`` lines (none: valid); ``fhir`` also checks the
    fixtures as FHIR R4 (slower the first time)."""
    if draft.gold is None:
        return [f"{draft.hidden_path}: gold: record the gold solution (call the tools, then use them as the gold)"]
    try:
        check_halves(draft.package())
        if fhir:
            with tempfile.TemporaryDirectory() as folder:
                for name, bundle in draft.fixtures.items():
                    path = Path(folder) / Path(name).name
                    path.write_bytes(json_bytes(bundle))
                    validate_fixture(path)
    except ForgeError as exc:
        return [str(exc)]
    return []


@dataclass(frozen=True)
class SelftestResult:
    cases: list[CaseResult]
    mutants: MutationReport | None

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.cases) and (self.mutants is None or self.mutants.ok)


def selftest(source: Draft | Package, mutants: bool = True) -> SelftestResult:
    """``forge selftest [--mutants]`` on a draft (or a saved package): gold, counterexamples, valid variants (and
    mutants)."""
    package, images = source.package() if isinstance(source, Draft) else source, Images()

    async def both():
        cases = await selftest_package(package, images)
        return SelftestResult(cases, await mutation_test(package, images) if mutants else None)

    return run_sync(both())


@dataclass(frozen=True)
class DryRun:
    """One reference agent's trial on the draft: pass, scores and the hard verdicts that failed."""

    agent: str
    passed: bool
    accuracy: float
    completion: int
    failing: list[str]
    status: str


def dry_run(draft: Draft, agents: tuple[str, ...] = REFERENCE_SET) -> list[DryRun]:
    """One trial of each agent (the reference agents by default) on the draft, graded."""
    package, images = draft.package(), Images()

    async def trials():
        out = []
        for name in agents:
            record = await run_trial(package, images[package], AGENTS[name](), 0, 0)
            s = record.grading.scores
            out.append(DryRun(name, s.passed, s.accuracy, s.completion, failing_hard(record.grading), record.status))
        return out

    return run_sync(trials())
