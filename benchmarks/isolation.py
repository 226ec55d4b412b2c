"""Benchmarks 4 and 5: the isolated path (an agent in a sandboxed worker process) beside the in-process path.

4. Per trial and per call, same run, same package and store: the ``scripted`` agent (7 calls), ``Repeater``
   (19 look-ups) and ``Idle`` (no call), each in process and in a worker; samples interleaved.
5. Concurrency efficiency: 1,000 trials of ``PacedScripted`` (50 ms of model latency before each of its 7 calls)
   at concurrency 200, through the engine's own run loop, in process and isolated. Efficiency = the ideal
   makespan (ceil(trials / concurrency) waves x 7 x 50 ms) / the measured one. "Warm": agents started and their
   workers forked by a first run of 200 trials, as in any run longer than its first wave, then three runs, the
   median shown; "cold": the whole ``execute`` in a fresh process, as ``forge run`` makes it once its imports are
   done (the agent's sandbox started, every worker forked, the grader's unit registry built). A third, isolated
   path skips grading and storing, for an upper bound only: what the calls, the wire and the workers alone allow;
   a fourth is the third beside a CPU loop at the lowest priority, what any other work on the CPUs costs it.
   The baseline: the same sleeps with nothing else, the event loop's own floor.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import tempfile
from contextlib import contextmanager, nullcontext
from dataclasses import asdict
from pathlib import Path
from time import perf_counter, perf_counter_ns

import forge_kernel.engine.trial as engine_trial
from forge_kernel.agents import agent_factory
from forge_kernel.engine import RunSpec
from forge_kernel.engine._grader import Grader
from forge_kernel.engine.run import load_suite, open_store, run_plan, start_agents, stop_agents
from forge_kernel.engine.seeds import trial_seed
from forge_kernel.engine.trial import Images, run_trial, task_template
from forge_kernel.store import RunStore
from forge_kernel.workers import InProcess, IsolatedAgent, choose
from forge_kernel.workers.pool import PER_WORKER

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # bench_agents, importable here and (through PYTHONPATH) in the workers

from bench_agents import MODEL_LATENCY_S, REPEATS  # noqa: E402

AGENTS = {"scripted": "scripted", "repeater": "bench_agents:Repeater", "idle": "bench_agents:Idle"}


def cpu_seconds() -> tuple[float, float, float]:
    """CPU seconds so far: (this process; its children that have exited, such as a run's grader; every process on
    the machine: user, nice, system and interrupts of all CPUs, from /proc/stat, time stolen by the hypervisor
    left out)."""
    mine = os.times()
    with open("/proc/stat") as stat:
        user, nice, system, _idle, _iowait, irq, softirq = map(int, stat.readline().split()[1:8])
    return (
        mine.user + mine.system,
        mine.children_user + mine.children_system,
        (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK"),
    )


ECHO = """
import asyncio, os, socket, sys
class Echo(asyncio.BufferedProtocol):
    buffer = memoryview(bytearray(65536))
    def connection_made(self, transport):
        self.transport = transport
    def get_buffer(self, sizehint):
        return self.buffer
    def buffer_updated(self, nbytes):
        self.transport.write(self.buffer[:nbytes])
    def connection_lost(self, exc):
        self.done.set_result(None)
async def main():
    echo = Echo()
    echo.done = asyncio.get_running_loop().create_future()
    await asyncio.get_running_loop().create_unix_connection(lambda: echo, sock=socket.socket(fileno=int(sys.argv[1])))
    await echo.done
os.nice(10)
if len(sys.argv) > 2:
    os.sched_setaffinity(0, {int(sys.argv[2])})
