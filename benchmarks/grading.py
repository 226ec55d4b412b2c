"""Benchmark 12: grading one finished trial (``verify.grade``) on the bundled suites, before and after a change to
grading. SYNTHETIC data only.

    .venv/bin/python benchmarks/grading.py            # c1142b5 against this checkout; writes RESULTS.md §12
    .venv/bin/python benchmarks/grading.py --quick    # a few passes; writes nothing
    .venv/bin/python benchmarks/grading.py --before REV --after REV   # other commits (the default after: this tree)

Each side runs in a process of its own (the same Python), its tree first on PYTHONPATH: ``--before`` is a commit
extracted with ``git archive`` into a temporary folder, ``--after`` this checkout as it is (or a commit, extracted
too). A side loads its bundled packages (``task_packages/``) as ``forge run`` does, replays the gold solution, every
counterexample and every valid variant of each once through the engine (``attempt_trial`` with a ``ReplayAgent``, as
``grade_trajectory`` does), then times ``grade()`` of each trial alone (every verifier of the hidden half but the
rubric ones, and the scores), after warm-up gradings of each (the first of a process builds pint's unit registry,
which ``grade`` does before its clock starts anyway). The two processes take turns, a pass over all their trials
each, each pass after one untimed grading (the wait for the other side leaves the caches cold). Per trial: the
median (and p95) of its passes; over trials: the median, p95 and slowest of those medians, over
each side's own trials and over those both have (same package and case). Goal: at most 1 ms a trial.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import math
import os
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from time import perf_counter, perf_counter_ns
from typing import Any

from results import ROOT, calibration, git_state, write_section
from scale import median

BEFORE = "c1142b5"
"""The last commit before the work that made verdicts typed and stricter."""
GOAL_MS = 1.0
SLOWEST_SHOWN = 10
"""Packages listed by their slowest trial."""
Samples = dict[tuple, list[float]]
"""One side's samples: trial key (package, case, kind) -> nanoseconds of each pass."""


# ---------------------------------------------------------------------------------------------------- one side


def cases(hidden: Any) -> Iterator[tuple[str, str, Any]]:
    """(case name, kind, trajectory) of a hidden half's gold solution, counterexamples and valid variants."""
    yield "gold", "gold", hidden.gold
    for case in hidden.counterexamples:
        yield case.name, "counterexample", case.trajectory
    for variant in hidden.valid_variants:
        yield variant.name, "valid variant", variant.trajectory


async def replayed_trials(tree: Path) -> list[tuple[list[str], Any]]:
    """Every case of every bundled package of ``tree``, replayed once: ([package, case, kind], its GradeContext)."""
    from forge_kernel.agents import ReplayAgent
    from forge_kernel.engine.run import load_suite
    from forge_kernel.engine.trial import Images, attempt_trial
    from forge_kernel.verify import GradeContext

    images, found = Images(), []
    for package in load_suite([str(tree / "task_packages")]):
        for case, kind, trajectory in cases(package.hidden):
            done = await attempt_trial(package, images[package], ReplayAgent(trajectory), 0, 0)
            trial = done.ungraded()
            ctx = GradeContext(
                package, done.view, trial.events, trial.result, trial.status, trial.duration_s, trial.cost
            )
            found.append(([package.id, case, kind], ctx))
    return found


def one_pass(contexts: list[Any]) -> list[int]:
    """Nanoseconds of ``grade`` for each trial in turn, after one grading untimed: the process has waited while the
    other side ran its pass, and the first trial would pay for caches the wait left cold."""
    from forge_kernel.verify import grade

    grade(contexts[-1])
    samples = []
    for ctx in contexts:
        started = perf_counter_ns()
        grade(ctx)
        samples.append(perf_counter_ns() - started)
    return samples


def worker(tree: Path, warmups: int) -> None:
    """One side's process: its trials replayed and warmed, a line of JSON saying so, then one pass of gradings (a
    line of JSON) for every ``pass`` line read on stdin."""
    import forge_kernel
    from forge_kernel.verify import grade
    from forge_kernel.verify.quantities import unit_registry

    started = perf_counter()
    trials = asyncio.run(replayed_trials(tree))
    unit_registry()
    for (task, case, _), ctx in trials:
        gradings = [grade(ctx) for _ in range(warmups)]
        if case == "gold" and not gradings[-1].scores.passed:
            sys.exit(f"{task}: the gold solution does not pass")
    contexts = [ctx for _, ctx in trials]
    ready = {"trials": [key for key, _ in trials], "module": forge_kernel.__file__, "setup_s": perf_counter() - started}
    print(json.dumps(ready), flush=True)
    for line in sys.stdin:
        if line.strip() != "pass":
            break
        print(json.dumps(one_pass(contexts)), flush=True)


# ---------------------------------------------------------------------------------------------------- the run


def extracted(rev: str, folder: Path) -> Path:
    """The tree of commit ``rev`` written into ``folder`` (``git archive``)."""
    tar = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", rev], capture_output=True, check=True)
    with tarfile.open(fileobj=io.BytesIO(tar.stdout)) as archive:
        archive.extractall(folder, filter="data")
    return folder


