"""Benchmark 6: the read side at scale, ``forge compare`` and ``forge ledger`` on a run of about 100,000 trials.
SYNTHETIC data only.

    .venv/bin/python benchmarks/scale.py                # builds the run in a temporary folder, writes RESULTS.md §6
    .venv/bin/python benchmarks/scale.py --store DIR    # builds the run in DIR once, and reuses it after
    .venv/bin/python benchmarks/scale.py --quick        # 12 trials per task and agent, one repeat; writes nothing

The run: the six reference agents on the bundled packages with 3 trials each, then its trials (events, scores
and verdicts with them) copied through SQL under new trial indices, in one transaction, to about 100,000 trials
(99,216 with 106 packages: 156 per task and agent). Each figure is a whole process (wall time and peak RSS from the kernel's accounting),
beside a baseline of the same reads through plain sqlite3 in plain Python, in the same run, interleaved.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import sqlite3
import subprocess
import sys
import tempfile
from collections import defaultdict
from contextlib import closing
from pathlib import Path
from time import perf_counter

from results import PROCESS_ENV, ROOT, calibration, git_state, publish

FORGE = Path(sys.executable).with_name("forge")
AGENTS = ("baseline-v1", "candidate-v2")
"""The two agents compared."""
TRIALS = 3
"""Trials per task and agent of the run that is copied."""
TARGET = 100_000
"""About how many trials the run is copied to."""


# ---------------------------------------------------------------------------------------------------- the run


def build(run_dir: Path, copies: int | None = None) -> int:
    """The reference run, then its trials copied ``copies`` times in all (by default, as often as makes about
    ``TARGET`` trials); the number of trials."""
    sys.path.insert(0, str(ROOT))
    from forge_kernel.agents import REFERENCE_SET
    from forge_kernel.engine import RunSpec, execute

    spec = RunSpec(suite=[str(ROOT / "task_packages")], agents=list(REFERENCE_SET), trials=TRIALS, seed=0)
    ran = asyncio.run(execute(spec, run_dir, progress=False)).total
    return replicate(run_dir / "run.sqlite", copies or max(1, round(TARGET / ran)))


def replicate(db_path: Path, copies: int) -> int:
    """Copy every trial with its events, call data, scores and verdicts (sharing their texts) until there are
    ``copies`` of each (the original included): copy n of trial i has trial id i + n * max id and trial index
    k + n * (max index + 1). One transaction; the number of trials."""
    db = sqlite3.connect(db_path, isolation_level=None)
    top, per = db.execute("SELECT MAX(trial_id), MAX(trial) + 1 FROM trials").fetchone()
    shift = {"trial_id": "trial_id + n * :top", "trial": "trial + n * :per"}
    db.execute("BEGIN")
    for table in ("trials", "events", "call_data", "scores", "verdict_rows") if copies > 1 else ():
        columns = ", ".join(shift.get(row[1], row[1]) for row in db.execute(f"PRAGMA table_info({table})"))
        db.execute(
            f"WITH RECURSIVE n(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM n WHERE n < :copies) "
            f"INSERT INTO {table} SELECT {columns} FROM n, {table} WHERE trial_id <= :top ORDER BY n, trial_id",
            {"copies": copies - 1, "top": top, "per": per},
        )
    db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    (count,) = db.execute("SELECT COUNT(*) FROM trials").fetchone()
    db.close()
    return count


# ---------------------------------------------------------------------------------------------------- baselines


def read_only(run_dir: str) -> sqlite3.Connection:
    return sqlite3.connect(f"{Path(run_dir, 'run.sqlite').resolve().as_uri()}?mode=ro", uri=True)


def plain_compare(run_dir: str, *agents: str) -> None:
    """Baseline for ``forge compare``: the rows a comparison of two agents reads, through plain sqlite3, folded in
    plain Python (tool time and success, faults, replays, denials, the stored hash of the writes, failing verdicts), then
    the tasks every trial of each agent passed."""
    db, marks = read_only(run_dir), ",".join("?" * len(agents))
    trials = {
        r[0]: r
        for r in db.execute(
            "SELECT t.trial_id, t.task_id, t.agent, t.status, t.answer, t.duration_s, t.queued_s, t.cost, t.writes, "
            f"s.passed FROM trials t JOIN scores s USING (trial_id) WHERE t.agent IN ({marks})",
            agents,
        )
    }
    facts = defaultdict(lambda: [0.0, 0, 0, 0, 0, 0])
    for trial_id, latency, ok, fault, flags, denied in db.execute(
        "SELECT e.trial_id, latency_ms, ok, fault, flags, denied FROM trials t JOIN events e "
        f"USING (trial_id) WHERE t.agent IN ({marks})",
        agents,
    ):
        f = facts[trial_id]
        f[0] += latency
        f[1] += 1
        f[2] += ok
        f[3] += fault is not None
        f[4] += "idempotent_replay" in flags
        f[5] += denied is not None
    failing = defaultdict(list)
    for trial_id, verifier, category, severity in db.execute(
        "SELECT v.trial_id, verifier_id, category, severity FROM trials t JOIN verdicts v USING (trial_id) "
        f"WHERE t.agent IN ({marks}) AND v.passed = 0",
        agents,
    ):
        failing[trial_id].append((verifier, category, severity))
    fingerprints = {trial_id: row[8] for trial_id, row in trials.items()}
    strict = defaultdict(lambda: True)
    for _, task, agent, *_, passed in trials.values():
        strict[agent, task] &= bool(passed)
    print(len(trials), len(fingerprints), len(failing), sum(strict.values()))


def plain_ledger(run_dir: str) -> None:
    """Baseline for ``forge ledger``: the failed trials, their failing verdicts and failed calls through plain
    sqlite3, one CSV row per failed trial (to stdout)."""
    db = read_only(run_dir)
    failed = db.execute(
        "SELECT t.trial_id, t.task_id, p.version, s.hidden_version, t.agent, t.trial, t.status, "
        "s.missing FROM trials t JOIN scores s USING (trial_id) JOIN packages p USING (task_id) "
        "WHERE s.passed = 0"
    ).fetchall()
    verdicts, calls = defaultdict(list), defaultdict(list)
    for trial_id, *rest in db.execute(
        "SELECT v.trial_id, verifier_id, category, severity, steps FROM scores s "
        "JOIN verdicts v USING (trial_id) WHERE s.passed = 0 AND v.passed = 0"
    ):
        verdicts[trial_id].append(rest)
    for trial_id, *rest in db.execute(
        "SELECT e.trial_id, step, tool, denied, error FROM scores s JOIN events e "
        "USING (trial_id) WHERE s.passed = 0 AND e.ok = 0"
    ):
        calls[trial_id].append(rest)
    out = csv.writer(sys.stdout)
    for trial_id, *rest in failed:
        out.writerow(
            [trial_id, *rest, ",".join(v[0] for v in verdicts[trial_id]), ",".join(str(c[0]) for c in calls[trial_id])]
        )


# ---------------------------------------------------------------------------------------------------- measuring


LAUNCHER = """
import os, sys, time
started = time.perf_counter()
null = [(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)]
_, status, usage = os.wait4(os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ, file_actions=null), 0)
print(time.perf_counter() - started, usage.ru_maxrss, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status))
"""
"""Starts a timed command (its stdout to /dev/null) and prints its wall seconds, peak RSS (KiB), CPU seconds and exit
code. A small process of its own: on Linux a command's peak RSS counts that of the process that started it (the
memory they shared until its exec), and this script's own grows to hundreds of MB as it builds and reads stores."""


