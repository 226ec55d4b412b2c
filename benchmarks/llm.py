"""Benchmark 11: the ``llm`` agent against a model server on 127.0.0.1 (SYNTHETIC data only).

The server is a process of its own: asyncio, HTTP/1.1 with keep-alive, the chat-completions format, replies made
before the clock starts (turn k of a conversation: the k-th call of the package's gold solution, then the answer).

1. The agent's own cost per model turn: trials of the ``llm`` agent in process, one at a time, against the server
   answering at once. Per turn: the trial's time less its tool calls', beside the baseline of the same run: bare
   POSTs of the same requests (a trial's, as the server recorded them) with the SDK's own HTTP client, the reply
   read as JSON (what any client pays for the round trip). The difference is what the agent adds: the messages, the SDK's request and its parsing of the reply,
   the turn reported to the harness.
2. Concurrency efficiency: 1,000 trials x 7 model turns (6 calls, then the answer) at concurrency 200 against the
   server answering each request after 50 ms, through the engine's own run loop, in process and isolated (the
   default sandbox), the attempts run by the harness's loop or on a LocalCluster of 2 Dask workers (``--executor
   dask``: the harness grades and stores, the workers run the agents). Efficiency = the ideal makespan (ceil(trials / concurrency) waves x 7 turns x 50 ms) / the
   measured one; warm: the agents started and their workers forked by a first run of 200 trials, then three runs,
   the median shown.

    python benchmarks/llm.py            # prints the figures and writes its section of benchmarks/RESULTS.md
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from time import perf_counter

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from results import ROOT, calibration, git_state, write_section  # noqa: E402

PACKAGE = ROOT / "task_packages/superclue/SC-MED-GASTRIC-ULCER"
CALLS = 6
"""Gold calls a conversation plays before the answer: 7 model turns a trial."""
LATENCY_S = 0.05
TRIALS, CONCURRENCY, WARM_RUNS = 1000, 200, 3
COST_TRIALS, BARE_POSTS = 300, 2000
TURN_GOAL_MS, EFFICIENCY_GOAL = 1.0, 0.90
PATHS = (
    ("in process", False),
    ("isolated", False),
    ("in process, LocalCluster of 2 workers", True),
    ("isolated, LocalCluster of 2 workers", True),
)
"""The agents trusted (in process) or sandboxed, their attempts run by the harness's loop or on Dask workers."""


# --- the server ----------------------------------------------------------------------------------------------------


def replies() -> list[bytes]:
    """The server's answers by turn, made once: each gold call, then the gold's answer."""
    from forge_kernel.spec import load_package

    gold = load_package(PACKAGE).hidden.gold
    usage = {"prompt_tokens": 900, "completion_tokens": 40, "total_tokens": 940}

    def answer(message: dict, reason: str) -> bytes:
        return json.dumps(
            {
                "id": "c",
                "object": "chat.completion",
                "created": 0,
                "model": "bench",
                "usage": usage,
                "choices": [{"index": 0, "finish_reason": reason, "message": message}],
            }
        ).encode()

    made = [
        answer(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": f"call_{i}",
                        "type": "function",
                        "function": {"name": c.tool, "arguments": json.dumps(c.args)},
                    }
                ],
            },
            "tool_calls",
        )
        for i, c in enumerate(gold.calls[:CALLS])
    ]
    return [*made, answer({"role": "assistant", "content": json.dumps({"answer": gold.answer})}, "stop")]


async def serve(answers: list[bytes], latency: float, record: Path | None) -> None:
    """Answer every POST with the reply of its turn (the assistant messages it holds), after ``latency``; the first
    conversation's requests written to ``record``."""
    recorded = []

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while head := await reader.readuntil(b"\r\n\r\n"):
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                body = await reader.readexactly(length)
                if record and len(recorded) < len(answers):
                    recorded.append(body)
                    record.write_bytes(b"\n".join(recorded))
                reply = answers[min(body.count(b'"assistant"'), len(answers) - 1)]
                if latency:
                    await asyncio.sleep(latency)
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                    + str(len(reply)).encode()
                    + b"\r\n\r\n"
                    + reply
                )
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = await asyncio.start_server(connection, "127.0.0.1", 0, backlog=1024)
    print(server.sockets[0].getsockname()[1], flush=True)
    await server.serve_forever()


