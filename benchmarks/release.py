"""Benchmark 9: the release notebook over a 10,000-trial comparison. SYNTHETIC data only.

    .venv/bin/python benchmarks/release.py            # builds the stores in a temporary folder, writes RESULTS.md §9
    .venv/bin/python benchmarks/release.py --quick    # one repeat; writes nothing

The stores: baseline-v1 and candidate-v2 on the bundled packages, 3 trials each, then copied in SQL as
``benchmarks/scale.py`` does to 63 trials per task (with 82 packages, 5,166 per store and 10,332 in the comparison).
Each sample executes the report template with papermill (kernel start included) and exports release.html, as
``forge release`` does once its trials are stored; the mutation kill rate is computed once beforehand (it depends
on the packages only) and read from its cache. The baseline, in the same run and interleaved: the same notebook
over the stores it was copied from.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
from pathlib import Path
from time import perf_counter

from results import ROOT, calibration, git_state, publish
from scale import median, replicate

AGENTS = {"baseline": "baseline-v1", "candidate": "candidate-v2"}
TRIALS, COPIES = 3, 21
GOAL_S = 30.0


def build(folder: Path) -> None:
    """Each side's store of 3 trials per task in ``folder/small/runs``."""
    sys.path.insert(0, str(ROOT))
    from forge_kernel.engine import RunSpec, execute

    for label, agent in AGENTS.items():
        spec = RunSpec(suite=[str(ROOT / "task_packages")], agents=[agent], trials=TRIALS, seed=0)
        asyncio.run(execute(spec, folder / "small" / "runs" / label, progress=False))


def parameters(release: str) -> dict:
    return {
        "release": release,
        "baseline_source": "benchmark",
        "baseline_run": "runs/baseline",
        "baseline_agent": AGENTS["baseline"],
        "candidate_run": "runs/candidate",
        "candidate_agent": AGENTS["candidate"],
        "ablations": {},
        "gate_policy": None,
        "suites": [str(ROOT / "task_packages")],
        "trials": TRIALS,
        "triage": None,
        "mutants_cache": "mutants.json",
    }


def report(folder: Path) -> float:
    """Seconds to execute the template and export the page, as ``forge release`` does."""
    from forge_kernel.report._html_export import export_html
    from forge_kernel.report.build import execute_template

    started = perf_counter()
    notebook = execute_template(folder, parameters(folder.name), progress=False)
    export_html(notebook, folder / "release.html", {"signatures": []}, ["clinician", "engineer"])
    return perf_counter() - started


def bench(repeats: int) -> dict:
    """Build the stores in a temporary folder and time ``repeats`` reports of each size, taking turns: the keyword
    arguments of ``section``."""
    from forge_kernel.report.kill_rate import mutation_kill_rate

    with tempfile.TemporaryDirectory(prefix="forge-release-bench-") as tmp:
        folder = Path(tmp)
        started = perf_counter()
        build(folder)
        shutil.copytree(folder / "small", folder / "large")
        trials = sum(replicate(folder / "large" / "runs" / label / "run.sqlite", COPIES) for label in AGENTS)
        build_s = perf_counter() - started
        started = perf_counter()
        mutation_kill_rate([str(ROOT / "task_packages")], folder / "small" / "mutants.json")
        kill_s = perf_counter() - started
        shutil.copy(folder / "small" / "mutants.json", folder / "large" / "mutants.json")
        samples: dict[str, list[float]] = {"small": [], "large": []}
        for _ in range(repeats):
            for size in samples:
                samples[size].append(report(folder / size))
                print(f"{size}: {samples[size][-1]:.2f} s", flush=True)
        size_mb = (folder / "large" / "release.html").stat().st_size / 1e6
    return {"trials": trials, "build_s": build_s, "kill_s": kill_s, "samples": samples, "size_mb": size_mb}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one repeat; writes nothing")
    opts = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    text = section(**bench(1 if opts.quick else opts.repeats))
    publish("release.py", text, opts.quick)


def section(trials: int, build_s: float, kill_s: float, samples: dict, size_mb: float) -> str:
    large, small = median(samples["large"]), median(samples["small"])
    verdict = "met" if large <= GOAL_S else "NOT met"
    return "\n".join(
        [
            "## 9. The release notebook over a 10,000-trial comparison",
            "",
            f"Written by `benchmarks/release.py` (git {git_state()}; a pure-Python loop of 10 million additions took "
            f"{calibration():.2f} s). The stores: baseline-v1 and candidate-v2 × the bundled packages × {TRIALS} trials, copied "
            f"in SQL to {trials:,} trials in the comparison (built in {build_s:.0f} s). Each sample: papermill executes "
            "`notebooks/release_report.ipynb` (kernel start, imports, comparison, gate, ledgers, charts, players) and "
            "nbconvert exports release.html, the two sizes taking turns. The mutation kill rate (packages only) was "
            f"computed once beforehand in {kill_s:.1f} s and read from its cache. Load average when written: "
            f"{' / '.join(f'{x:.1f}' for x in os.getloadavg())} (1 / 5 / 15 min) on {os.cpu_count()} cores.",
            "",
            "| comparison | median | min–max | runs | goal |",
            "|---|---:|---:|---:|---|",
            f"| {trials:,} trials | {large:.2f} s | {min(samples['large']):.2f}–{max(samples['large']):.2f} s | "
            f"{len(samples['large'])} | ≤ {GOAL_S:.0f} s |",
            f"| baseline: {trials // COPIES:,} trials (the stores before copying) | {small:.2f} s | {min(samples['small']):.2f}–"
            f"{max(samples['small']):.2f} s | {len(samples['small'])} | — |",
            "",
            f"- {COPIES}× the trials cost {large / small:.2f}× the time; release.html {size_mb:.1f} MB.",
            f"- **{trials:,}-trial release notebook: {large:.2f} s. Goal under {GOAL_S:.0f} s: {verdict}.**",
            "",
        ]
    )


if __name__ == "__main__":
    main()