def whole_process(argv: list[str], out: Path | None = None) -> tuple[float, float, float]:
    """Wall seconds, peak RSS (MiB) and CPU seconds (user + system) of one process, from its start to its exit,
    started by ``LAUNCHER``. A failure stops the script, and so does a command that did not write ``out`` afresh
    (``forge compare`` exits 1 on a red gate, as on a crash)."""
    if out is not None:
        out.unlink(missing_ok=True)
    with tempfile.TemporaryFile() as err:
        launched = subprocess.run(
            [sys.executable, "-I", "-S", "-c", LAUNCHER, *argv],
            stdout=subprocess.PIPE,
            stderr=err,
            cwd=ROOT,
            env=PROCESS_ENV,
            text=True,
        )
        report = launched.stdout.split()
        code = int(report[3]) if len(report) == 4 else launched.returncode
        if len(report) != 4 or code not in (0, 1) or (out is not None and not out.is_file()):
            err.seek(0)
            sys.exit(f"{' '.join(argv)} exited {code}: {err.read().decode(errors='replace')}")
    wall, peak_kib, cpu = map(float, report[:3])
    return wall, peak_kib / 1024, cpu


def median(values: list[float]) -> float:
    s = sorted(values)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def measure(
    commands: dict[str, tuple[list[str], Path | None]], repeats: int
) -> dict[str, list[tuple[float, float, float]]]:
    """Each command (argv, the file it must write) ``repeats`` times, in turn (A B A B ...), after one run of each
    that is not counted."""
    for argv, out in commands.values():
        whole_process(argv, out)
    samples = {name: [] for name in commands}
    for _ in range(repeats):
        for name, (argv, out) in commands.items():
            samples[name].append(whole_process(argv, out))
    return samples


def row(label: str, runs: list[tuple[float, float, float]], goal: str) -> str:
    walls, peaks, cpus = ([run[i] for run in runs] for i in range(3))
    return (
        f"| {label} | {median(walls):.2f} s | {min(walls):.2f}–{max(walls):.2f} s | {median(cpus):.2f} s "
        f"| {median(peaks):,.0f} MiB | {len(runs)} | {goal} |"
    )


