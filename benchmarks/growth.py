"""Benchmark 15: flat cost as the work grows. The store and what reads it at about 1,000, 10,000 and 100,000 trials,
and at 1, 10, 100 and 1,000 calls per trial, each figure beside its goal. SYNTHETIC data only.

    .venv/bin/python benchmarks/growth.py            # builds every store in a temporary folder, writes RESULTS.md §15
    .venv/bin/python benchmarks/growth.py --quick    # small sizes, one repeat; writes nothing

Trials axis: the six reference agents on the bundled packages, one trial each (``replay.reference_run``), copied in
SQL (``scale.replicate``) to about the size less 512, then 512 of the reference trials (new trial indices) stored
through the store's real write path: ``trial_rows`` and ``RunStore.write_rows``, ``MOST_AT_ONCE`` trials a
transaction, as the run's grader stores what it graded (the grading itself is benchmark 12's). Calls axis: one trial
of 1,000 calls (``bench_agents.LongTrial``, run as benchmark 10 runs its trial), and a store of 1,000 trials of its
first 1, 10, 100 or 1,000 calls each, written the same way into an emptied copy of its store.

On each store, once it is closed: its size per trial (file bytes / trials); opening one trial at random
(``open_run(dir).trial(task, agent, k)`` from a store not yet opened in the process, beside its events read with
plain sqlite3); the failure table (``FailureBrowser(dir)``, the failed trials' rows ready to show, beside the failed
trials, their failing verdicts and failed calls read with plain sqlite3 as CSV); ``forge replay`` as a whole process
(beside ``python -c pass``); on the trials axis, ``forge compare`` as a whole process (beside its plain sqlite3
baseline). Then the release notebook over the 10,000-trial comparison (``release.bench``). Where a goal is not met,
the section says where the cost goes: bytes per table and column (SQLite's ``dbstat``), or a profile of one more
sample (cProfile).
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import gc
import io
import os
import pstats
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable
from contextlib import closing, redirect_stdout
from pathlib import Path
from time import perf_counter

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import release  # noqa: E402  (benchmarks/release.py)
import replay  # noqa: E402  (benchmarks/replay.py)
import scale  # noqa: E402  (benchmarks/scale.py)
from bench_agents import LongTrial  # noqa: E402  (benchmarks/bench_agents.py)
from forge_kernel import open_run  # noqa: E402
from forge_kernel.engine._grader import MOST_AT_ONCE  # noqa: E402
from forge_kernel.engine.trial import graded, replayed  # noqa: E402
from forge_kernel.store import DB_NAME, RunStore, TrialRecord, Ungraded, trial_rows  # noqa: E402
from forge_kernel.widgets import FailureBrowser  # noqa: E402
from player import read_plain  # noqa: E402  (benchmarks/player.py)
from results import PROCESS_ENV, calibration, git_state, publish  # noqa: E402
from timeline import TASK, build_store, timed  # noqa: E402  (benchmarks/timeline.py)

WRITTEN = 2 * MOST_AT_ONCE
"""Trials stored through the real write path into each store of the trials axis."""
TRIAL_SIZES, QUICK_TRIAL_SIZES = (1_000, 10_000, 100_000), (1_000, 3_000)
CALLS = (1, 10, 100, 1_000)
"""Calls per trial on the calls axis (the first calls of one 1,000-call trial)."""
CALL_TRIALS, QUICK_CALL_TRIALS = 1_000, 100
"""Trials per store on the calls axis."""
REPEATS = {"open": 15, "failures": 5, "compare": 3, "replay": 15, "release": 3}
QUICK_REPEATS = {"open": 3, "failures": 1, "compare": 1, "replay": 1, "release": 1}
GOALS = {"bytes": 3_000, "open": 0.1, "failures": 1.0, "compare": 5.0, "compare_mb": 500, "replay": 0.2}
"""Bytes per trial, seconds, and the peak RSS of compare in MB (10^6 bytes)."""


# ---------------------------------------------------------------------------------------------------- the stores


@dataclasses.dataclass
class Store:
    """One store and the figures measured on it."""

    label: str
    path: Path
    key: tuple[str, str]
    """The task and agent whose trial is replayed."""
    writes: list[tuple[float, float, int, int]] = dataclasses.field(default_factory=list)
    """Per transaction: seconds making the rows, seconds writing them, trials, calls."""
    trials: int = 0
    calls: int = 0
    """Calls of all its trials."""
    bytes: int = 0
    fixed: int = 0
    """The bytes of the same store without its trials: the run's manifest and its packages' files."""
    failed: int = 0
    figures: dict[str, list] = dataclasses.field(default_factory=dict)


def store_like_the_grader(run_dir: Path, records: list[TrialRecord]) -> list[tuple[float, float, int, int]]:
    """Store ``records`` as a run's grader stores the trials it graded: rows made (``trial_rows``), then written
    (``RunStore.write_rows``), ``MOST_AT_ONCE`` trials a transaction; per transaction, the seconds of each part.
    The objects made before are frozen (``gc.freeze``), as the harness freezes its own before it forks the grader:
    no collection walks them."""
    timings = []
    gc.collect()
    gc.freeze()
    try:
        with RunStore.open(run_dir) as store:
            for start in range(0, len(records), MOST_AT_ONCE):
                batch = records[start : start + MOST_AT_ONCE]
                started = perf_counter()
                rows = [trial_rows(record) for record in batch]
                made = perf_counter()
                store.write_rows(rows)
                calls = sum(len(r.events) for r in batch)
                timings.append((made - started, perf_counter() - made, len(batch), calls))
    finally:
        gc.unfreeze()
    return timings


def fields_of(trial: Ungraded, kind: type[Ungraded] = TrialRecord) -> dict:
    """A trial's fields as a plain ``kind`` has them, its events decoded (not while a write is timed)."""
    return {f.name: getattr(trial, f.name) for f in dataclasses.fields(kind)}


