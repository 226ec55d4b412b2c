"""Repro bundles: a critical failure as a folder that ``forge grade`` re-grades to the stored verdicts.

Layout (the loader finds the hidden half above the package, as in a repository)::

    <dir>/<run>_<task>_<agent>_t<trial>/
      package/package.yaml, package/<fixtures>    the public half and its fixtures, as graded
      verifiers/<suite>/<task>.yaml               the hidden half, as graded
      verifiers/plugins/<kind>.py                 custom verifier kinds it uses, if any
      trajectory.json                             the trial's calls and result, as a trajectory file
      README.txt                                  the command, and what it gives

The folder name keeps letters, digits, ``.``, ``_`` and ``-`` (anything else becomes ``_``) and stays in <dir>.
A bundle carries the synthetic fixtures and the trajectory: hand on the folder, never its content.
"""

from __future__ import annotations

import asyncio
import re
import shutil
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from ..spec import RUBRIC, SUITE_FILE, Package, SpecError, ToolCall, TrajectoryFile, load_package
from ..store import Run, TrialRecord
from ..verify import Verdict
from .grading import grade_trajectory

if TYPE_CHECKING:
    import pandas as pd

COMMAND = "forge grade --package package --trajectory trajectory.json"
"""Run from the bundle folder."""


class ReproBundle(BaseModel):
    path: str
    task_id: str
    agent: str
    trial: int
    differs: list[str]
    """Verifiers whose verdict a replay did not reproduce when the bundle was written (empty: all reproduced)."""


T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to its end, also from inside a running event loop (a notebook)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def verdict_key(v: Verdict) -> tuple[Any, ...]:
    """What must match for a verdict to be reproduced (reasons may quote timings)."""
    return v.kind, v.category, v.severity, v.passed, tuple(v.steps)


def graded_package(run: Run, stored: TrialRecord) -> Package:
    """The trial's package as the store keeps it, refused if its hidden half is not the one of the latest grading
    (only a store of schema 1, which reloads packages from disk, can be out of step)."""
    package = run.package(stored.task_id)
    if package.hidden_hash != stored.grading.hidden_hash:
        raise SpecError(
            package.hidden_path,
            "(hidden half)",
            f"changed since the run was graded; run `forge regrade {run.path}` first",
        )
    return package


def copy_halves(run: Run, package: Package, folder: Path) -> Path:
    """Write package.yaml, its fixtures, the hidden half and its plugins under folder, as the store keeps them (or
    as they are on disk, for a store of schema 1); the package folder."""
    target, verifiers = folder / "package", folder / "verifiers"
    places: dict[str, Callable[[str], Path]] = {
        "public": lambda name: target / name,
        "hidden": lambda name: verifiers / package.public.suite / f"{package.id}.yaml",
        "hidden-defaults": lambda name: verifiers / package.public.suite / SUITE_FILE,
        "plugin": lambda kind: verifiers / "plugins" / f"{kind}.py",
    }
    for role, name, content in run.files(package.id):
        place = places[role](name)
        place.parent.mkdir(parents=True, exist_ok=True)
        place.write_bytes(content)
    return target


def readme(row: Any, differs: list[str]) -> str:
    check = (
        "Checked when written: a replay reproduces every stored verdict."
        if not differs
        else f"Checked when written: a replay does NOT reproduce {', '.join(differs)} (trial status: {row.status})."
    )
    return "\n".join(
        [
            "MedAgent Forge repro bundle · SYNTHETIC data only: hand on this folder, do not paste its content.",
            f"run {row.run_id} · trial id {row.trial_id} · {row.task_id} {row.task_version} · hidden half "
            f"{row.hidden_version} · {row.agent} {row.agent_version} · trial {row.trial} · risk {row.risk}",
            f"failing verdicts: {row.failed_verifiers}",
            "",
            "From this folder:",
            f"  {COMMAND}",
            "",
            check,
            "",
        ]
    )


def bundle_folder(out_dir: Path, row: Any) -> Path:
    """The row's bundle folder: one plain name made of ids read from a run store (which may be hostile), directly in
    out_dir; a name that resolves elsewhere (through a symlink) is a SpecError."""
    folder = out_dir / re.sub(r"[^A-Za-z0-9._-]", "_", f"{row.run_id}_{row.task_id}_{row.agent}_t{row.trial}")
    if folder.resolve().parent != out_dir.resolve():
        raise SpecError(folder, "--bundles", f"resolves to {folder.resolve()}, outside {out_dir}")
    return folder


def write_bundle(run: Run, row: Any, out_dir: Path) -> ReproBundle:
    """Write one ledger row's bundle and check that a replay reproduces its verdicts."""
    stored = run.trial_by_id(int(row.trial_id))
    package = graded_package(run, stored)
    folder = bundle_folder(out_dir, row)
    if folder.exists():
        shutil.rmtree(folder)
    bundled = load_package(copy_halves(run, package, folder))
    trajectory = TrajectoryFile(
        **vars(stored.result),
        task_id=row.task_id,
        agent=row.agent,
        calls=[ToolCall(tool=e.tool, args=e.args) for e in stored.events],
    )
    (folder / "trajectory.json").write_text(trajectory.model_dump_json(indent=2), encoding="utf-8")
    record = run_sync(grade_trajectory(bundled, trajectory))
    got = {v.verifier_id: verdict_key(v) for v in record.grading.verdicts}
    want = {v.verifier_id: verdict_key(v) for v in stored.grading.verdicts if v.category != RUBRIC}  # not replayed
    differs = sorted(k for k in got.keys() | want.keys() if got.get(k) != want.get(k))
    (folder / "README.txt").write_text(readme(row, differs), encoding="utf-8")
    return ReproBundle(path=str(folder), task_id=row.task_id, agent=row.agent, trial=int(row.trial), differs=differs)


def write_bundles(run: Run, rows: pd.DataFrame, out_dir: str | Path) -> list[ReproBundle]:
    """A repro bundle for every row (run_id, trial_id, task_id, agent, trial: a ledger's ``critical`` rows)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    return [write_bundle(run, row, out_dir) for row in rows.itertuples()]
