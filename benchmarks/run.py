"""MedAgent Forge speed benchmarks (1-3 on one core, 4-5 on all). SYNTHETIC data only.

    .venv/bin/python benchmarks/run.py            # full run (under a minute), writes benchmarks/RESULTS.md
    .venv/bin/python benchmarks/run.py --quick    # fewer repeats, for a smoke test; writes nothing

1. Harness overhead per trial: the scripted agent on SC-MED-GASTRIC-ULCER (7 tool calls), run_trial
   through grading and the committed SQLite write, against the same tool implementations called directly.
2. Starting a trial's EHR view (EHRView(image)) on a 1,800-resource image, against copy.deepcopy of its resources.
3. One filtered search (patient, Observation, one code, 7-day window) on a patient with 1,200 Observations,
   via EHRView.search and via record_search through a ToolSession, against a linear scan of all resources.
4-5. The isolated path (an agent in a sandboxed worker process) beside the in-process path: per trial, per
   call, and concurrency efficiency at 50 ms of model latency per step (benchmarks/isolation.py).

Every figure is the median and p95 over repeats, timed with time.perf_counter_ns after warm-ups.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import gc
import math
import os
import platform
import random
import sys
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from time import perf_counter, perf_counter_ns

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# Pin before anything heavy runs, so that the whole process (and SQLite, which runs in-thread) stays on CPU 0.
if hasattr(os, "sched_setaffinity"):
    try:
        os.sched_setaffinity(0, {0})
        PINNING = (
            f"pinned to CPU 0 with os.sched_setaffinity(0, {{0}}) (affinity now {sorted(os.sched_getaffinity(0))})"
        )
    except OSError as exc:
        PINNING = f"NOT pinned: os.sched_setaffinity failed ({exc})"
else:
    PINNING = "NOT pinned: os.sched_setaffinity is not available on this platform"

import isolation  # noqa: E402  (benchmarks/isolation.py)
from forge_kernel.agents import agent_factory  # noqa: E402
from forge_kernel.ehr import EHRImage, EHRView, fhir  # noqa: E402
from forge_kernel.ehr.image import codes_of, patient_of, time_of  # noqa: E402
from forge_kernel.engine._manifest import build_manifest  # noqa: E402
from forge_kernel.engine.seeds import trial_seed  # noqa: E402
from forge_kernel.engine.trial import Images, run_trial, task_template  # noqa: E402
from forge_kernel.spec import load_package  # noqa: E402
from forge_kernel.store import RunStore, TrialRecord  # noqa: E402
from forge_kernel.store.run_store import utc_now  # noqa: E402
from forge_kernel.tools import TOOLS, ToolContext, ToolSession  # noqa: E402
from forge_kernel.verify import GradeContext, grade  # noqa: E402
from forge_kernel.workers import InProcess  # noqa: E402
from results import calibration, cpu_model, git_state, write_section  # noqa: E402

AGENT = "scripted"
"""The bundled reference agent, by its registry name (``forge run --agent scripted``)."""
PACKAGE = ROOT / "task_packages" / "superclue" / "SC-MED-GASTRIC-ULCER"
GOAL_NS = 1_000_000
"""The project's goal: well under 1 ms of harness overhead per trial."""


# ---------------------------------------------------------------------------------------------------- statistics


@dataclass
class Figure:
    label: str
    samples: list[float]
    """Nanoseconds per operation, one per repeat."""
    note: str = ""

    @property
    def n(self) -> int:
        return len(self.samples)

    @property
    def median(self) -> float:
        s = sorted(self.samples)
        mid = len(s) // 2
        return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2

    @property
    def p95(self) -> float:
        s = sorted(self.samples)
        return s[max(0, math.ceil(0.95 * len(s)) - 1)]  # nearest rank


def fmt(ns: float) -> str:
    if ns >= 1_000_000:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1_000:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns:.0f} ns"


def ratio(a: float, b: float) -> str:
    r = a / b
    return f"{r:,.0f}×" if r >= 100 else f"{r:.1f}×" if r >= 10 else f"{r:.2f}×"


def table(rows: list[tuple[Figure, str]], last: str = "vs baseline") -> list[str]:
    out = [f"| measurement | median | p95 | repeats | {last} |", "|---|---:|---:|---:|---|"]
    for fig, versus in rows:
        out.append(
            f"| {fig.label}{' — ' + fig.note if fig.note else ''} | {fmt(fig.median)} | {fmt(fig.p95)} "
            f"| {fig.n:,} | {versus} |"
        )
    return out