def decoded(run_dir: Path, keys: list[tuple[str, str, int]]) -> list[TrialRecord]:
    """Stored trials read back as plain records."""
    with open_run(run_dir) as run:
        return [TrialRecord(**fields_of(run.trial(*key))) for key in keys]


def copy_store(source: Path, target: Path) -> Path:
    target.mkdir(parents=True)
    shutil.copy(source / DB_NAME, target / DB_NAME)
    return target


def query(run_dir: Path, sql: str, *args) -> list[tuple]:
    """The rows of a query of a run's store, opened read-only and closed after."""
    with closing(scale.read_only(str(run_dir))) as db:
        return db.execute(sql, args).fetchall()


def count(run_dir: Path, sql: str, *args) -> int:
    return query(run_dir, sql, *args)[0][0]


def trials_axis(folder: Path, sizes: tuple[int, ...]) -> list[Store]:
    """The reference run, then a store of about each size: copies of its trials in SQL, and WRITTEN of them stored
    through the real write path under new trial indices."""
    reference = folder / "reference"
    replay.reference_run(reference)
    base = count(reference, "SELECT COUNT(*) FROM trials")
    keys = random.Random(15).sample(query(reference, "SELECT task_id, agent, trial FROM trials"), WRITTEN)
    records = decoded(reference, keys)
    fixed = file_bytes(emptied(reference, folder / "reference-emptied"))
    stores = []
    for size in sizes:
        copies = max(1, round((size - WRITTEN) / base))
        path = copy_store(reference, folder / f"trials-{size}")
        after = scale.replicate(path / DB_NAME, copies)
        offset = count(path, "SELECT MAX(trial) + 1 FROM trials")
        shifted = [dataclasses.replace(r, trial=r.trial + offset, trial_id=None) for r in records]
        store = Store(f"{after + WRITTEN:,} trials", path, (replay.TASK, replay.AGENT), fixed=fixed)
        store.writes = store_like_the_grader(path, shifted)
        stores.append(store)
        print(f"built {store.label} ({copies} copies of {base})", flush=True)
    return stores


def file_bytes(run_dir: Path) -> int:
    """The bytes of a run's store, its -wal file included."""
    return sum(f.stat().st_size for f in run_dir.glob(f"{DB_NAME}*"))


