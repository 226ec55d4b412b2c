"""Benchmarks 4 and 5: the isolated path (an agent in a sandboxed worker process) beside the in-process path.

4. Per trial and per call, same run, same package and store: the ``scripted`` agent (7 calls), ``Repeater``
   (19 look-ups) and ``Idle`` (no call), each in process and in a worker; samples interleaved.
5. Concurrency efficiency: 1,000 trials of ``PacedScripted`` (50 ms of model latency before each of its 7 calls)
   at concurrency 200, through the engine's own run loop, in process and isolated. Efficiency = the ideal
   makespan (ceil(trials / concurrency) waves x 7 x 50 ms) / the measured one. "Warm": agents started and their
   workers forked by a first run of 200 trials, as in any run longer than its first wave; "cold": the whole
   ``execute`` from a standing start (agent process start and every fork included).
"""
from __future__ import annotations

import asyncio
import math
import sys
import tempfile
from pathlib import Path
from time import perf_counter, perf_counter_ns

from forge_kernel.agents import agent_factory
from forge_kernel.engine import RunSpec, execute
from forge_kernel.engine.run import load_suite, open_store, run_plan, start_agents, stop_agents
from forge_kernel.engine.seeds import trial_seed
from forge_kernel.engine.trial import Images, run_trial, task_template
from forge_kernel.store import RunStore
from forge_kernel.workers import InProcess, IsolatedAgent, choose

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # bench_agents, importable here and (through PYTHONPATH) in the workers

from bench_agents import MODEL_LATENCY_S, REPEATS  # noqa: E402

AGENTS = {"scripted": "scripted", "repeater": "bench_agents:Repeater", "idle": "bench_agents:Idle"}


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
                record = await run_trial(package, image, runner, counter, trial_seed(0, package.id, key[1], counter),
                                         text)
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
        "mode": sandbox.mode}


async def bench_concurrency(package_dir: Path, trials: int, concurrency: int) -> dict:
    """Makespans of ``trials`` paced trials at ``concurrency``, warm and cold, in process and isolated."""
    waves = math.ceil(trials / concurrency)
    ideal = waves * 7 * MODEL_LATENCY_S
    agent = "bench_agents:PacedScripted"
    out: dict = {"ideal_s": ideal, "trials": trials, "concurrency": concurrency}
    for path, trust in (("in-process", [agent]), ("isolated", [])):
        spec = RunSpec(suite=[str(package_dir)], agents=[agent], trials=trials, trust=trust)
        warmup = RunSpec(suite=[str(package_dir)], agents=[agent], trials=concurrency, trust=trust)
        with tempfile.TemporaryDirectory(prefix="forge-bench-conc-") as tmp:
            started = perf_counter()
            await execute(spec, Path(tmp) / "cold", concurrency=concurrency, progress=False)
            cold = perf_counter() - started
            packages = load_suite(spec.suite)
            sandbox, _ = choose("namespace")
            agents = await start_agents(spec, sandbox)
            try:
                for name, run_spec in (("warmup", warmup), ("warm", spec)):
                    cards = [{"name": r.name, "version": r.version} for r, _ in agents.values()]
                    with open_store(Path(tmp) / name, run_spec, packages, cards, sandbox, False) as store:
                        started = perf_counter()
                        await run_plan(store, run_spec, packages, agents, concurrency, False)
                        warm = perf_counter() - started
                        passed = store.db.execute("SELECT SUM(passed) FROM scores").fetchone()[0]
            finally:
                await stop_agents(r for r, _ in agents.values())
        out[path] = {"cold_s": cold, "warm_s": warm, "passed": passed, "warm_eff": ideal / warm,
                     "cold_eff": ideal / cold}
    return out


def section(paths: dict, conc: dict, baseline_ns: float, table, fmt) -> list[str]:
    """The two sections of RESULTS.md."""
    mode = paths["mode"]
    get = {key: fig for key, fig in paths.items() if key != "mode"}
    iso, local = get[("isolated", "scripted")], get[("in-process", "scripted")]
    per_call = {p: (get[(p, "repeater")].median - get[(p, "idle")].median) / REPEATS for p in ("in-process", "isolated")}
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
        *table([(fig, "—") for fig in get.values()], "note"),
        "",
        f"- Per tool call (({REPEATS} look-ups − none) / {REPEATS}): in process {fmt(per_call['in-process'])}, "
        f"isolated {fmt(per_call['isolated'])}: the process boundary adds "
        f"{fmt(per_call['isolated'] - per_call['in-process'])} per call.",
        f"- Per trial with no call (Idle): in process {fmt(get[('in-process', 'idle')].median)}, isolated "
        f"{fmt(get[('isolated', 'idle')].median)}.",
        f"- **An isolated trial of 7 calls: {fmt(iso.median)} ({fmt(iso.median - local.median)} more than in process); "
        f"harness overhead (median trial − median direct tool calls, {fmt(baseline_ns)}): {fmt(overhead)}. "
        f"Goal under 3 ms: {'met' if overhead < goal else 'NOT met'}.**",
        "",
        "## 5. Concurrency efficiency at 50 ms of model latency per step",
        "",
        f"{conc['trials']:,} trials of `PacedScripted` (the scripted agent waiting {MODEL_LATENCY_S * 1000:.0f} ms before "
        f"each of its 7 calls) at concurrency {conc['concurrency']}; ideal makespan {conc['ideal_s']:.2f} s "
        f"({math.ceil(conc['trials'] / conc['concurrency'])} waves × 7 × {MODEL_LATENCY_S * 1000:.0f} ms). Efficiency = "
        "ideal / measured. Warm: the agent started and its workers (four trials each) forked by a first run of "
        f"{conc['concurrency']} trials; cold: the whole `execute` from a standing start.",
        "",
        "| path | warm makespan | warm efficiency | cold makespan | cold efficiency | trials passed |",
        "|---|---:|---:|---:|---:|---:|",
        *(f"| {path} | {r['warm_s']:.2f} s | {r['warm_eff']:.0%} | {r['cold_s']:.2f} s | {r['cold_eff']:.0%} | "
          f"{r['passed']:,} / {conc['trials']:,} |" for path, r in ((p, conc[p]) for p in ("in-process", "isolated"))),
        "",
        f"**Isolated, warm: {conc['isolated']['warm_eff']:.0%} efficiency. Goal at least 90%: "
        f"{'met' if conc['isolated']['warm_eff'] >= 0.9 else 'NOT met'}.** The cold figure adds starting the agent's "
        "sandbox (its imports) and forking every worker, once per run.",
        "",
    ]
    return lines