asyncio.run(main())
"""
"""The other end of the bare round trip: sends back whatever arrives."""


class Ping(asyncio.BufferedProtocol):
    def __init__(self):
        self.answered: asyncio.Future | None = None
        self.buffer = memoryview(bytearray(65536))

    def get_buffer(self, sizehint):
        return self.buffer

    def buffer_updated(self, nbytes):
        self.answered.set_result(nbytes)


async def bench_round_trip(n: int, warmup: int, figure, one_cpu: bool = False):
    """A bare round trip between two processes' asyncio event loops over a Unix socket (a 200-byte message
    echoed), the child below the parent's priority as the workers are, both reading into a buffer they reuse as
    the wire does: the floor under any tool call that crosses to an agent's own event loop. ``one_cpu``: both
    processes kept on one CPU, so that neither has to wake the other across CPUs."""
    ours, theirs = socket.socketpair()
    cpus = os.sched_getaffinity(0) if one_cpu else set()
    cpu = [str(min(cpus))] if one_cpu else []
    echo = subprocess.Popen([sys.executable, "-c", ECHO, str(theirs.fileno()), *cpu], pass_fds=[theirs.fileno()])
    theirs.close()
    if one_cpu:
        os.sched_setaffinity(0, {min(cpus)})
    transport, ping = await asyncio.get_running_loop().create_unix_connection(Ping, sock=ours)
    samples = []
    for i in range(warmup + n):
        ping.answered = asyncio.get_running_loop().create_future()
        t0 = perf_counter_ns()
        transport.write(b"x" * 200)
        await ping.answered
        if i >= warmup:
            samples.append(perf_counter_ns() - t0)
    transport.close()
    await asyncio.to_thread(echo.wait)  # the socket closes on the loop's next turn
    if one_cpu:
        os.sched_setaffinity(0, cpus)
    return figure(
        "baseline: the same round trip, both processes kept on one CPU"
        if one_cpu
        else "baseline: a bare round trip between two processes' event loops (200 bytes over a Unix socket)",
        samples,
    )


def sandbox_mode() -> str:
    sandbox, _ = choose("namespace")
    return sandbox.mode


async def bench_paths(package_dir: Path, n: int, warmup: int, figure) -> dict:
    """ns per trial (run_trial + committed write) for each agent, in process and isolated."""
    package = load_suite([str(package_dir)])[0]
    image, text = Images()[package], task_template(package)
    sandbox, _ = choose("namespace")
    runners = {}
    for key, spec in AGENTS.items():
        runners[("in-process", key)] = InProcess(agent_factory(spec))
        runners[("isolated", key)] = await IsolatedAgent.start(spec, sandbox)
    tmp = tempfile.TemporaryDirectory(prefix="forge-bench-iso-")
    store = RunStore.create(Path(tmp.name) / "run")
    store.start("bench-isolation", {}, {"started_at": "-", "run_id": "bench-isolation"}, [package])
    samples: dict[tuple[str, str], list[float]] = {k: [] for k in runners}
    counter = 0
    try:
        for round_ in range(warmup + n):
            for key, runner in runners.items():
                counter += 1
                t0 = perf_counter_ns()
                record = await run_trial(
                    package, image, runner, counter, trial_seed(0, package.id, key[1], counter), text
                )
                store.write_trial(record)
                elapsed = perf_counter_ns() - t0
                if record.status != "completed":
                    raise AssertionError(f"{key}: {record.status} {record.reason}")
                if round_ >= warmup:
                    samples[key].append(elapsed)
    finally:
        for runner in runners.values():
            if isinstance(runner, IsolatedAgent):
                await runner.aclose()
        store.close()
        tmp.cleanup()
    return {key: figure(f"{key[1]} ({key[0]})", values) for key, values in samples.items()} | {
        "round_trip": await bench_round_trip(n * 10, warmup * 10, figure),
        "round_trip_one_cpu": await bench_round_trip(n * 10, warmup * 10, figure, one_cpu=True)
        if hasattr(os, "sched_setaffinity")
        else None,
        "mode": sandbox.mode,
    }


SKIPPED = "isolated, grading and storing skipped"
"""The row of the upper bound: not a way forge runs."""


@contextmanager
def grading_and_storing_skipped():
    """Every trial gets the first trial's grading, and no trial is written, for the upper bound only; yields the
    trials' durations, kept as they are handed to the grader."""
    real_grade, real_hand, real_write = engine_trial.grade, Grader.hand, RunStore.write_rows
    first, durations = [], []

    def first_grading(ctx):
        if not first:
            first.append(real_grade(ctx))
        return first[0]

    def keep_duration(grader, trial, last_wave=False):
        durations.append(trial.duration_s)
        real_hand(grader, trial, last_wave)

    def write_nothing(store, rows):
        return []

    engine_trial.grade, Grader.hand, RunStore.write_rows = first_grading, keep_duration, write_nothing
    try:
        yield durations
    finally:
        engine_trial.grade, Grader.hand, RunStore.write_rows = real_grade, real_hand, real_write


BESIDE_LOOP = "the same, beside a CPU loop at the lowest priority"
"""The row that shows what any other CPU work costs the upper bound, however low its priority."""
LOOP = """
import os
if hasattr(os, "SCHED_IDLE"):
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
else:
    os.nice(19)
while True:
    pass
"""
"""A process that only ever runs when nothing else wants a CPU (Linux's SCHED_IDLE)."""


