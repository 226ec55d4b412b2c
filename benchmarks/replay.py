"""Benchmark 8: ``forge replay`` of one trial as a whole process, beside ``python -c pass``. SYNTHETIC data only.

    .venv/bin/python benchmarks/replay.py --store DIR   # a run folder (e.g. benchmark 6's); writes RESULTS.md §8
    .venv/bin/python benchmarks/replay.py               # builds a run of the six reference agents, one trial each
    .venv/bin/python benchmarks/replay.py --quick       # three repeats; writes nothing

Each sample is one process from its start to its exit (wall time and peak RSS from the kernel's accounting), output
to /dev/null, bytecode cached as for an installed package; the replay and the bare interpreter take turns. What the
replay imports is listed (``python -X importtime``) so that a slow start can be traced to its module.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

from results import PROCESS_ENV, ROOT, calibration, git_state, publish
from scale import FORGE, measure, median

TASK, AGENT = "SC-MED-GASTRIC-ULCER", "candidate-v2"
GOAL_MS = 150


def reference_run(run_dir: Path) -> None:
    """The six reference agents on the bundled packages, one trial each."""
    sys.path.insert(0, str(ROOT))
    from forge_kernel.agents import REFERENCE_SET
    from forge_kernel.engine import RunSpec, execute

    spec = RunSpec(suite=[str(ROOT / "task_packages")], agents=list(REFERENCE_SET), trials=1, seed=0)
    asyncio.run(execute(spec, run_dir, progress=False))


def slowest_imports(argv: list[str], count: int = 6) -> list[tuple[str, float]]:
    """The top-level modules (and forge's own) that took longest to import in one replay, cumulative ms."""
    err = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "from forge_kernel.cli import main; main()", *argv[1:]],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=PROCESS_ENV,
    ).stderr
    found = []
    for line in err.splitlines():
        if line.startswith("import time:") and "|" in line:
            _, cumulative, name = (part.strip() for part in line[len("import time:") :].split("|"))
            if cumulative.isdigit() and (
                (not name.startswith(" ") and "." not in name.strip())
                or (name.strip().startswith("forge_kernel.") and name.count(".") == 1)
            ):
                found.append((name.strip(), int(cumulative) / 1000))
    return sorted(found, key=lambda item: -item[1])[:count]


def section(trials: int, samples: dict, imports: list, git: str, calibration_s: float) -> str:
    replay = median([run[0] for run in samples["replay"]]) * 1000
    bare = median([run[0] for run in samples["bare"]]) * 1000
    rows = [
        f"| {label} | {median([w for w, _, _ in runs]) * 1000:.0f} ms | {min(w for w, _, _ in runs) * 1000:.0f}–"
        f"{max(w for w, _, _ in runs) * 1000:.0f} ms | {median([c for _, _, c in runs]) * 1000:.0f} ms "
        f"| {median([p for _, p, _ in runs]):.0f} MiB | {len(runs)} |"
        for label, runs in (
            (f"`forge replay RUN --task {TASK} --agent {AGENT} --trial 0`", samples["replay"]),
            ("baseline: `python -c pass` (the same interpreter)", samples["bare"]),
        )
    ]
    return "\n".join(
        [
            "## 8. forge replay of one trial, as a whole process",
            "",
            f"Written by `benchmarks/replay.py` (git {git}; a pure-Python loop of 10 million additions took "
            f"{calibration_s:.2f} s), on a run of {trials:,} trials. Each sample is one process, start to exit, output to "
            "/dev/null, bytecode cached; the two commands take turns.",
            "",
            "| command | median wall | min–max | median CPU | median peak RSS | runs |",
            "|---|---:|---:|---:|---:|---:|",
            *rows,
            "",
            f"**forge replay: {replay:.0f} ms, {replay - bare:.0f} ms above the bare interpreter ({replay / bare:.1f}×). "
            f"Goal ≤ {GOAL_MS} ms: {'met' if replay <= GOAL_MS else 'NOT met'}.** Slowest imports of one replay "
            "(cumulative, `-X importtime`): " + ", ".join(f"`{name}` {ms:.0f} ms" for name, ms in imports) + ".",
            "",
        ]
    )


def timed_commands(run_dir: Path, task: str = TASK, agent: str = AGENT, trial: int = 0) -> dict:
    """The replay of one trial and the bare interpreter, as ``measure`` takes them."""
    replay = [str(FORGE), "replay", str(run_dir), "--task", task, "--agent", agent, "--trial", str(trial)]
    return {"replay": (replay, None), "bare": ([sys.executable, "-c", "pass"], None)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="a run folder holding the reference agents' trials")
    parser.add_argument("--repeats", type=int, default=15, help="counted runs of each command (default 15)")
    parser.add_argument("--quick", action="store_true", help="three repeats; writes nothing")
    opts = parser.parse_args()
    tmp = tempfile.TemporaryDirectory(prefix="forge-bench-replay-")
    run_dir = opts.store or Path(tmp.name) / "run"
    if not (run_dir / "run.sqlite").is_file():
        print(f"building a reference run in {run_dir} ...", flush=True)
        reference_run(run_dir)
    with sqlite3.connect(f"{(run_dir / 'run.sqlite').resolve().as_uri()}?mode=ro", uri=True) as db:
        (trials,) = db.execute("SELECT COUNT(*) FROM trials").fetchone()
    commands = timed_commands(run_dir)
    samples = measure(commands, 3 if opts.quick else opts.repeats)
    text = section(trials, samples, slowest_imports(commands["replay"][0]), git_state(), calibration())
    publish("replay.py", text, opts.quick)


if __name__ == "__main__":
    main()