def timed_batches(fn, batches: int, per_batch: int, warmup: int) -> list[float]:
    """ns per call, one sample per batch of ``per_batch`` calls (for operations too short to time one by one)."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(batches):
        t0 = perf_counter_ns()
        for _ in range(per_batch):
            fn()
        samples.append((perf_counter_ns() - t0) / per_batch)
    return samples


def timed_each(fn, repeats: int, warmup: int) -> list[float]:
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeats):
        t0 = perf_counter_ns()
        fn()
        samples.append(perf_counter_ns() - t0)
    return samples


# ---------------------------------------------------------------------------------------------------- 1. per trial


async def bench_trials(n: int, warmup: int) -> dict:
    package = load_package(PACKAGE)
    image = Images()[package]
    _ = package.package_hash  # the engine hashes (and so loads) the hidden half before any trial runs
    public = package.public
    runner = InProcess(agent_factory(AGENT))  # a trusted reference agent, in process as the engine runs it
    template = task_template(package)  # once per package and run, as the engine does
    agent_name, agent_version = runner.name, runner.version
    tmp = tempfile.TemporaryDirectory(prefix="forge-bench-")
    store = RunStore.create(Path(tmp.name) / "run")
    spec = {"suite": [str(PACKAGE)], "agents": [agent_name], "trials": 3 * (n + warmup), "seed": 0}
    store.start(
        "benchmark",
        spec,
        build_manifest(
            "benchmark",
            spec,
            {package.id: package.package_hash},
            [{"name": agent_name, "version": agent_version}],
            utc_now(),
        ),
        [package],
    )
    next_index = 0

    def index() -> tuple[int, int]:
        nonlocal next_index
        next_index += 1
        return next_index - 1, trial_seed(0, package.id, agent_name, next_index - 1)

    # -- end to end: run_trial (fresh view, session, agent, grading) then write_trial, as engine.run does per trial
    async def one_trial() -> tuple[int, TrialRecord]:
        k, seed = index()
        t0 = perf_counter_ns()
        record = await run_trial(package, image, runner, k, seed, template)
        store.write_trial(record)
        elapsed = perf_counter_ns() - t0
        return elapsed, record

    reference = None
    for _ in range(warmup):
        _, reference = await one_trial()
    assert reference.status == "completed" and reference.grading.scores.passed, reference
    gc.collect()
    e2e = []
    for _ in range(n):
        elapsed, record = await one_trial()
        e2e.append(elapsed)
        if not record.grading.scores.passed:
            raise AssertionError(f"trial {record.trial} did not pass: {record.grading.verdicts}")

    # -- the same steps as run_trial, timed part by part (a mirror of engine/trial.py; checked against it below)
    parts: dict[str, list[float]] = {"setup": [], "agent": [], "grade": [], "store": []}

    async def one_trial_in_parts(record_parts: bool) -> TrialRecord:
        k, seed = index()
        t0 = perf_counter_ns()
        view = EHRView(image)
        session = ToolSession(public, view)
        t1 = perf_counter_ns()
        outcome = await runner.attempt(template, seed, session, public.budget.max_seconds)
        t2 = perf_counter_ns()
        grading = grade(
            GradeContext(
                package, view, session.events, outcome.result, outcome.status, outcome.duration_s, session.cost
            )
        )
        t3 = perf_counter_ns()
        record = TrialRecord(
            package.id,
            runner.name,
            runner.version,
            k,
            seed,
            outcome.status,
            None,
            outcome.result,
            session.events,
            outcome.duration_s,
            session.cost,
            grading=grading,
        )
        store.write_trial(record)
        t4 = perf_counter_ns()
        if record_parts:
            for name, ns in zip(parts, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
                parts[name].append(ns)
        return record

    for _ in range(warmup):
        mirror = await one_trial_in_parts(False)
    assert [(e.tool, e.args, e.ok, e.result, e.changes, e.flags) for e in mirror.events] == [
        (e.tool, e.args, e.ok, e.result, e.changes, e.flags) for e in reference.events
    ], "mirror drifted"
    assert [(v.verifier_id, v.passed) for v in mirror.grading.verdicts] == [
        (v.verifier_id, v.passed) for v in reference.grading.verdicts
    ], "mirror drifted"
    gc.collect()
    for _ in range(n):
        await one_trial_in_parts(True)

    # -- baseline: the same calls as plain function calls on the tool implementations (args validated beforehand)
    pid = public.environment.patient_id
    calls = [(TOOLS[e.tool].run, TOOLS[e.tool].args_model.model_validate(e.args)) for e in reference.events]

    def direct() -> list:
        ctx = ToolContext(EHRView(image), pid)
        return [run(ctx, args) for run, args in calls]

    assert direct() == [e.result for e in reference.events], "direct calls give other results than the session"
    baseline = timed_each(direct, n, warmup)

    rows = store.db.execute("SELECT COUNT(*) FROM trials").fetchone()[0]
    store.close()
    tmp.cleanup()
    calls_n, verifiers_n = len(reference.events), len(package.hidden.verifiers)
    return {
        "e2e": Figure(
            f"trial: run_trial (setup + {agent_name} agent, {calls_n} calls + grading, {verifiers_n} verifiers)"
            " + write_trial, committed",
            e2e,
        ),
        "baseline": Figure(
            f"baseline: the {calls_n} tool implementations called directly (fresh EHRView, no session/"
            "policy/events/grading/store)",
            baseline,
        ),
        "parts": {
            "setup": Figure("  setup: EHRView + ToolSession", parts["setup"]),
            "agent": Figure(
                f"  agent attempt in process (its AgentTask copy, {calls_n} calls through the client, "
                "replies as JSON copies, asyncio.wait_for)",
                parts["agent"],
            ),
            "grade": Figure(f"  grading: grade() with the {verifiers_n} verifiers and scores", parts["grade"]),
            "store": Figure("  store: RunStore.write_trial (1 transaction, WAL, synchronous=NORMAL)", parts["store"]),
        },
        "stored_rows": rows,
        "tools": [e.tool for e in reference.events],
        "agent": f"{agent_name} {agent_version}",
        "verifiers": verifiers_n,
    }


# ---------------------------------------------------------------------------------------------------- 2 and 3: a big image

TZ = timezone(timedelta(hours=8))
NOW = datetime(2026, 11, 30, 9, 0, tzinfo=TZ)
CODES = [
    ("8480-6", "收缩压", "mmHg", 120),
    ("8462-4", "舒张压", "mmHg", 80),
    ("8867-4", "心率", "/min", 75),
    ("2339-0", "血糖", "mmol/L", 6),
    ("718-7", "血红蛋白", "g/L", 130),
    ("2160-0", "肌酐", "µmol/L", 80),
]
MAIN_PATIENT = "bench-p0"
MAIN_OBSERVATIONS = 1200
OTHER_PATIENTS = 4
OTHER_OBSERVATIONS = 150


def build_resources() -> list[dict]:
    """A synthetic EHR: one patient with 1,200 Observations over a year (6 codes), four others with 150 each."""
    rng = random.Random(20261130)
    resources = []
    start = NOW - timedelta(days=365)
    for p in range(OTHER_PATIENTS + 1):
        pid = MAIN_PATIENT if p == 0 else f"bench-p{p}"
        resources.append(
            fhir.patient(
                pid, f"测试患者{p}", "female" if p % 2 else "male", f"19{60 + p}-03-0{p + 1}", f"BENCH-{p:04d}"
            )
        )
        resources.append(fhir.condition(f"{pid}-c1", pid, "高血压", "2020-01-01"))
        for i in range(MAIN_OBSERVATIONS if p == 0 else OTHER_OBSERVATIONS):
            code, name, unit, centre = CODES[i % len(CODES)]
            when = start + timedelta(seconds=rng.randrange(365 * 86400))
            resources.append(
                fhir.observation(
                    f"{pid}-o{i}",
                    pid,
                    name,
                    round(rng.gauss(centre, centre / 10), 1),
                    unit,
                    when.isoformat(timespec="seconds"),
                    code=code,
                )
            )
    return resources


def bench_view(image: EHRImage, quick: bool) -> dict:
    view = timed_batches(lambda: EHRView(image), batches=50 if quick else 300, per_batch=1000, warmup=2000)
    deep = timed_each(lambda: copy.deepcopy(image.resources), repeats=5 if quick else 30, warmup=2)
    return {
        "view": Figure(
            "EHRView(image) (copy-on-write view; reads fall through to the image)",
            view,
            "each sample is the mean of 1,000 constructions",
        ),
        "deepcopy": Figure("baseline: copy.deepcopy(image.resources)", deep),
    }


async def bench_search(image: EHRImage, package_public, quick: bool) -> dict:
    since_dt = datetime(2026, 6, 1, tzinfo=TZ)
    until_dt = since_dt + timedelta(days=7)
    since, until = since_dt.timestamp(), until_dt.timestamp()
    code = CODES[0][0]
    view = EHRView(image)

    def via_view():
        return view.search(MAIN_PATIENT, "Observation", since=since, until=until, code=code)

    everything = list(image.resources.values())

    def linear_scan():
        wanted = code.lower()
        found = []
        for r in everything:
            if r["resourceType"] != "Observation" or patient_of(r) != MAIN_PATIENT or wanted not in codes_of(r):
                continue
            when = time_of(r, image.tz)
            if when is not None and since <= when <= until:
                found.append((when, r["id"], r))
        found.sort(key=lambda t: t[:2])
        return [r for _, _, r in found]

    # record_search through a ToolSession, with the JSON arguments an LLM would send
    public = package_public.model_copy(
        update={
            "environment": package_public.environment.model_copy(update={"patient_id": MAIN_PATIENT}),
            "budget": package_public.budget.model_copy(update={"max_calls": 10**9}),
        }
    )
    args = {
        "patient_id": MAIN_PATIENT,
        "type": "Observation",
        "code": code,
        "since": since_dt.isoformat(),
        "until": until_dt.isoformat(),
    }
    session = ToolSession(public, EHRView(image))

    expected = [r["id"] for r in via_view()]
    assert expected == [r["id"] for r in linear_scan()], "index and linear scan disagree"
    answer = await session.call("record_search", **args)
    assert answer["ok"] and [r["id"] for r in answer["result"]["records"]] == expected, answer

    repeats = 300 if quick else 3000
    indexed = timed_each(via_view, repeats, 300)
    scan = timed_each(linear_scan, 30 if quick else 200, 10)
    for _ in range(300):
        await session.call("record_search", **args)
    tool = []
    for _batch in range(repeats // 100):
        session = ToolSession(public, EHRView(image))  # a fresh session now and then: its event list grows per call
        for _ in range(100):
            t0 = perf_counter_ns()
            await session.call("record_search", **args)
            tool.append(perf_counter_ns() - t0)
    return {
        "matches": len(expected),
        "observations": sum(
            1 for r in everything if r["resourceType"] == "Observation" and patient_of(r) == MAIN_PATIENT
        ),
        "view": Figure("EHRView.search(patient, 'Observation', since, until, code)", indexed),
        "tool": Figure("record_search through ToolSession.call (validation, policy, event, summaries)", tool),
        "scan": Figure("baseline: linear scan of every resource (type, patient, code, date), sorted", scan),
    }


# ---------------------------------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats; do not write RESULTS.md")
    parser.add_argument("--trials", type=int, default=None, help="timed trials in benchmark 1 (default 2,000)")
    opts = parser.parse_args()
    trials = opts.trials or (200 if opts.quick else 2000)
    began = perf_counter()
    print(f"MedAgent Forge benchmarks (SYNTHETIC data only) — {PINNING}", flush=True)
    speed_before = calibration()

    print(f"[1/5] harness overhead per trial: {trials:,} trials ...", flush=True)
    t1 = asyncio.run(bench_trials(trials, warmup=50 if opts.quick else 200))

    print("[2/5] EHRView(image) vs deepcopy ...", flush=True)
    resources = build_resources()
    build = timed_each(lambda: EHRImage(resources, NOW), repeats=3 if opts.quick else 10, warmup=1)
    image = EHRImage(resources, NOW)
    t2 = bench_view(image, opts.quick)

    print("[3/5] filtered search ...", flush=True)
    t3 = asyncio.run(bench_search(image, load_package(PACKAGE).public, opts.quick))

    if hasattr(os, "sched_setaffinity"):  # the harness and its workers are separate processes: both cores
        os.sched_setaffinity(0, range(os.cpu_count() or 1))
    print("[4/5] the isolated path beside the in-process path ...", flush=True)
    t4 = asyncio.run(isolation.bench_paths(PACKAGE, 100 if opts.quick else 500, 20 if opts.quick else 50, Figure))
    print("[5/5] concurrency efficiency, 1,000 trials at concurrency 200 ...", flush=True)
    t5 = asyncio.run(isolation.bench_concurrency(PACKAGE, 1000, 200))
    total_s = perf_counter() - began

    base = t1["baseline"].median
    overhead = t1["e2e"].median - base
    overhead_p95 = t1["e2e"].p95 - base
    met = overhead < GOAL_NS
    part_sum = sum(f.median for f in t1["parts"].values())
    lines = [
        "# Benchmark results",
        "",
        "Benchmarks 1-5 are written by `benchmarks/run.py`, and every figure in them comes from the run described "
        "here; benchmarks 6-9 by `benchmarks/scale.py`, `player.py`, `replay.py` and `release.py`, each from a run of "
        "its own. SYNTHETIC data only.",
        "",
        f"- Date: {datetime.now(UTC).isoformat(timespec='seconds')}",
        f"- CPU: {cpu_model()} ({os.cpu_count()} logical CPUs on the machine)",
        f"- Pinning: {PINNING}",
        f"- Python: {sys.version.split()[0]} ({platform.python_implementation()}), {platform.platform()}",
        f"- Code: git {git_state()}",
        f"- Whole script: {total_s:.1f} s",
        f"- Machine speed: a pure-Python loop of 10 million additions took {speed_before:.2f} s before the "
        f"benchmarks and {calibration():.2f} s after them (the same loop is the yardstick between runs on machines "
        "of different speed, and shows whether the machine's speed changed during the run)",
        "",
        "Medians and p95 (nearest rank) over the repeats shown, after warm-ups; garbage collection left on, as in a "
        "real run. Other processes on the machine are not controlled: p95 figures pick up their noise.",
        "",
        "## 1. Harness overhead per trial",
        "",
        f"Agent `{AGENT}` ({t1['agent']}) on `task_packages/superclue/SC-MED-GASTRIC-ULCER`, {len(t1['tools'])} tool calls "
        f"({' → '.join(t1['tools'])}), graded by its {t1['verifiers']} verifiers, each trial written to a fresh SQLite run store "
        f"(`RunStore.create` in a temp dir, `write_trial` per trial) — {t1['stored_rows']:,} trials stored in one "
        "event loop. Each sample is one trial, from the call of `run_trial` to the committed write.",
        "",
        *table([(t1["e2e"], ratio(t1["e2e"].median, base) + " the baseline (median / median)"), (t1["baseline"], "—")]),
        "",
        f"**Harness overhead per trial: {fmt(overhead)} (median trial − median baseline; p95 trial − median baseline: "
        f'{fmt(overhead_p95)}). Goal "well under 1 ms": {"met" if met else "NOT met"}'
        f"{'' if not met else (' (' + format(overhead / GOAL_NS, '.0%') + ' of the budget)')}.**",
        "",
        "Where the time goes (the steps of `run_trial`, timed separately in a second pass of "
        f"{trials:,} trials; the sum of the medians is {fmt(part_sum)}):",
        "",
        *table([(f, f"{f.median / part_sum:.0%}") for f in t1["parts"].values()], "share of the sum"),
        "",
        f"The agent-run part includes the tools' own work (the baseline, {fmt(base)}); what the session adds on top "
        f"(argument validation, policy, fault plan, events, asyncio) is about "
        f"{fmt(t1['parts']['agent'].median - base)} per trial ({fmt((t1['parts']['agent'].median - base) / len(t1['tools']))} per call).",
        "",
        "## 2. Starting a trial's EHR view",
        "",
        f"Image: {len(image.resources):,} resources ({OTHER_PATIENTS + 1} patients, {MAIN_OBSERVATIONS:,} + "
        f"{OTHER_PATIENTS} × {OTHER_OBSERVATIONS} Observations). Building the image itself (once per package and "
        f"run, shared by all its trials): median {fmt(Figure('', build).median)} over {len(build)} builds.",
        "",
        *table(
            [
                (t2["view"], f"{ratio(t2['deepcopy'].median, t2['view'].median)} faster than the baseline"),
                (t2["deepcopy"], "—"),
            ]
        ),
        "",
        "## 3. One filtered search",
        "",
        f"Patient `{MAIN_PATIENT}` with {t3['observations']:,} Observations (6 codes, dates spread over a year) among "
        f"{len(image.resources):,} resources; query: Observation, code {CODES[0][0]}, the 7 days from 2026-06-01 "
        f"(+08:00) → {t3['matches']} matching records (all three ways agree).",
        "",
        *table(
            [
                (t3["view"], f"{ratio(t3['scan'].median, t3['view'].median)} faster than the baseline"),
                (t3["tool"], f"{ratio(t3['scan'].median, t3['tool'].median)} faster than the baseline"),
                (t3["scan"], "—"),
            ]
        ),
        "",
        *isolation.section(t4, t5, base, table, fmt),
    ]
    report = "\n".join(lines)
    print(report)
    if opts.quick:
        print("(--quick: RESULTS.md not written)")
    else:
        write_section("run.py", report)
        print("wrote its sections of benchmarks/RESULTS.md")


if __name__ == "__main__":
    main()
