"""Benchmark 7: the replay player opening a 1,000-step trial from a 100,000-trial store. SYNTHETIC data only.

    .venv/bin/python benchmarks/player.py              # writes RESULTS.md §7
    .venv/bin/python benchmarks/player.py --store DIR  # builds the store in DIR once, and reuses it after
    .venv/bin/python benchmarks/player.py --quick      # three repeats; writes nothing

One trial of 1,000 calls (``bench_agents.ThousandSteps``) stored as in benchmark 6, then 99,999 copies of a short
trial of another agent added to the same store. Timed, from a store not yet opened: ``open_run``, ``ReplayPlayer``
(the trial read, its compact trajectory built, set as the widget's trait and serialised as the one JSON buffer the
front end receives). The baseline, in the same run and taking turns: the same trial's stored event JSON read with
plain ``sqlite3`` and joined into one text (the cost of the data alone). Goal: under 300 ms.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sqlite3
import sys
import tempfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from forge_kernel import open_run  # noqa: E402
from forge_kernel.store import RunStore  # noqa: E402
from forge_kernel.widgets import ReplayPlayer  # noqa: E402
from results import calibration, git_state, write_section  # noqa: E402
from timeline import TASK, build_store, timed  # noqa: E402  (benchmarks/timeline.py)

STEPS, TRIALS = 1000, 100_000
GOAL_MS = 300


def fill(folder: Path, trials: int = TRIALS) -> None:
    """Add copies of the stored trial's first ten calls, as another agent's trials, until the store holds ``trials``."""
    with open_run(folder) as run:
        short = run.trial(TASK, "thousand-steps", 0)
        short = dataclasses.replace(short, events=short.events[:10], agent="filler", trial_id=None)
    with RunStore.open(folder) as store:
        for start in range(0, trials - 1, 5000):
            store.write_trials(
                [dataclasses.replace(short, trial=k) for k in range(start, min(start + 5000, trials - 1))]
            )


def open_player(folder: Path) -> ReplayPlayer:
    """The player of the 1,000-step trial, its state serialised for the front end (as when it is displayed)."""
    with open_run(folder) as run:
        return ReplayPlayer(run, task=TASK, agent="thousand-steps", trial=0)


def read_plain(folder: Path, task: str = TASK, agent: str = "thousand-steps", trial: int = 0) -> str:
    """The baseline: a trial's events and call data as stored, read with plain sqlite3 and zlib and joined as one
    text."""
    with sqlite3.connect(f"{(folder / 'run.sqlite').resolve().as_uri()}?mode=ro", uri=True) as db:
        (trial_id,) = db.execute(
            "SELECT trial_id FROM trials WHERE task_id = ? AND agent = ? AND trial = ?", (task, agent, trial)
        ).fetchone()
        rows = db.execute("SELECT * FROM events WHERE trial_id = ? ORDER BY step", (trial_id,)).fetchall()
        (data,) = db.execute("SELECT data FROM call_data WHERE trial_id = ?", (trial_id,)).fetchone()
    calls = zlib.decompress(data).decode().split("\n")
    return "[" + ",".join(f"{row}\t{call}" for row, call in zip(rows, calls, strict=True)) + "]"


def bench(store: Path | None = None, repeats: int = 15) -> dict:
    """Figures of ``repeats`` openings (and baseline reads, taking turns), in a store built in ``store`` (once) or in
    a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="forge-bench-player-") as tmp:
        folder = (store or Path(tmp)) / "copied"
        if not (folder / "run.sqlite").is_file():
            folder = build_store(store or Path(tmp), "bench_agents:ThousandSteps", STEPS)
            fill(folder)
        size = len(open_player(folder).get_state("trajectory")["trajectory"])
        figures = {"open": [], "plain": []}
        for _ in range(repeats):
            figures["open"] += timed(lambda: open_player(folder), 1)
            figures["plain"] += timed(lambda: read_plain(folder), 1)
    return {"figures": figures, "bytes": size}


def section(result: dict) -> str:
    """The RESULTS.md section of one run of this benchmark."""

    def median_ms(key: str) -> float:
        samples = sorted(result["figures"][key])
        return samples[len(samples) // 2] / 1e6

    def row(label: str, key: str) -> str:
        samples = sorted(result["figures"][key])
        return (
            f"| {label} | {median_ms(key):.0f} ms | {samples[0] / 1e6:.0f}–{samples[-1] / 1e6:.0f} ms "
            f"| {len(samples)} |"
        )

    opened = median_ms("open")
    return "\n".join(
        [
            "## 7. The replay player opening a long trial",
            "",
            f"Written by `benchmarks/player.py` (git {git_state()}; a pure-Python loop of 10 million additions took "
            f"{calibration():.2f} s; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs). One trial of "
            f"{STEPS:,} calls in a store of {TRIALS:,} trials; each sample from a store not yet opened to the widget's "
            f"state serialised ({result['bytes'] / 1e6:.1f} MB of JSON), in process; the two take turns.",
            "",
            "| measurement | median | min–max | repeats |",
            "|---|---:|---:|---:|",
            row("`open_run` + `ReplayPlayer` of the 1,000-step trial, state serialised", "open"),
            row("baseline: the same trial's stored events, plain sqlite3, joined as text", "plain"),
            "",
            f"**Player open: {opened:.0f} ms ({opened / median_ms('plain'):.1f}× the baseline). Goal under {GOAL_MS} ms: "
            f"{'met' if opened < GOAL_MS else 'NOT met'}.**",
            "",
        ]
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--store", type=Path, help="folder to build the store in once and reuse (default: a temporary one)"
    )
    parser.add_argument("--quick", action="store_true", help="three repeats; writes nothing")
    opts = parser.parse_args()
    text = section(bench(opts.store, 3 if opts.quick else 15))
    print(text)
    if not opts.quick:
        write_section("player.py", text)
        print("wrote its section of benchmarks/RESULTS.md")