def ratio(samples: dict, name: str) -> str:
    """A command's median wall time over its plain baseline's, and the same for CPU time."""
    of = {key: [median([run[i] for run in samples[key]]) for i in (0, 2)] for key in (name, f"plain {name}")}
    return f"{of[name][0] / of[f'plain {name}'][0]:.1f}× (CPU {of[name][1] / of[f'plain {name}'][1]:.1f}×)"


def section(
    trials: int, packages: int, build_s: float | None, size_mb: float, samples: dict, git: str, calibration_s: float
) -> str:
    a, b = AGENTS
    return "\n".join(
        [
            "## 6. The read side at scale: forge compare and forge ledger",
            "",
            f"Written by `benchmarks/scale.py` (its own run: git {git}; a pure-Python loop of 10 million additions took "
            f"{calibration_s:.2f} s). The run: the six reference agents × {packages} packages × {TRIALS} trials, then "
            f"copied in SQL to {trials:,} trials ({trials // (6 * packages)} per task and agent), a {size_mb:,.0f} MB store "
            f"{'reused from an earlier build' if build_s is None else f'built in {build_s:.0f} s'}. Each sample is one "
            "whole process (wall time; peak RSS from `wait4`; bytecode cached, as for an installed package), both "
            "cores free to use, the commands taking turns; output to /dev/null. The baselines read the same rows through plain "
            "`sqlite3` and fold them in plain Python (no pandas, pydantic or forge import): the cost of the data alone. "
            "CPU is user + system time, which other processes on the machine disturb less than the wall time.",
            "",
            f"Ratios to the baselines (median wall): compare {ratio(samples, 'compare')}, ledger {ratio(samples, 'ledger')}.",
            "",
            "| command | median wall | min–max | median CPU | median peak RSS | runs | goal |",
            "|---|---:|---:|---:|---:|---:|---|",
            row(
                f"`forge compare RUN RUN --baseline-agent {a} --candidate-agent {b} --json OUT`",
                samples["compare"],
                "≤ 5 s, ≤ 500 MB",
            ),
            row(
                "baseline: the same two agents' trials, events and failing verdicts, plain sqlite3",
                samples["plain compare"],
                "—",
            ),
            row("`forge ledger RUN --csv OUT`", samples["ledger"], "≤ 5 s"),
            row(
                "baseline: the failed trials, their failing verdicts and failed calls, plain sqlite3, as CSV",
                samples["plain ledger"],
                "—",
            ),
            "",
        ]
    )


def timed_commands(run: str, out: Path) -> dict[str, tuple[list[str], Path | None]]:
    """The commands timed on a run folder, each with the file it must write (in folder ``out``): ``forge compare``
    and ``forge ledger``, and their plain baselines."""
    me = [sys.executable, __file__, "--plain"]
    return {
        "compare": (
            [
                str(FORGE),
                "compare",
                run,
                run,
                "--baseline-agent",
                AGENTS[0],
                "--candidate-agent",
                AGENTS[1],
                "--json",
                str(out / "compare.json"),
            ],
            out / "compare.json",
        ),
        "plain compare": ([*me, "compare", run, *AGENTS], None),
        "ledger": ([str(FORGE), "ledger", run, "--csv", str(out / "ledger.csv")], out / "ledger.csv"),
        "plain ledger": ([*me, "ledger", run], None),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="run folder to build once and reuse (default: a temporary one)")
    parser.add_argument("--repeats", type=int, default=3, help="counted runs of each command (default 3)")
    parser.add_argument("--quick", action="store_true", help="12 trials per task and agent, one repeat; writes nothing")
    parser.add_argument("--plain", nargs="+", help=argparse.SUPPRESS)  # a baseline, in a process of its own
    opts = parser.parse_args()
    if opts.plain:
        {"compare": plain_compare, "ledger": plain_ledger}[opts.plain[0]](*opts.plain[1:])
        return

    tmp = tempfile.TemporaryDirectory(prefix="forge-scale-")
    run_dir = opts.store or Path(tmp.name) / "run"
    started = perf_counter()
    if (run_dir / "run.sqlite").is_file():
        print(f"reusing {run_dir}", flush=True)
        build_s = None
    else:
        print(f"building the run in {run_dir} ...", flush=True)
        build(run_dir, 4 if opts.quick else None)
        build_s = perf_counter() - started
    with closing(sqlite3.connect(run_dir / "run.sqlite")) as db:
        trials, packages = db.execute("SELECT COUNT(*), COUNT(DISTINCT task_id) FROM trials").fetchone()
    size_mb = (run_dir / "run.sqlite").stat().st_size / 1e6
    commands = timed_commands(str(run_dir), Path(tmp.name))
    print(f"measuring ({trials:,} trials) ...", flush=True)
    samples = measure(commands, 1 if opts.quick else opts.repeats)
    text = section(trials, packages, build_s, size_mb, samples, git_state(), calibration())
    publish("scale.py", text, opts.quick)


if __name__ == "__main__":
    main()