class Server:
    """The server process, answering after ``latency`` seconds."""

    def __init__(self, latency: float, record: Path | None = None):
        self.record = record
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(latency), str(record or "")], stdout=subprocess.PIPE, text=True
        )
        self.port = int(self.process.stdout.readline())

    def config(self, folder: Path) -> str:
        path = folder / "bench-model.yaml"
        path.write_text(
            yaml.safe_dump(
                {
                    "base_url": f"http://127.0.0.1:{self.port}/v1",
                    "model": "bench",
                    "max_turns": CALLS + 2,
                    "timeout_s": 30.0,
                    "retries": 0,
                }
            )
        )
        return f"llm:{path}"

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


# --- 1. the agent's own cost per turn ------------------------------------------------------------------------------


async def bare_posts(server: Server, n: int) -> list[float]:
    """Seconds per bare POST of the agent's own requests (a trial's, as the server recorded them, in turn), with
    the SDK's HTTP client, the reply read as JSON."""
    import httpx2

    bodies = server.record.read_bytes().split(b"\n")
    samples = []
    headers = {"content-type": "application/json"}
    async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{server.port}/v1") as client:
        for i in range(n + 100):
            started = perf_counter()
            (await client.post("/chat/completions", content=bodies[i % len(bodies)], headers=headers)).json()
            if i >= 100:
                samples.append(perf_counter() - started)
    return samples


def per_turn(entry: str, out: Path) -> list[float]:
    """Seconds per model turn of each trial, its tool calls' time taken out (trials in process, one at a time)."""
    from forge_kernel.engine import RunSpec, execute
    from forge_kernel.store import open_run

    asyncio.run(
        execute(
            RunSpec(suite=[str(PACKAGE)], agents=[entry], trials=COST_TRIALS, trust=[entry]),
            out,
            concurrency=1,
            progress=False,
        )
    )
    with open_run(out) as run:
        ids = list(run.trials.trial_id)[20:]  # the first ones warm up the client and the server
        return [
            (t.duration_s - sum(e.latency_ms for e in t.events) / 1000) / len(t.turns)
            for t in map(run.trial_by_id, ids)
        ]


# --- 2. concurrency efficiency -------------------------------------------------------------------------------------


def machine_cpu() -> float:
    """CPU seconds the whole machine has spent so far (user, nice, system and interrupts of all CPUs)."""
    with open("/proc/stat") as stat:
        user, nice, system, _idle, _iowait, irq, softirq = map(int, stat.readline().split()[1:8])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


async def makespans(entry: str, trusted: bool, folder: Path, cluster: bool = False) -> list[tuple[float, float]]:
    """(makespan, CPU seconds of the machine) of warm runs of TRIALS trials at CONCURRENCY, after a first run of
    CONCURRENCY trials; ``cluster``: the attempts run on a LocalCluster of 2 workers (``--executor dask``), which
    is started, and its agents, by the first run."""
    from forge_kernel.engine import RunSpec
    from forge_kernel.engine.run import load_suite, on_cluster, open_store, run_plan, start_agents, stop_agents
    from forge_kernel.workers import choose

    spec = RunSpec(suite=[str(PACKAGE)], agents=[entry], trials=TRIALS, trust=[entry] if trusted else [])
    packages, (sandbox, _) = load_suite(spec.suite), choose("namespace")
    agents = await start_agents(spec, sandbox)
    dask = await on_cluster(spec, packages, folder, sandbox, agents, None, CONCURRENCY) if cluster else None
    found = []
    try:
        for i, trials in enumerate([CONCURRENCY, *[TRIALS] * WARM_RUNS]):
            run_spec = RunSpec(**{**spec.__dict__, "trials": trials})
            cards = [{"name": r.name, "version": r.version} for r, _ in agents.values()]
            with open_store(folder / f"run{i}", run_spec, packages, cards, sandbox, False) as store:
                started, cpu = perf_counter(), machine_cpu()
                ran, _ = await run_plan(
                    store, run_spec, packages, agents, CONCURRENCY, False, dask.attempt if dask else None
                )
                assert ran == trials, (ran, trials)
                if i:
                    found.append((perf_counter() - started, machine_cpu() - cpu))
    finally:
        if dask is not None:
            await dask.close()
        await stop_agents(r for r, _ in agents.values())
    return found


