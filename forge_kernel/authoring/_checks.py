"""What an author asks of a draft: is it valid, does its selftest pass (with mutants), how do the reference agents
do on it. Each runs on the package exactly as it will be saved."""

from __future__ import annotations

import asyncio
import concurrent.futures
import shutil
import tempfile
from collections.abc import Coroutine
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..agents import REFERENCE_SET
from ..engine import (
    CaseResult,
    Images,
    MutationReport,
    RunSpec,
    check_halves,
    execute,
    failing_hard,
    mutation_test,
    selftest_package,
)
from ..spec import ForgeError, Package, validate_fixture
from ..store import open_run
from ._draft import Draft, Suite, json_bytes


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
    """One reference agent's trial on the draft: pass, scores, the hard verdicts that failed, and the folder of
    the run that stores it (to play it: ``open_run(run).trial(task, agent)``)."""

    agent: str
    passed: bool
    accuracy: float
    completion: int
    failing: list[str]
    status: str
    task: str
    run: Path


def scratch_copy(draft: Draft, folder: Path) -> Path:
    """The draft saved under ``folder`` (with its suite files): the package folder a run reads."""
    where = Suite(folder / "task_packages", folder / "verifiers", draft.suite.name)
    for mine, theirs in ((draft.suite.public_file, where.public_file), (draft.suite.hidden_file, where.hidden_file)):
        if mine.is_file():
            theirs.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(mine, theirs)
    package_folder, _ = replace(draft, suite=where).save()
    return package_folder


def dry_run(draft: Draft, agents: tuple[str, ...] = REFERENCE_SET, folder: str | Path | None = None) -> list[DryRun]:
    """One trial of each agent (the reference agents by default) on the draft, graded, as a run in ``folder`` (a
    fresh temporary one by default) that keeps the trials to play them."""
    where = Path(folder) if folder is not None else Path(tempfile.mkdtemp(prefix="forge-dry-run-"))
    package = scratch_copy(draft, where / "package")
    spec = RunSpec(suite=[str(package)], agents=list(agents), trials=1, seed=0)
    run_sync(execute(spec, where / "run", progress=False))
    out = []
    with open_run(where / "run") as run:
        for name in agents:
            trial = run.trial(draft.public.id, name, 0)
            s = trial.grading.scores
            failing = failing_hard(trial.grading)
            out.append(
                DryRun(name, s.passed, s.accuracy, s.completion, failing, trial.status, trial.task_id, where / "run")
            )
    return out