def emptied(source: Path, target: Path) -> Path:
    """A copy of a store without its trials: the run's manifest and packages only."""
    copy_store(source, target)
    with closing(sqlite3.connect(target / DB_NAME, isolation_level=None)) as db:
        for table in ("events", "call_data", "turns", "verdict_rows", "verdict_texts", "scores", "trials"):
            db.execute(f"DELETE FROM {table}")
        db.execute("VACUUM")
    return target


def first_calls(run_dir: Path, counts: tuple[int, ...]) -> list[TrialRecord]:
    """The stored ``LongTrial`` trial cut to each count of its first calls, and graded again as such (its verdicts
    are those of the calls it keeps)."""
    with open_run(run_dir) as run:
        trial = run.trial(TASK, LongTrial.name, 0)
        package, image = run.package(TASK), run.image(TASK)
        kept = fields_of(trial, Ungraded)
        cut = [Ungraded(**{**kept, "events": trial.events[:n]}) for n in counts]
        return [graded(t, package, replayed(image, t.events)) for t in cut]


def calls_axis(folder: Path, per_store: int) -> list[Store]:
    """One trial of ``LongTrial.calls`` calls, then a store of ``per_store`` trials of each number of its first calls."""
    long_trial = build_store(folder / "long", f"bench_agents:{LongTrial.__name__}", LongTrial.calls)
    graded_first = first_calls(long_trial, CALLS)
    empty = emptied(long_trial, folder / "empty")
    stores = []
    for calls, record in zip(CALLS, graded_first):
        path = copy_store(empty, folder / f"calls-{calls}")
        records = [dataclasses.replace(record, trial=k) for k in range(per_store)]
        store = Store(
            f"{calls:,} call{'s' if calls > 1 else ''}", path, (TASK, LongTrial.name), fixed=file_bytes(empty)
        )
        store.writes = store_like_the_grader(path, records)
        stores.append(store)
        print(f"built {per_store:,} trials of {store.label}", flush=True)
    return stores


# ---------------------------------------------------------------------------------------------------- measuring


def open_trial(run_dir: Path, key: tuple[str, str, int]) -> None:
    with open_run(run_dir) as run:
        run.trial(*key)


def closed(browser: FailureBrowser) -> int:
    """Close a failure browser and its run; how many failed trials its table holds."""
    total = browser.table.total
    browser.run.close()
    browser.table.close()
    browser.close()
    return total


def plain_failures(run_dir: Path) -> None:
    """The baseline of the failure table: ``scale.plain_ledger``'s CSV, written to memory."""
    with redirect_stdout(io.StringIO()):
        scale.plain_ledger(str(run_dir))


def in_process(store: Store, repeats: dict[str, int], rng: random.Random) -> None:
    """Opening random trials and the failure table, each beside its baseline, taking turns."""
    keys = rng.sample(query(store.path, "SELECT task_id, agent, trial FROM trials"), repeats["open"])
    figures = store.figures
    figures.update({"open": [], "open plain": [], "failures": [], "failures plain": []})
    for key in keys:
        figures["open"] += timed(lambda: open_trial(store.path, key), 1)  # noqa: B023  (called here)
        figures["open plain"] += timed(lambda: read_plain(store.path, *key), 1)  # noqa: B023
    for _ in range(repeats["failures"]):
        browsers: list[FailureBrowser] = []
        figures["failures"] += timed(lambda: browsers.append(FailureBrowser(store.path)), 1)  # noqa: B023
        store.failed = closed(browsers[0])
        figures["failures plain"] += timed(lambda: plain_failures(store.path), 1)
    for name in figures:
        figures[name] = [ns / 1e9 for ns in figures[name]]


def whole_processes(store: Store, repeats: dict[str, int], compare: bool, out: Path) -> None:
    """``forge replay`` of a trial in the middle of the store (and ``forge compare``), each beside its baseline."""
    task, agent = store.key
    middle = count(store.path, "SELECT MAX(trial) / 2 FROM trials WHERE task_id = ? AND agent = ?", *store.key)
    store.figures.update(scale.measure(replay.timed_commands(store.path, task, agent, middle), repeats["replay"]))
    if compare:
        commands = scale.timed_commands(str(store.path), out)
        wanted = {name: commands[name] for name in ("compare", "plain compare")}
        store.figures.update(scale.measure(wanted, repeats["compare"]))