@contextmanager
def cpu_loop_beside():
    """A LOOP process running for as long as the block does."""
    loop = subprocess.Popen([sys.executable, "-c", LOOP])
    try:
        yield
    finally:
        loop.kill()
        loop.wait()


WARM_RUNS = 3
"""Warm runs of each path: the figures are the median run's, with the range of all."""


async def sleeps_alone(trials: int, concurrency: int) -> float:
    """The makespan of the paced agents' waits alone: ``trials`` x 7 sleeps of the model latency, ``concurrency``
    at a time, in this event loop, with no harness, call or agent code (the floor the event loop's timers set)."""
    todo = iter(range(trials))

    async def lane() -> None:
        for _ in todo:
            for _ in range(7):
                await asyncio.sleep(MODEL_LATENCY_S)

    started = perf_counter()
    await asyncio.gather(*(lane() for _ in range(concurrency)))
    return perf_counter() - started


COLD = """
import asyncio, json, sys
from pathlib import Path
from time import perf_counter
sys.path.insert(0, sys.argv[1])
from forge_kernel.engine import RunSpec, execute
spec, out, concurrency = RunSpec(**json.loads(sys.argv[2])), Path(sys.argv[3]), int(sys.argv[4])
started = perf_counter()
asyncio.run(execute(spec, out, concurrency=concurrency, progress=False))
print(perf_counter() - started)
"""
"""A cold run: ``execute`` timed in a process of its own, as ``forge run`` runs it."""


def cold_run(spec: RunSpec, out: Path, concurrency: int) -> float:
    """Seconds the whole ``execute`` of ``spec`` takes in a fresh process, its imports done before the clock starts
    (this process has built the unit registry, its workers and its images: a run from it would not be cold)."""
    done = subprocess.run(
        [sys.executable, "-c", COLD, str(HERE), json.dumps(asdict(spec)), str(out), str(concurrency)],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout.split()[-1])


