"""Grading without a live agent: one recorded trajectory, or every stored trial of a run (regrade)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..agents import ReplayAgent
from ..spec import Package, TrajectoryFile, compact_json
from ..store import RunStore, TrialRecord, iter_trials, run_packages
from .trial import Images, grading_of, replayed, run_trial


async def grade_trajectory(
    package: Package, trajectory: TrajectoryFile, images: Images | None = None, judge: bool = False
) -> TrialRecord:
    """Replay the trajectory's calls on a fresh EHR view and grade the result (with ``judge``, the rubric verdicts
    too: ``forge grade``)."""
    images = images or Images()
    return await run_trial(package, images[package], ReplayAgent(trajectory), 0, 0, judge=judge)


@dataclass(frozen=True)
class RegradeOutcome:
    grading_id: int
    trials: int
    changed: int
    """Trials whose pass/fail differs from their previous grading."""
    hidden_versions: dict[str, str]


def regrade(run_dir: Path) -> RegradeOutcome:
    """Re-run the verifiers of the current hidden halves (those on disk beside the run's packages, else the ones
    the store holds) on every stored trajectory, as a new grading, the rubric verdicts (a model's judgement) with
    them; the store keeps the hidden halves it used."""
    with RunStore.open(run_dir) as store:
        packages = run_packages(store, hidden="current")
        images = Images()
        trials = list(iter_trials(store))
        gradings = []
        changed = 0
        for stored in trials:
            package = packages[stored.task_id]
            result = grading_of(stored, package, replayed(images[package], stored.events), judge=True)
            changed += result.scores.passed != stored.grading.scores.passed
            assert stored.trial_id is not None  # read from the store
            gradings.append((stored.trial_id, result))
        grading_id = store.new_grading()
        store.write_gradings(grading_id, gradings, [p for p in packages.values() if p.hidden_source is None])
        return RegradeOutcome(grading_id, len(trials), changed, {k: p.hidden.version for k, p in packages.items()})


def trajectory_json(record: TrialRecord) -> dict[str, Any]:
    """A graded trajectory as plain JSON (for ``forge grade --json``)."""
    s = record.grading.scores
    return {
        "task_id": record.task_id,
        "status": record.status,
        "reason": record.reason,
        "hidden_version": record.grading.hidden_version,
        "hidden_hash": record.grading.hidden_hash,
        "scores": {
            "passed": s.passed,
            "accuracy": s.accuracy,
            "completion": s.completion,
            "safety_gate": s.safety_gate,
            "missing": list(s.missing),
            "extra": list(s.extra),
        },
        "verdicts": [v.__dict__ | {"steps": list(v.steps)} for v in record.grading.verdicts],
        "events": [json.loads(compact_json(vars(e))) for e in record.events],
    }