def measure_store(store: Store, repeats: dict[str, int], compare: bool, out: Path) -> None:
    """Every figure of one store."""
    store.trials = count(store.path, "SELECT COUNT(*) FROM trials")
    store.calls = count(store.path, "SELECT COUNT(*) FROM events")
    store.bytes = file_bytes(store.path)
    in_process(store, repeats, random.Random(store.trials))
    whole_processes(store, repeats, compare, out)
    print(f"measured {store.label}", flush=True)


# ---------------------------------------------------------------------------------------------------- where the cost goes


def bytes_by_table(run_dir: Path) -> list[tuple]:
    """(table or index, bytes of its pages, bytes of its records) from SQLite's dbstat, largest first."""
    return query(run_dir, "SELECT name, SUM(pgsize), SUM(payload) FROM dbstat GROUP BY name ORDER BY SUM(pgsize) DESC")


def text_bytes(run_dir: Path, table: str) -> list[tuple[str, int]]:
    """The bytes of each TEXT or BLOB column of a table, largest first (none for an index)."""
    columns = [row[1] for row in query(run_dir, f"PRAGMA table_info({table})") if row[2] in ("TEXT", "BLOB")]
    if not columns:
        return []
    (sums,) = query(run_dir, f"SELECT {', '.join(f'TOTAL(length(CAST({c} AS BLOB)))' for c in columns)} FROM {table}")
    return sorted(zip(columns, map(int, sums)), key=lambda item: -item[1])


def where_bytes_go(store: Store, per: int, unit: str) -> str:
    """The store's bytes per ``unit`` (``per`` of them), by table and index (those with 1% of the pages or more),
    with the largest text columns of a table (5% of its records or more)."""
    tables = bytes_by_table(store.path)
    everything = sum(pages for _, pages, _ in tables)
    parts = []
    for name, pages, payload in (t for t in tables if t[1] >= everything / 100):
        top = [f"{column} {size / per:,.0f} B" for column, size in text_bytes(store.path, name) if size >= payload / 20]
        of = f" of records: {', '.join(top[:4])}" if top else " of records"
        parts.append(f"`{name}` {pages / per:,.0f} B ({payload / per:,.0f} B{of})")
    return f"per {unit} of the {store.label} store: " + "; ".join(parts)


def profile_in_process(fn: Callable[[], object]) -> pstats.Stats:
    profiler = cProfile.Profile()
    profiler.runcall(fn)
    return pstats.Stats(profiler)


def profile_process(argv: list[str]) -> pstats.Stats:
    """A profile of one more run of a ``forge`` command (its argv)."""
    with tempfile.NamedTemporaryFile(suffix=".prof") as out:
        subprocess.run(
            [sys.executable, "-m", "cProfile", "-o", out.name, "-m", "forge_kernel.cli", *argv[1:]],
            stdout=subprocess.DEVNULL,
            cwd=ROOT,
            env=PROCESS_ENV,
            check=False,
        )
        return pstats.Stats(out.name)


def function_name(key: tuple[str, int, str]) -> str:
    path, _, name = key
    if path == "~":
        return re.sub(r" at 0x[0-9a-f]+", "", name.strip("<>"))
    parts = Path(path).with_suffix("").parts
    return f"{'.'.join(parts[-2:])}.{name}"


def hotspots(stats: pstats.Stats, shown: int = 5) -> str:
    """The functions with the most time of their own, and forge's with the most time under them (but the outermost,
    which hold nearly all of it), as text."""
    entries = stats.stats  # type: ignore[attr-defined]  # {key: (calls, primitive calls, own, cumulative, callers)}
    total = max(cumulative for *_, cumulative, _ in entries.values())
    own = sorted(entries.items(), key=lambda item: -item[1][2])[:shown]
    forge = sorted(
        (item for item in entries.items() if "forge_kernel" in item[0][0] and item[1][3] < 0.9 * total),
        key=lambda item: -item[1][3],
    )[:shown]
    listed = lambda items, i: ", ".join(f"`{function_name(k)}` {seconds(v[i])}" for k, v in items)  # noqa: E731
    return (
        f"profiled ({seconds(total)} in all): own time {listed(own, 2)}; forge's functions, time under them: "
        f"{listed(forge, 3)}"
    )


