"""Benchmark 10: a 50-step trial's timeline, read from a store copied alone to a new folder. SYNTHETIC data only.

    .venv/bin/python benchmarks/timeline.py           # writes RESULTS.md §10
    .venv/bin/python benchmarks/timeline.py --quick   # fewer repeats; writes nothing

One trial of 50 calls (``bench_agents.FiftySteps``: 24 temperature recordings between record searches) on a copy of
SC-MED-GASTRIC-ULCER whose policy lets it write Observations, stored, and the store file copied alone to a new
folder (its packages gone).
Timed: reading the trial through ``open_run`` (the SQL rows to typed events), building its ``timeline``, then
``state(n).touched()`` and ``diff(a, b)`` for random steps. Goal: state and diff under 1 ms for a 50-step trial.
*Baseline:* the state at step n without a timeline: the trial's recorded changes up to n applied, one JSON-Patch
operation after the other, to copies of the resources they touch (what a reader had to do before).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import random
import shutil
import sys
import tempfile
from pathlib import Path
from time import perf_counter_ns

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from forge_kernel import open_run  # noqa: E402
from forge_kernel.ehr.patch import apply_op, clone, resource_key  # noqa: E402
from forge_kernel.engine import RunSpec, execute  # noqa: E402
from results import calibration, git_state, write_section  # noqa: E402
from tests.helpers import copy_suite_files, update_yaml  # noqa: E402

TASK = "SC-MED-GASTRIC-ULCER"
STEPS = 50


def build_store(folder: Path, agent: str = "bench_agents:FiftySteps", calls: int = STEPS) -> Path:
    """A run of one trial of ``agent`` (``calls`` calls), its store copied alone to ``folder / 'copied'``; that folder."""
    suite = folder / "pkg"
    shutil.copytree(ROOT / "task_packages" / "superclue" / TASK, suite / "task_packages" / "superclue" / TASK)
    copy_suite_files(suite)
    shutil.copy(ROOT / "verifiers" / "superclue" / f"{TASK}.yaml", suite / "verifiers" / "superclue")
    update_yaml(
        suite / "task_packages" / "superclue" / TASK / "package.yaml",
        policy={"writable_types": ["MedicationRequest", "Observation"]},
        budget={"max_calls": calls, "max_seconds": 600},
    )
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


def replayed(initial, changes: list[tuple[int, dict]], step: int) -> dict:
    """The resources written by ``step``, each change applied in turn to a copy of what it touches: no timeline."""
    doc: dict = {}
    for at, op in changes:
        if at > step:
            break
        rtype, rid = resource_key(op["path"])
        if rid not in doc.setdefault(rtype, {}) and (found := initial((rtype, rid))) is not None:
            doc[rtype][rid] = clone(found)
        apply_op(doc, op)
    return {(t, i): r for t, by_id in doc.items() for i, r in by_id.items()}


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
            changes = [(e.step, op) for e in trial.events for op in e.changes]
            initial = run.image(TASK).resources.get
            for n in (0, STEPS // 2, STEPS):  # the baseline gives the same state
                assert replayed(initial, changes, n) == dict(line.state(n).touched()), n
            figures["baseline"] = timed(lambda: replayed(initial, changes, rng.randrange(STEPS + 1)), repeats)
            written = len(line.touched)
    return {"figures": figures, "written": written}


LABELS = {
    "read": "`open_run(copy).trial(task, agent, 0)`: the stored rows to typed events",
    "build": "its `timeline` built (from the recorded changes over the package's initial state)",
    "state": "`timeline.state(n).touched()`, n at random",
    "diff": "`timeline.diff(a, b)`, a and b at random",
    "baseline": "baseline: the state at step n by applying the changes up to n to copies, no timeline",
}


def section(result: dict) -> str:
    """The RESULTS.md section of one run of this benchmark."""

    def median_us(key: str) -> float:
        samples = sorted(result["figures"][key])
        return samples[len(samples) // 2] / 1e3

    def row(key: str) -> str:
        samples = sorted(result["figures"][key])
        return (
            f"| {LABELS[key]} | {median_us(key):.1f} µs | {samples[int(len(samples) * 0.95)] / 1e3:.1f} µs "
            f"| {len(samples)} |"
        )

    slowest = max(median_us("state"), median_us("diff"))
    return "\n".join(
        [
            "## 10. A 50-step trial's timeline, read from a store copied alone",
            "",
            f"Written by `benchmarks/timeline.py` (git {git_state()}; a pure-Python loop of 10 million additions took "
            f"{calibration():.2f} s; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs). One trial of "
            f"{STEPS} calls writing {result['written']} resources, its store file copied alone to a new folder (the "
            "packages gone); in process, medians and p95 (nearest rank).",
            "",
            "| measurement | median | p95 | repeats |",
            "|---|---:|---:|---:|",
            *(row(key) for key in LABELS),
            "",
            f"**State and diff: at most {slowest:.1f} µs median ({median_us('baseline') / median_us('state'):.1f}× faster "
            f"than the baseline for a state). Goal under 1 ms: {'met' if slowest < 1000 else 'NOT met'}.**",
            "",
        ]
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats; writes nothing")
    opts = parser.parse_args()
    text = section(bench(30 if opts.quick else 300))
    print(text)
    if not opts.quick:
        write_section("timeline.py", text)
        print("wrote its section of benchmarks/RESULTS.md")