def commit(rev: str) -> str:
    """The commit id of ``rev``, short (as ``git_state`` gives this checkout's)."""
    out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", rev], capture_output=True, text=True)
    return out.stdout.strip() or rev


@dataclass
class Side:
    """One side's process and what it reported."""

    name: str
    tree: Path
    label: str
    """Its code, as the results name it (a commit id)."""
    process: subprocess.Popen | None = None
    trials: list[tuple[str, str, str]] | None = None
    setup_s: float = 0.0

    def start(self, warmups: int) -> None:
        """Start the side's process (it replays and warms its trials)."""
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--worker", str(self.tree), "--warmups", str(warmups)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=self.tree,
            env={**os.environ, "PYTHONPATH": str(self.tree)},
        )

    def reply(self) -> Any:
        """The next line of JSON the process writes."""
        assert self.process is not None and self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            sys.exit(f"{self.name}: its process ended (exit {self.process.wait()})")
        return json.loads(line)

    def ready(self) -> None:
        """Wait for the process to have its trials, and check it runs this side's code."""
        ready = self.reply()
        if not Path(ready["module"]).resolve().is_relative_to(self.tree.resolve()):
            sys.exit(f"{self.name}: forge_kernel was imported from {ready['module']}, not {self.tree}")
        self.trials, self.setup_s = [tuple(key) for key in ready["trials"]], ready["setup_s"]

    def graded(self) -> list[float]:
        """One pass of gradings over the side's trials, in nanoseconds."""
        assert self.process is not None and self.process.stdin is not None
        self.process.stdin.write("pass\n")
        self.process.stdin.flush()
        return self.reply()

    def stop(self) -> None:
        """End the process (stdin closed: it leaves its loop)."""
        if self.process is not None:
            self.process.communicate()


def bench(sides: list[Side], passes: int, warmups: int) -> dict[str, Samples]:
    """Each side's samples: trial key -> nanoseconds per pass, the sides taking turns pass by pass (the order
    swapped each pass)."""
    for side in sides:
        side.start(warmups)
    try:
        for side in sides:
            side.ready()
        samples: dict[str, Samples] = {s.name: {key: [] for key in s.trials or []} for s in sides}
        for n in range(passes):
            for side in sides if n % 2 == 0 else sides[::-1]:
                for key, ns in zip(side.trials or [], side.graded(), strict=True):
                    samples[side.name][key].append(ns)
    finally:
        for side in sides:
            side.stop()
    return samples


# ---------------------------------------------------------------------------------------------------- figures


def p95(values: list[float]) -> float:
    """The 95th percentile, nearest rank."""
    s = sorted(values)
    return s[max(0, math.ceil(0.95 * len(s)) - 1)]


def ms(ns: float) -> str:
    """Nanoseconds as milliseconds, three decimals."""
    return f"{ns / 1e6:.3f} ms"


@dataclass
class Summary:
    """One side's per-trial medians over a set of trials."""

    medians: dict[tuple, float]

    @classmethod
    def of(cls, samples: Samples, keys: list[tuple]) -> Summary:
        """The medians of the trials ``keys``."""
        return cls({key: median(samples[key]) for key in keys})

    @property
    def slowest(self) -> tuple:
        """The key of the trial with the highest median."""
        return max(self.medians, key=self.medians.__getitem__)

    @property
    def over(self) -> int:
        """How many trials take longer than the goal."""
        return sum(v > GOAL_MS * 1e6 for v in self.medians.values())

    def row(self, label: str) -> str:
        """Its row of the summary table."""
        values = list(self.medians.values())
        task, case, _ = self.slowest
        return (
            f"| {label} | {len(values)} | {ms(median(values))} | {ms(p95(values))} | {ms(max(values))} "
            f"({task}, {case}) | {ms(sum(values) / len(values))} | {self.over} |"
        )


def ratios(before: Summary, after: Summary) -> str:
    """after / before of the median trial and of the mean (the grading of the whole set)."""
    b, a = list(before.medians.values()), list(after.medians.values())
    return f"median trial {median(a) / median(b):.2f}×, mean {sum(a) / len(a) / (sum(b) / len(b)):.2f}×"


def by_package(samples: Samples) -> dict[str, tuple[tuple, float, float]]:
    """Package -> its slowest trial: key, median and p95 of its passes."""
    found: dict[str, tuple[tuple, float, float]] = {}
    for key, ns in samples.items():
        if key[0] not in found or median(ns) > found[key[0]][1]:
            found[key[0]] = (key, median(ns), p95(ns))
    return found