# ---------------------------------------------------------------------------------------------------- the section


def seconds(value: float, unit: float | None = None) -> str:
    """Seconds in ms or s (as ``unit`` would be shown), with the unit."""
    return f"{value * 1000:,.1f} ms" if (unit or value) < 1 else f"{value:,.2f} s"


def bare(value: float, unit: float) -> str:
    """``seconds`` without the unit."""
    return seconds(value, unit).split()[0]


def kb(value: float) -> str:
    return f"{value / 1000:,.1f} KB"


def times(ratio: float) -> str:
    return f"{ratio:.2f}×" if ratio < 10 else f"{ratio:,.0f}×"


def verdict(value: float, goal: float) -> str:
    return "met" if value < goal else f"**NOT met** ({times(value / goal)} the goal)"


def time_cell(samples: list[float], goal: float | None = None) -> str:
    mid = scale.median(samples)
    cell = f"{seconds(mid)} ({bare(min(samples), mid)}–{bare(max(samples), mid)})"
    return cell if goal is None else f"{cell}, {verdict(mid, goal)}"


def walls(runs: list[tuple[float, float, float]]) -> list[float]:
    return [run[0] for run in runs]


def rate(store: Store) -> float:
    """Trials stored a second."""
    return sum(b[2] for b in store.writes) / sum(b[0] + b[1] for b in store.writes)


def write_rate(store: Store) -> str:
    made, written, _, calls = (sum(batch[i] for batch in store.writes) for i in range(4))
    rates = [batch[2] / (batch[0] + batch[1]) for batch in store.writes]
    return (
        f"{rate(store):,.0f}/s ({min(rates):,.0f}–{max(rates):,.0f}), {calls / (made + written):,.0f} calls/s; "
        f"rows {made / (made + written):.0%}"
    )


def size_cell(store: Store, left_out: int = 0) -> str:
    """The store's bytes, less ``left_out``, per trial (and per call)."""
    size = store.bytes - left_out
    return f"{kb(size / store.trials)} ({size / store.calls:,.0f} B a call), {verdict(size / store.trials, GOALS['bytes'])}"


def peak_mb(runs: list[tuple[float, float, float]]) -> float:
    """The median peak RSS of whole processes, in MB (``whole_process`` gives MiB)."""
    return scale.median([run[1] for run in runs]) * 1.048576


def peak_cell(runs: list[tuple[float, float, float]]) -> str:
    return f"{peak_mb(runs):,.0f} MB, {verdict(peak_mb(runs), GOALS['compare_mb'])}"


ROWS: list[tuple[str, str, Callable[[Store], str]]] = [
    (
        "store write rate: trials stored a second (range over transactions), calls a second; the share of making "
        "the rows",
        "— (flat)",
        write_rate,
    ),
    (
        "store size per trial: file bytes / trials (/ calls)",
        "< 3 KB",
        size_cell,
    ),
    (
        "what the trials take: (file bytes − those of the same store without its trials) / trials (/ calls)",
        "< 3 KB",
        lambda s: size_cell(s, left_out=s.fixed),
    ),
    (
        "opening one trial: `open_run(dir).trial(task, agent, k)`, k at random",
        "< 100 ms",
        lambda s: time_cell(s.figures["open"], GOALS["open"]),
    ),
    ("baseline: its events, plain sqlite3", "—", lambda s: time_cell(s.figures["open plain"])),
    (
        "the failure table: `FailureBrowser(dir)`",
        "< 1 s",
        lambda s: time_cell(s.figures["failures"], GOALS["failures"]),
    ),
    (
        "baseline: the failed trials, failing verdicts and failed calls, plain sqlite3, as CSV",
        "—",
        lambda s: time_cell(s.figures["failures plain"]),
    ),
    (
        "`forge replay` of a trial, the whole process",
        "< 200 ms",
        lambda s: time_cell(walls(s.figures["replay"]), GOALS["replay"]),
    ),
    ("baseline: `python -c pass`", "—", lambda s: time_cell(walls(s.figures["bare"]))),
]
COMPARE_ROWS: list[tuple[str, str, Callable[[Store], str]]] = [
    (
        "`forge compare` of two agents, the whole process: wall",
        "< 5 s",
        lambda s: time_cell(walls(s.figures["compare"]), GOALS["compare"]),
    ),
    ("`forge compare`: peak RSS", "< 500 MB", lambda s: peak_cell(s.figures["compare"])),
    ("baseline: the rows compare reads, plain sqlite3", "—", lambda s: time_cell(walls(s.figures["plain compare"]))),
]