async def bench_concurrency(package_dir: Path, trials: int, concurrency: int) -> dict:
    """Makespans of ``trials`` paced trials at ``concurrency``: cold once, then ``WARM_RUNS`` warm runs, in process
    and isolated; warm, isolated, with grading and storing skipped; and the sleeps alone."""
    waves = math.ceil(trials / concurrency)
    ideal = waves * 7 * MODEL_LATENCY_S
    agent = "bench_agents:PacedScripted"
    out: dict = {
        "ideal_s": ideal,
        "trials": trials,
        "concurrency": concurrency,
        "sleeps_s": [await sleeps_alone(trials, concurrency) for _ in range(WARM_RUNS)],
    }
    for path, trust in (("in-process", [agent]), ("isolated", []), (SKIPPED, []), (BESIDE_LOOP, [])):
        spec = RunSpec(suite=[str(package_dir)], agents=[agent], trials=trials, trust=trust)
        warmup = RunSpec(suite=[str(package_dir)], agents=[agent], trials=concurrency, trust=trust)
        with tempfile.TemporaryDirectory(prefix="forge-bench-conc-") as tmp:
            cold = cold_run(spec, Path(tmp) / "cold", concurrency) if path in ("in-process", "isolated") else None
            packages = load_suite(spec.suite)
            sandbox, _ = choose("namespace")
            agents = await start_agents(spec, sandbox)
            runs = []
            try:
                for name, run_spec in (("warmup", warmup), *((f"warm{i}", spec) for i in range(WARM_RUNS))):
                    cards = [{"name": r.name, "version": r.version} for r, _ in agents.values()]
                    skipping = grading_and_storing_skipped() if path in (SKIPPED, BESIDE_LOOP) else nullcontext()
                    beside = cpu_loop_beside() if path == BESIDE_LOOP else nullcontext()
                    with (
                        open_store(Path(tmp) / name, run_spec, packages, cards, sandbox, False) as store,
                        skipping as kept,
                        beside,
                    ):
                        started, cpu = perf_counter(), cpu_seconds()
                        await run_plan(store, run_spec, packages, agents, concurrency, False)
                        makespan = perf_counter() - started
                        used = [b - a for a, b in zip(cpu, cpu_seconds())]
                        passed = store.db.execute("SELECT SUM(passed) FROM scores").fetchone()[0]
                        durations = kept or [d for (d,) in store.db.execute("SELECT duration_s FROM trials")]
                    if name != "warmup":
                        runs.append((makespan, used, passed, statistics.median(durations)))
            finally:
                await stop_agents(r for r, _ in agents.values())
        makespans = sorted(r[0] for r in runs)
        warm, (harness_cpu, grader_cpu, machine_cpu), passed, median_trial = sorted(runs)[len(runs) // 2]
        out[path] = {
            "cold_s": cold,
            "warm_s": warm,
            "passed": passed,
            "warm_eff": ideal / warm,
            "warm_eff_range": (ideal / makespans[-1], ideal / makespans[0]),
            "cold_eff": cold and ideal / cold,
            "harness_cpu_s": harness_cpu,
            "grader_cpu_s": grader_cpu,
            "machine_cpu_s": machine_cpu,
            "median_trial_s": median_trial,
        }
    return out


def section(paths: dict, conc: dict, baseline_ns: float, table, fmt) -> list[str]:
    """The two sections of RESULTS.md."""
    n = conc["trials"]
    sleeps = statistics.median(conc["sleeps_s"])
    mode = paths["mode"]
    get = {key: fig for key, fig in paths.items() if key != "mode"}
    iso, local = get[("isolated", "scripted")], get[("in-process", "scripted")]
    trip, trip_one_cpu = get.pop("round_trip"), get.pop("round_trip_one_cpu")
    one_cpu = (
        []
        if trip_one_cpu is None
        else [
            f"- The same round trip with both processes on one CPU takes {fmt(trip_one_cpu.median)}: on this machine, "
            f"waking a process on the other CPU costs about {fmt((trip.median - trip_one_cpu.median) / 2)} each time, "
            "twice a round trip. The harness and the workers are not kept on one CPU: at concurrency, their calls would "
            "then wait for each other's turn."
        ]
    )
    per_call = {
        p: (get[(p, "repeater")].median - get[(p, "idle")].median) / REPEATS for p in ("in-process", "isolated")
    }
    boundary = per_call["isolated"] - per_call["in-process"]
    overhead = iso.median - baseline_ns
    goal = 3_000_000
    lines = [
        "## 4. The isolated path beside the in-process path",
        "",
        f"Same run, same package (SC-MED-GASTRIC-ULCER), same store; isolated agents run in worker processes of the "
        f"`{mode}` sandbox{' (bubblewrap)' if mode != 'process' else ' (no bubblewrap here)'}, forked once and reused. "
        "Both cores in use (the harness and a worker are separate processes). Each sample is one trial, from "
        "`run_trial` to the committed write; in-process and isolated trials are interleaved.",
        "",
        *table([(fig, "—") for fig in (*get.values(), trip, trip_one_cpu) if fig], "note"),
        "",
        f"- Per tool call (({REPEATS} look-ups − none) / {REPEATS}): in process {fmt(per_call['in-process'])}, "
        f"isolated {fmt(per_call['isolated'])}: the process boundary adds "
        f"{fmt(boundary)} per call.",
        f"- Per trial with no call (Idle): in process {fmt(get[('in-process', 'idle')].median)}, isolated "
        f"{fmt(get[('isolated', 'idle')].median)}.",
        f"- A bare round trip between two processes' event loops takes {fmt(trip.median)} here: the floor of a call "
        f"that crosses to the agent's own event loop. The rest of the {fmt(boundary)} is the frames' work on both "
        "sides (encoding, checking, decoding) and the worker's loop.",
        *one_cpu,
        f"- A 7-call trial crosses 8 times (the task and its result, and 7 calls): with nothing but bare round trips "
        f"added, an isolated trial would take {fmt(local.median + 8 * trip.median)} here (in process "
        f"{fmt(local.median)} + 8 × {fmt(trip.median)}).",
        f"- **An isolated trial of 7 calls: {fmt(iso.median)} ({fmt(iso.median - local.median)} more than in process); "
        f"harness overhead (median trial − median direct tool calls, {fmt(baseline_ns)}): {fmt(overhead)}. "
        f"Goal under 3 ms: {'met' if overhead < goal else 'NOT met'}.**",
        "",
        "## 5. Concurrency efficiency at 50 ms of model latency per step",
        "",
        f"{conc['trials']:,} trials of `PacedScripted` (the scripted agent waiting {MODEL_LATENCY_S * 1000:.0f} ms before "
        f"each of its 7 calls) at concurrency {conc['concurrency']}; ideal makespan {conc['ideal_s']:.2f} s "
        f"({math.ceil(conc['trials'] / conc['concurrency'])} waves × 7 × {MODEL_LATENCY_S * 1000:.0f} ms). Efficiency = "
        f"ideal / measured. Warm: the agent started and its workers (up to {PER_WORKER} trials each) forked by a first "
        f"run of {conc['concurrency']} trials, then {WARM_RUNS} runs, of which the median is shown (the efficiency's "
        "range in brackets); cold: the whole `execute` once, in a fresh process, as `forge run` makes it once its "
        "imports are done.",
        "",
        "| path | warm makespan | warm efficiency | cold makespan | cold efficiency | trials passed | "
        f"median trial (ideal {7 * MODEL_LATENCY_S * 1000:.0f} ms) | harness CPU per trial | grader CPU per trial | "
        "machine CPU per trial |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        *(
            f"| {path} | {r['warm_s']:.2f} s | {r['warm_eff']:.0%} ({r['warm_eff_range'][0]:.0%}–"
            f"{r['warm_eff_range'][1]:.0%}) | "
            + (
                f"{r['cold_s']:.2f} s | {r['cold_eff']:.0%} | {r['passed']:,} / {conc['trials']:,}"
                if r["cold_s"]
                else "— | — | —"
            )
            + f" | {r['median_trial_s'] * 1000:.0f} ms | {fmt(r['harness_cpu_s'] / n * 1e9)} | "
            f"{fmt(r['grader_cpu_s'] / n * 1e9)} | "
            + (f"{fmt(r['machine_cpu_s'] / n * 1e9)} |" if path != BESIDE_LOOP else "— (the loop fills a CPU) |")
            for path, r in ((p, conc[p]) for p in ("in-process", "isolated", SKIPPED, BESIDE_LOOP))
        ),
        f"| baseline: the sleeps alone ({conc['trials']:,} × 7 × {MODEL_LATENCY_S * 1000:.0f} ms, "
        f"{conc['concurrency']} at a time, one event loop, nothing else) | {sleeps:.2f} s | "
        f"{conc['ideal_s'] / sleeps:.0%} ({conc['ideal_s'] / max(conc['sleeps_s']):.0%}–"
        f"{conc['ideal_s'] / min(conc['sleeps_s']):.0%}) | — | — | — | — | — | — | — |",
        "",
        f"**Isolated, warm: {conc['isolated']['warm_eff']:.1%} efficiency. Goal at least 90%: "
        f"{'met' if conc['isolated']['warm_eff'] >= 0.9 else 'NOT met'}.** The cold figure adds starting the agent's "
        "sandbox (its imports), forking every worker and the grader's building the unit registry, once per run. The "
        "baseline is the floor the event loop itself sets: each sleep ends on the loop's next turn after its time, "
        "never before.",
        "",
        f"The two rows with grading and storing skipped are upper bounds, not ways forge runs: every trial is given "
        f"the first trial's grading and none is written. What is left is the calls, each served in turn by the "
        f"harness's one event loop ({7 * n / conc['ideal_s']:,.0f} a second at the ideal pace, "
        f"{7 * n / conc[SKIPPED]['warm_s']:,.0f} a second in this run), the wire and the workers; they alone allow "
        f"{conc[SKIPPED]['warm_eff']:.0%}. Beside them, a process that runs only when nothing else wants a CPU "
        f"(a loop at Linux's SCHED_IDLE priority) brings that to {conc[BESIDE_LOOP]['warm_eff']:.0%}: on this "
        "machine, other work on the CPUs slows the agents' calls even at the lowest priority. The grader run at "
        "that priority was tried, and gained nothing beyond the noise (benchmarks/README.md).",
        "",
        "CPU per trial is that of the median warm run: the harness process alone (the `forge` process: sessions, "
        "the wire), the run's grader (a process forked from it: grading, the rows' JSON, writing the store), and "
        "every process on the machine (the harness, the grader, the agent's workers, anything else running). At 90% "
        f"the run would take {conc['ideal_s'] / 0.9:.2f} s, in which the {os.cpu_count()} CPUs give "
        f"{fmt(os.cpu_count() * conc['ideal_s'] / 0.9 / n * 1e9)} per trial at most, and the harness process, which "
        f"serves every call on one core, {fmt(conc['ideal_s'] / 0.9 / n * 1e9)}. The median trial is that of the "
        "median warm run, from its task handed over to its result (a trial longer than the ideal waited for the "
        "harness, or for a CPU).",
        "",
    ]
    return lines