def slowest_rows(before: Samples, after: Samples) -> list[str]:
    """The table of the packages whose slowest trial is slowest after, and how many packages miss the goal."""

    def cell(found: dict[str, tuple[tuple, float, float]], task: str) -> str:
        if task not in found:
            return "—"
        (_, case, _), med, high = found[task]
        return f"{ms(med)} ({ms(high)}), {case}"

    was, now = by_package(before), by_package(after)
    counts = [Counter(key[0] for key in side) for side in (before, after)]
    rows = [
        "| package | trials before / after | slowest before | slowest after | after / before |",
        "|---|---:|---|---|---:|",
    ]
    for task in sorted(now, key=lambda t: -now[t][1])[:SLOWEST_SHOWN]:
        versus = f"{now[task][1] / was[task][1]:.2f}×" if task in was else "—"
        rows.append(
            f"| {task} | {counts[0][task]} / {counts[1][task]} | {cell(was, task)} | {cell(now, task)} | {versus} |"
        )
    over = [sum(v[1] > GOAL_MS * 1e6 for v in found.values()) for found in (was, now)]
    return [
        *rows,
        "",
        f"Packages whose slowest trial takes over {GOAL_MS:g} ms: {over[0]} of {len(was)} before, {over[1]} of "
        f"{len(now)} after.",
    ]


def summary_rows(before: Side, after: Side, samples: dict[str, Samples]) -> list[str]:
    """The summary table (each side's own trials, then those both have), the ratios and the goal's line."""
    common = [key for key in samples[before.name] if key in samples[after.name]]
    own = {s.name: Summary.of(samples[s.name], list(samples[s.name])) for s in (before, after)}
    shared = {s.name: Summary.of(samples[s.name], common) for s in (before, after)}
    final = own[after.name]
    worst = final.slowest
    worst_ms = final.medians[worst] / 1e6
    met = "met" if worst_ms <= GOAL_MS else f"NOT met ({final.over} of {len(final.medians)} trials over)"
    return [
        "| trials | count | median trial | p95 trial | slowest trial | mean | over 1 ms |",
        "|---|---:|---:|---:|---|---:|---:|",
        own[before.name].row(f"before ({before.label}), its own trials"),
        final.row(f"after ({after.label}), its own trials"),
        shared[before.name].row("before, the trials both have"),
        shared[after.name].row("after, the trials both have"),
        "",
        f"- after / before, the trials both have ({len(common)}): {ratios(shared[before.name], shared[after.name])}; "
        f"each side's own trials: {ratios(own[before.name], final)}.",
        f"- Setting up (packages loaded, trials replayed, warm-ups): {before.setup_s:.1f} s before, "
        f"{after.setup_s:.1f} s after.",
        "",
        f"**Grading after: median trial {ms(median(list(final.medians.values())))}, slowest {worst_ms:.3f} ms "
        f"({worst[0]}, {worst[1]}). Goal at most {GOAL_MS:g} ms a trial: {met}.**",
    ]


def section(before: Side, after: Side, samples: dict[str, Samples], passes: int, warmups: int) -> str:
    """The RESULTS.md section of one run of this benchmark."""
    issue = " (the last commit before verdicts became typed and stricter)" if before.label == BEFORE else ""
    return "\n".join(
        [
            "## 12. Grading one finished trial on the bundled suites, before and after",
            "",
            f"Written by `benchmarks/grading.py` (a pure-Python loop of 10 million additions took {calibration():.2f} s; "
            f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs). Before: git {before.label}{issue}; "
            f"after: git {after.label}. Each side in its own process (the same Python, its tree on PYTHONPATH), the "
            "two taking turns: the bundled packages' gold solutions, counterexamples and valid variants, each replayed "
            f"once through the engine, then `verify.grade` of each trial timed alone, {passes} passes after {warmups} "
            "warm-up gradings (the unit registry built before), each pass after one untimed grading (a side's wait for "
            "the other leaves its caches cold). Per trial the median of its passes; over trials the "
            "median, p95 (nearest rank), slowest and mean of those medians. Garbage collection left on; other "
            "processes on the machine not controlled.",
            "",
            *summary_rows(before, after, samples),
            "",
            f"The {SLOWEST_SHOWN} packages whose slowest trial (median of its passes, p95 in brackets) is slowest after:",
            "",
            *slowest_rows(samples[before.name], samples[after.name]),
            "",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=BEFORE, help=f"the commit before the change (default {BEFORE})")
    parser.add_argument("--after", help="the commit after it (default: this checkout as it is)")
    parser.add_argument("--passes", type=int, default=80, help="timed passes over every trial (default 80)")
    parser.add_argument("--warmups", type=int, default=3, help="untimed gradings of each trial first (default 3)")
    parser.add_argument("--quick", action="store_true", help="five passes; writes nothing")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.worker:
        worker(opts.worker, opts.warmups)
        return
    passes = 5 if opts.quick else opts.passes
    with tempfile.TemporaryDirectory(prefix="forge-bench-grading-") as tmp:
        before = Side("before", extracted(opts.before, Path(tmp) / "before"), commit(opts.before))
        after = (
            Side("after", extracted(opts.after, Path(tmp) / "after"), commit(opts.after))
            if opts.after
            else Side("after", ROOT, git_state())
        )
        samples = bench([before, after], passes, opts.warmups)
        text = section(before, after, samples, passes, opts.warmups)
    print(text)
    if not opts.quick:
        write_section("grading.py", text)
        print("wrote its section of benchmarks/RESULTS.md")


if __name__ == "__main__":
    main()