def table(stores: list[Store], rows: list[tuple[str, str, Callable[[Store], str]]]) -> list[str]:
    return [
        f"| figure | goal | {' | '.join(s.label for s in stores)} |",
        f"|---|---|{'---:|' * len(stores)}",
        *(f"| {label} | {goal} | {' | '.join(cell(s) for s in stores)} |" for label, goal, cell in rows),
    ]


def medians(store: Store, compare: bool) -> dict[str, float]:
    """The figures that have a goal (``GOALS``), as the goals count them."""
    found = {
        "bytes": store.bytes / store.trials,
        "open": scale.median(store.figures["open"]),
        "failures": scale.median(store.figures["failures"]),
        "replay": scale.median(walls(store.figures["replay"])),
    }
    if compare:
        found["compare"] = scale.median(walls(store.figures["compare"]))
        found["compare_mb"] = peak_mb(store.figures["compare"])
    return found


def cost_paragraph(name: str, store: Store, out: Path, unit: str) -> str:
    """Where the cost of a figure that missed its goal goes, on one store: its bytes by table and column (per
    ``unit``: trial or call), or a profile of one more sample."""
    if name == "bytes":
        return where_bytes_go(store, store.trials if unit == "trial" else store.calls, unit)
    if name == "open":
        return hotspots(profile_in_process(lambda: open_trial(store.path, (*store.key, 0))))
    if name == "failures":
        return hotspots(profile_in_process(lambda: closed(FailureBrowser(store.path))))
    if name == "compare":
        return hotspots(profile_process(scale.timed_commands(str(store.path), out)["compare"][0]))
    argv = replay.timed_commands(store.path, *store.key)["replay"][0]
    imports = ", ".join(f"`{module}` {ms:.0f} ms" for module, ms in replay.slowest_imports(argv))
    return f"{hotspots(profile_process(argv))}; slowest imports (`-X importtime`): {imports}"


NAMES = {
    "bytes": "store size per trial",
    "open": "opening one trial",
    "failures": "the failure table",
    "replay": "forge replay",
    "compare": "forge compare (wall)",
    "compare_mb": "forge compare (peak RSS)",
}


def over(name: str, amount: float) -> str:
    return kb(amount) if name == "bytes" else f"{amount:,.0f} MB" if name == "compare_mb" else seconds(amount)


def explained(stores: list[Store], compare: bool, out: Path, unit: str) -> list[str]:
    """A line for each goal an axis did not meet: by how much on each store, and where the cost goes on the
    largest of them (no breakdown of the peak RSS)."""
    lines = []
    for name, goal in GOALS.items():
        misses = [(s, value) for s in stores if (value := medians(s, compare).get(name, 0.0)) >= goal]
        if not misses:
            continue
        by = "; ".join(
            f"{s.label} {times(value / goal)} the goal ({over(name, value - goal)} over)" for s, value in misses
        )
        largest = misses[-1][0]
        cost = "" if name == "compare_mb" else f" Where it goes, {cost_paragraph(name, largest, out, unit)}."
        lines.append(f"- **{NAMES[name]}: NOT met** at {by}.{cost}")
    return lines


def machine() -> tuple[float, float]:
    """How fast the machine runs Python now (``calibration``, seconds) and its load average over the last minute."""
    return calibration(), os.getloadavg()[0]


