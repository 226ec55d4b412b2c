"""Benchmark 6: a 50-step trial's timeline, read from a store copied alone to a new folder. SYNTHETIC data only.

    .venv/bin/python benchmarks/timeline.py          # prints the figures (benchmarks/run.py puts them in RESULTS.md)

One trial of 50 calls (``bench_agents.FiftySteps``: 24 temperature recordings between record searches) on a copy of
SC-MED-GASTRIC-ULCER whose policy lets it write Observations, stored, and the store file copied alone to a new
folder (its packages gone).
Timed: reading the trial through ``open_run`` (the SQL rows to typed events), building its ``timeline``, then
``state(n).touched()`` and ``diff(a, b)`` for random steps. Goal: state and diff under 1 ms for a 50-step trial.
"""
from __future__ import annotations

import asyncio
import dataclasses
import random
import shutil
import sys
import tempfile
from pathlib import Path
from time import perf_counter_ns

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from forge_kernel import open_run  # noqa: E402
from forge_kernel.engine import RunSpec, execute  # noqa: E402
from tests.helpers import copy_suite_files, update_yaml  # noqa: E402

TASK = "SC-MED-GASTRIC-ULCER"
STEPS = 50


def build_store(folder: Path, agent: str = "bench_agents:FiftySteps", calls: int = STEPS) -> Path:
    """A run of one trial of ``agent`` (``calls`` calls), its store copied alone to ``folder / 'copied'``; that folder."""
    suite = folder / "pkg"
    shutil.copytree(ROOT / "task_packages" / "superclue" / TASK, suite / "task_packages" / "superclue" / TASK)
    copy_suite_files(suite)
    shutil.copy(ROOT / "verifiers" / "superclue" / f"{TASK}.yaml", suite / "verifiers" / "superclue")
    update_yaml(suite / "task_packages" / "superclue" / TASK / "package.yaml",
                policy={"writable_types": ["MedicationRequest", "Observation"]},
                budget={"max_calls": calls, "max_seconds": 600})
    spec = RunSpec(suite=[str(suite / "task_packages")], agents=[agent], trials=1, trust=[agent])
    asyncio.run(execute(spec, folder / "run", progress=False))
    (folder / "copied").mkdir()
    shutil.copy(folder / "run" / "run.sqlite", folder / "copied" / "run.sqlite")
    shutil.rmtree(suite)
    return folder / "copied"


def timed(fn, repeats: int) -> list[int]:
    samples = []
    for _ in range(repeats):
        started = perf_counter_ns()
        fn()
        samples.append(perf_counter_ns() - started)
    return samples


def bench(repeats: int = 300) -> dict:
    with tempfile.TemporaryDirectory(prefix="forge-bench-timeline-") as tmp:
        copied = build_store(Path(tmp))
        with open_run(copied) as run:
            trial = run.trial(TASK, "fifty-steps", 0)
            assert len(trial.events) == STEPS, len(trial.events)
            rng = random.Random(7)
            pairs = [(rng.randrange(STEPS + 1), rng.randrange(STEPS + 1)) for _ in range(repeats)]
            figures = {
                "read": timed(lambda: run.trial(TASK, "fifty-steps", 0), repeats // 3),
                "build": timed(lambda: dataclasses.replace(trial, run=run).timeline, repeats),
                "state": [],
                "diff": [],
            }
            line = trial.timeline
            figures["state"] = timed(lambda: line.state(rng.randrange(STEPS + 1)).touched(), repeats)
            pairs_iter = iter(pairs)
            figures["diff"] = timed(lambda: line.diff(*next(pairs_iter)), repeats)
            written = len(line.touched)
    return {"figures": figures, "written": written}


if __name__ == "__main__":
    result = bench()
    for name, samples in result["figures"].items():
        samples = sorted(samples)
        print(f"{name}: median {samples[len(samples) // 2] / 1e3:.1f} µs, p95 {samples[int(len(samples) * .95)] / 1e3:.1f} µs")
    print(f"{result['written']} resources written")