# --- the report ----------------------------------------------------------------------------------------------------


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def section(turns: list[float], posts: list[float], spans: dict, git: str, speed: float) -> str:
    turn, post = statistics.median(turns), statistics.median(posts)
    own = turn - post
    ideal = math.ceil(TRIALS / CONCURRENCY) * (CALLS + 1) * LATENCY_S
    lines = [
        "## 11. The llm agent against a model server on 127.0.0.1",
        "",
        f"Code: git {git}. Machine speed: the pure-Python loop took {speed:.2f} s. The server is a process of its "
        "own (asyncio, HTTP/1.1 keep-alive, replies made before the clock starts); the agent runs the SDK's async "
        f"client. Package SC-MED-GASTRIC-ULCER; a trial is 7 model turns ({CALLS} tool calls, then the answer).",
        "",
        "| measurement | median | p95 | samples |",
        "|---|---:|---:|---:|",
        f"| a model turn of the llm agent in process (trial time less its tool calls, / turns), server answering at "
        f"once | {ms(turn)} | {ms(sorted(turns)[int(len(turns) * 0.95)])} | {len(turns)} |",
        f"| baseline: bare POSTs of the same requests with the same HTTP client, replies read as JSON | {ms(post)} | "
        f"{ms(sorted(posts)[int(len(posts) * 0.95)])} | {len(posts)} |",
        "",
        f"**The agent's own cost per turn: {ms(own)} (median turn − median bare POST). Goal under "
        f"{TURN_GOAL_MS:.0f} ms: {'met' if own * 1000 < TURN_GOAL_MS else 'NOT met'}.**",
        "",
        f"Concurrency: {TRIALS:,} trials at concurrency {CONCURRENCY}, the server answering after "
        f"{LATENCY_S * 1000:.0f} ms; ideal makespan {ideal:.2f} s; warm, median of {WARM_RUNS} runs (range).",
        "",
        "| path | makespan | efficiency | range | CPU of the machine per model turn | CPUs a 90% run would need |",
        "|---|---:|---:|---|---:|---:|",
    ]
    turns_run = TRIALS * (CALLS + 1)
    for path, found in spans.items():
        middle, cpu = sorted(found)[len(found) // 2]
        times = [t for t, _ in found]
        lines.append(
            f"| {path} | {middle:.2f} s | {ideal / middle:.1%} | "
            f"{ideal / max(times):.1%}–{ideal / min(times):.1%} | {ms(cpu / turns_run)} | "
            f"{cpu * EFFICIENCY_GOAL / ideal:.1f} |"
        )
    efficiencies = [ideal / sorted(f)[len(f) // 2][0] for f in spans.values()]
    met = sum(e >= EFFICIENCY_GOAL for e in efficiencies)
    cores = os.cpu_count()
    budget = cores * ideal / turns_run
    lines += [
        "",
        f"**Efficiency {min(efficiencies):.1%} to {max(efficiencies):.1%}. Goal at least {EFFICIENCY_GOAL:.0%} on "
        f"each path: {'met' if met == len(efficiencies) else f'NOT met (met on {met} of {len(efficiencies)})'}.** "
        "The ideal makespan leaves the machine's "
        f"{cores} CPUs {ms(budget)} of CPU per model turn for the server, the agent and the harness "
        f"together. A bare POST of the same request, server included, takes {ms(post)} (the baseline "
        f"above), which leaves {ms(max(budget - post, 0))} a turn for the agent's loop and the harness; the "
        "CPU column is what a turn took in all; the last, that CPU per turn at the pace of a 90% run (an estimate: "
        "CPUs a machine, or the cluster's machines together, would need).",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    speed = calibration()
    with tempfile.TemporaryDirectory(prefix="forge-bench-llm-") as tmp:
        folder = Path(tmp)
        at_once = Server(0.0, folder / "requests.jsonl")
        try:
            turns = per_turn(at_once.config(folder), folder / "cost")
            posts = asyncio.run(bare_posts(at_once, BARE_POSTS))
        finally:
            at_once.close()
        paced = Server(LATENCY_S)
        try:
            entry = paced.config(folder)
            spans = {
                path: asyncio.run(makespans(entry, path.startswith("in process"), folder / f"path{i}", cluster))
                for i, (path, cluster) in enumerate(PATHS)
            }
        finally:
            paced.close()
    text = section(turns, posts, spans, git_state(), speed)
    print(text)
    write_section("llm.py", text)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        asyncio.run(serve(replies(), float(sys.argv[2]), Path(sys.argv[3]) if sys.argv[3] else None))
    else:
        main()