def section(
    trials: list[Store], calls: list[Store], released: dict, out: Path, whole_s: float, machines: list[tuple]
) -> str:
    """The RESULTS.md section; ``machines``: ``machine()`` before and after the measurements."""
    large, small = (scale.median(released["samples"][size]) for size in ("large", "small"))
    per_store = calls[0].trials
    (speed_before, load_before), (speed_after, load_after) = machines
    return "\n".join(
        [
            "## 15. Flat cost as the work grows",
            "",
            f"Written by `benchmarks/growth.py` (git {git_state()}; a pure-Python loop of 10 million additions took "
            f"{speed_before:.2f} s before the measurements and {speed_after:.2f} s after them; load average "
            f"{load_before:.1f} and {load_after:.1f} on {os.cpu_count()} CPUs; the measurements took "
            f"{whole_s / 60:.0f} min). Each cell: the median (min–max) of its samples; in process, each from a store "
            "not yet opened in the process (the file in the OS's cache); whole processes from start to exit, bytecode "
            "cached, started by a small launcher process (peak RSS from its `wait4`), taking turns with their "
            f"baselines. Repeats: opening {len(trials[0].figures['open'])}, failure "
            f"table {len(trials[0].figures['failures'])}, compare {len(trials[0].figures['compare'])}, replay "
            f"{len(trials[0].figures['replay'])}.",
            "",
            "### Trials per store",
            "",
            "The six reference agents on the bundled packages, one trial each, copied in SQL, then "
            f"{WRITTEN} of those trials stored through the real write path (`trial_rows` + `RunStore.write_rows`, "
            f"{MOST_AT_ONCE} a transaction, as the run's grader stores them, the objects made before frozen as in the "
            "grader; grading not included). Compare: "
            f"{scale.AGENTS[0]} against {scale.AGENTS[1]} in the same store; replay: {replay.TASK}, "
            f"{replay.AGENT}, a trial in the middle of the store.",
            "",
            *table(trials, ROWS + COMPARE_ROWS),
            "",
            f"Write rate at the largest store: {rate(trials[-1]) / rate(trials[0]):.2f}× that at the smallest. Failed "
            f"trials in the failure table: {', '.join(f'{s.failed:,}' for s in trials)}.",
            "",
            f"### Calls per trial ({per_store:,} trials a store)",
            "",
            f"One trial of {max(CALLS):,} calls (`bench_agents.LongTrial`: its patient's look-up, then a search of its "
            f"two conditions and a temperature recorded in turn, on {TASK}); each store holds {per_store:,} trials of "
            "its first calls, each cut trial graded again (its verdicts are those of the calls it keeps) and stored "
            f"through the same write path. Failed trials in the failure table: {', '.join(f'{s.failed:,}' for s in calls)}.",
            "",
            *table(calls, ROWS),
            "",
            "### The release notebook",
            "",
            "`benchmarks/release.py`'s measurement (papermill executes the report template, nbconvert exports "
            f"release.html), over {released['trials']:,} trials (baseline-v1 and candidate-v2, copied in SQL), "
            f"taking turns with the {released['trials'] // release.COPIES:,} trials they were copied from.",
            "",
            "| comparison | goal | median (min–max) |",
            "|---|---|---:|",
            f"| {released['trials']:,} trials | < 30 s | {time_cell(released['samples']['large'], release.GOAL_S)} |",
            f"| baseline: {released['trials'] // release.COPIES:,} trials | — | "
            f"{time_cell(released['samples']['small'])} |",
            "",
            f"{release.COPIES}× the trials cost {large / small:.2f}× the time.",
            "",
            "### Goals not met, and where the cost goes",
            "",
            *(
                explained(trials, True, out, "trial") + explained(calls, False, out, "call")
                or ["- Every goal of the two tables is met."]
            ),
            f"- The release notebook: {verdict(large, release.GOAL_S)}.",
            "",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat; writes nothing")
    opts = parser.parse_args()
    repeats = QUICK_REPEATS if opts.quick else REPEATS
    before, started = machine(), perf_counter()
    with tempfile.TemporaryDirectory(prefix="forge-growth-") as tmp:
        folder, out = Path(tmp), Path(tmp) / "out"
        out.mkdir()
        trials = trials_axis(folder, QUICK_TRIAL_SIZES if opts.quick else TRIAL_SIZES)
        calls = calls_axis(folder, QUICK_CALL_TRIALS if opts.quick else CALL_TRIALS)
        for store in trials + calls:
            measure_store(store, repeats, store in trials, out)
        released = release.bench(repeats["release"])
        whole_s = perf_counter() - started
        text = section(trials, calls, released, out, whole_s, [before, machine()])
    publish("growth.py", text, opts.quick)


if __name__ == "__main__":
    main()
