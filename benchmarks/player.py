"""Benchmark 7: the replay player opening a 1,000-step trial from a 100,000-trial store. SYNTHETIC data only.

    .venv/bin/python benchmarks/player.py              # prints the figures
    .venv/bin/python benchmarks/player.py --store DIR  # builds the store in DIR once, and reuses it after

One trial of 1,000 calls (``bench_agents.ThousandSteps``) stored as in benchmark 6, then 99,999 copies of a short
trial of another agent added to the same store. Timed, from a store not yet opened: ``open_run``, ``ReplayPlayer``
(the trial read, its compact trajectory built, set as the widget's trait and serialised as the one JSON buffer the
front end receives). Goal: under 300 ms.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
from pathlib import Path
from time import perf_counter_ns

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from forge_kernel import open_run  # noqa: E402
from forge_kernel.store import RunStore  # noqa: E402
from forge_kernel.widgets import ReplayPlayer  # noqa: E402
from timeline import TASK, build_store, timed  # noqa: E402  (benchmarks/timeline.py)

STEPS, TRIALS = 1000, 100_000


def fill(folder: Path, trials: int = TRIALS) -> None:
    """Add copies of the stored trial's first ten calls, as another agent's trials, until the store holds ``trials``."""
    with open_run(folder) as run:
        short = run.trial(TASK, "thousand-steps", 0)
        short = dataclasses.replace(short, events=short.events[:10], agent="filler", trial_id=None)
    with RunStore.open(folder) as store:
        for start in range(0, trials - 1, 5000):
            store.write_trials([dataclasses.replace(short, trial=k)
                                for k in range(start, min(start + 5000, trials - 1))])


def open_player(folder: Path) -> ReplayPlayer:
    """The player of the 1,000-step trial, its state serialised for the front end (as when it is displayed)."""
    with open_run(folder) as run:
        return ReplayPlayer(run, task=TASK, agent="thousand-steps", trial=0)


def bench(store: Path | None = None, repeats: int = 15) -> dict:
    """Figures of ``repeats`` openings, in a store built in ``store`` (once) or in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="forge-bench-player-") as tmp:
        folder = (store or Path(tmp)) / "copied"
        if not (folder / "run.sqlite").is_file():
            folder = build_store(store or Path(tmp), "bench_agents:ThousandSteps", STEPS)
            fill(folder)
        size = len(open_player(folder).get_state("trajectory")["trajectory"])
        figures = {"open": timed(lambda: open_player(folder), repeats)}
    return {"figures": figures, "bytes": size}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="folder to build the store in once and reuse (default: a temporary one)")
    result = bench(parser.parse_args().store)
    samples = sorted(result["figures"]["open"])
    print(f"open a {STEPS}-step trial's player from a {TRIALS:,}-trial store: median {samples[len(samples) // 2] / 1e6:.0f} ms, "
          f"max {samples[-1] / 1e6:.0f} ms; state {result['bytes'] / 1e6:.1f} MB of JSON; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
