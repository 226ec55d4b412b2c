"""Agents that attack the harness, for tests/workers/test_hostile_agents.py (SYNTHETIC data only).

Imported as the top-level module ``hostile_agents`` (tests/hostile on the path), so that an isolated agent's
sandbox shows this one file of the repository, as a vendor's agent shows its own package. Each agent says in its
answer, as JSON, what it managed to find; the tests check that it found nothing and changed nothing.
``HOSTILE_HINTS`` (set by the tests) names the folders an attacker would guess: the repository and the run.
"""

from __future__ import annotations

import asyncio
import gc
import glob
import json
import os
import select
import signal
import sqlite3
import sys
import time
from pathlib import Path

import yaml

import forge_kernel
from forge_kernel.spec import AgentResult

REPO = Path(forge_kernel.__file__).resolve().parents[1]


def report(**found) -> AgentResult:
    return AgentResult(answer=json.dumps(found, default=str, ensure_ascii=False))


def hints() -> list[Path]:
    """Every folder an agent could guess: the repository, the hints, its command line, cwd, other processes'."""
    places = {REPO, Path.cwd(), *map(Path, os.environ.get("HOSTILE_HINTS", "").split(os.pathsep))}
    places.update(Path(a).parent for a in sys.argv if os.path.isabs(a))
    for proc in glob.glob("/proc/[0-9]*"):
        for link in ("cwd", "root"):
            try:
                places.add(Path(os.readlink(f"{proc}/{link}")))
            except OSError:
                pass
    return [p for p in places if str(p) not in ("", "/", ".")]


def hidden_halves(task_id: str) -> list[str]:
    """Hidden-half files of this task anywhere the agent can look."""
    found = set()
    for place in hints():
        found.update(glob.glob(f"{place}/**/verifiers/*/{task_id}.yaml", recursive=True))
        found.update(glob.glob(f"{place}/verifiers/*/{task_id}.yaml"))
    return sorted(found)


def run_stores() -> list[str]:
    found = set()
    for place in hints():
        found.update(glob.glob(f"{place}/**/run.sqlite", recursive=True))
        found.update(glob.glob(f"{place}/run.sqlite"))
    return sorted(found)


class GoldReader:
    """Looks for its task's hidden half on disk and replays the gold solution if it finds it."""

    name, version = "gold-reader", "0"

    async def run(self, task, session) -> AgentResult:
        halves = [yaml.safe_load(Path(f).read_text(encoding="utf-8")) for f in hidden_halves(task.task_id)]
        halves = [h for h in halves if isinstance(h, dict) and str(h.get("version")) == task.version]
        if not halves:
            return report(found=[])
        gold = halves[0]["gold"]  # of this task's version: other copies on the machine may be older
        for call in gold["calls"]:
            await session.call(call["tool"], **call.get("args", {}))
        return AgentResult(
            answer=gold.get("answer", ""), output=gold.get("output", {}), status=gold.get("status", "completed")
        )


class StoreReader:
    """Opens every run store it can find and reads the verdict reasons (which quote hidden parameters)."""

    name, version = "store-reader", "0"

    async def run(self, task, session) -> AgentResult:
        reasons = []
        for path in run_stores():
            try:
                with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
                    reasons += [r for (r,) in db.execute("SELECT reason FROM verdicts")]
            except sqlite3.Error:
                pass
        return report(found=run_stores(), reasons=len(reasons))


async def other_patient(session, mine: str) -> str | None:
    """Another patient's id, from the directory (patient_search is a directory look-up, not a clinical read)."""
    for name in "李王张陈刘杨赵黄周吴":
        found = await session.call("patient_search", name=name)
        others = [p["patient_id"] for p in found["result"]["patients"] if p["mrn"] != mine] if found["ok"] else []
        if others:
            return others[0]
    return None


class CrossPatient:
    """Reads another patient around the tools: the client's insides, objects in memory, files, then the tool."""

    name, version = "cross-patient", "0"

    async def run(self, task, session) -> AgentResult:
        leaks = [a for a in ("view", "_session", "session", "package", "events") if hasattr(session, a)]
        leaks += [type(o).__name__ for o in gc.get_objects() if type(o).__name__ in ("EHRView", "EHRImage")]
        leaks += glob.glob(f"{REPO}/task_packages/**/fixtures/*.json", recursive=True)
        other = await other_patient(session, task.context["mrn"])
        reply = await session.call("patient_history", patient_id=other) if other else {"ok": False}
        return report(found=leaks, other_read=reply["ok"])


class EventForger:
    """Makes a call the policy denies, then tries to erase it from the record and to add a fake successful one."""

    name, version = "event-forger", "0"

    async def run(self, task, session) -> AgentResult:
        await session.call("patient_history", patient_id=await other_patient(session, task.context["mrn"]))
        erased = 0
        gc.unfreeze()  # what a process froze for the collector is as much within reach
        for obj in gc.get_objects():  # the record, if it were in this process: drop the denied calls
            if isinstance(obj, list) and obj and type(obj[0]).__name__ == "Event":
                kept = [e for e in obj if not e.denied]
                erased += len(obj) - len(kept)
                obj[:] = kept
        writer = getattr(session, "_writer", None)
        if writer is not None:  # a fake event, then a result that carries events of its own
            writer.write(frame({"op": "event", "trial": session._trial, "tool": "allergy_check", "ok": True}))
        return report(erased=erased)


class ResultForger:
    """Returns a result that carries a field of its own (fake events), bypassing validation."""

    name, version = "result-forger", "0"

    async def run(self, task, session) -> AgentResult:
        await session.call("patient_search", mrn=task.context["mrn"])
        writer = session._writer
        writer.write(
            frame(
                {
                    "op": "result",
                    "trial": session._trial,
                    "result": {"answer": "done", "events": [{"tool": "allergy_check", "ok": True}]},
                }
            )
        )
        await asyncio.sleep(30)


class BudgetForger:
    """Raises its own budget and resets the client's counters, then calls past the budget."""

    name, version = "budget-forger", "0"

    async def run(self, task, session) -> AgentResult:
        object.__setattr__(task.budget, "max_calls", 10**6)
        for name in ("_next_id", "calls", "cost", "events"):
            try:
                setattr(session, name, 0)
            except AttributeError:
                pass
        for _ in range(200):
            await session.call("patient_search", mrn=task.context["mrn"])
        return report(calls=200)


class CostForger:
    """Spends 90% of its cost budget, then reports a negative cost to zero it."""

    name, version = "cost-forger", "0"

    async def run(self, task, session) -> AgentResult:
        session.charge(task.budget.max_cost * 0.9)
        session.charge(-task.budget.max_cost)
        await session.call("patient_search", mrn=task.context["mrn"])
        return report(cost="zeroed")


class StateMutator:
    """Empties every table and registry it can import (tools, knowledge, verifiers, agents), then stops."""

    name, version = "state-mutator", "0"

    async def run(self, task, session) -> AgentResult:
        from forge_kernel import agents, tools, verify
        from forge_kernel.tools import knowledge

        cleared = 0
        for module in (knowledge, tools.base, verify.registry, agents.registry):
            for name, value in vars(module).items():
                if not name.startswith("__") and isinstance(value, (dict, list)) and value:
                    value.clear()
                    cleared += 1
        task.tools.clear()
        await session.call("patient_search", mrn=task.context["mrn"])
        return report(cleared=cleared)


def frame(message) -> bytes:
    body = json.dumps(message).encode() if not isinstance(message, bytes) else message
    return len(body).to_bytes(4, "big") + body


class Exiter:
    name, version = "exiter", "0"

    async def run(self, task, session):
        await session.call("patient_search", mrn=task.context["mrn"])
        raise SystemExit(3)


class Interrupter:
    name, version = "interrupter", "0"

    async def run(self, task, session):
        raise KeyboardInterrupt


class SelfCanceller:
    name, version = "self-canceller", "0"

    async def run(self, task, session):
        raise asyncio.CancelledError


class Killer:
    """Ends its own process in the middle of the trial."""

    name, version = "killer", "0"

    async def run(self, task, session):
        await session.call("patient_search", mrn=task.context["mrn"])
        os._exit(3)


class ZygoteKiller:
    """Kills the process its workers are forked from, then its own."""

    name, version = "zygote-killer", "0"

    async def run(self, task, session):
        os.kill(os.getppid(), signal.SIGKILL)
        os._exit(4)


class EnvReader:
    """Reads its environment for the user's keys and tokens."""

    name, version = "env-reader", "0"

    async def run(self, task, session):
        return report(names=sorted(os.environ), secret=os.environ.get("FORGE_TEST_SECRET"))


class MemoryHog:
    """Allocates 32 MiB after 32 MiB, up to 768 MiB: the machine's memory is the harness's too. The pages are
    the kernel's zero pages until written (``bytes(n)``), so this tries the limit of one process, not of all."""

    name, version = "memory-hog", "0"

    async def run(self, task, session):
        held = [bytes(32 * 1024 * 1024) for _ in range(24)]
        return report(allocated_mb=32 * len(held))


class ScratchFiller:
    """Writes up to 512 MiB into each folder it can write to (in memory, in the sandbox), then says how many MiB
    its file held (a write into a nearly full folder may write part of its chunk, and other trials free space)."""

    name, version = "scratch-filler", "0"

    async def run(self, task, session):
        chunk, fitted = b"\0" * (16 * 1024 * 1024), {}
        for folder in ("/tmp", "/dev/shm", "/dev"):
            path, fitted[folder] = f"{folder}/filler-{os.getpid()}-{id(self)}", 0
            try:
                with open(path, "wb", buffering=0) as f:
                    for _ in range(32):
                        f.write(chunk)
            except OSError:
                pass
            finally:
                if os.path.exists(path):
                    fitted[folder] = os.path.getsize(path) // (1024 * 1024)
                    os.remove(path)
        return report(**fitted)


class OomShield:
    """Tries to make the out-of-memory killer spare it: its oom_score_adj lowered below the harness's, then to 0."""

    name, version = "oom-shield", "0"

    async def run(self, task, session):
        with open("/proc/self/oom_score_adj") as f:
            seen = {"adj": f.read().strip()}
        for value in ("-1000", "0"):
            try:
                with open("/proc/self/oom_score_adj", "w") as f:
                    f.write(value)
            except OSError as exc:
                seen[value] = type(exc).__name__
            with open("/proc/self/oom_score_adj") as f:
                seen[f"after {value}"] = f.read().strip()
        return report(**seen)


class ForkBomb:
    """Forks children that wait, until the kernel refuses one or it has 300, then lets them go: the machine's process
    table is the harness's too (a real bomb would not stop at 300)."""

    name, version = "fork-bomb", "0"

    async def run(self, task, session):
        children, refused, (held, hold) = [], None, os.pipe()
        try:
            for _ in range(300):
                pid = os.fork()
                if pid == 0:  # waits until the bomb closes its end of the pipe
                    os.close(hold)
                    os.read(held, 1)
                    os._exit(0)
                children.append(pid)
        except OSError as exc:
            refused = type(exc).__name__
        finally:
            os.close(hold)
            os.close(held)
            for pid in children:
                os.waitpid(pid, 0)
        return report(forked=len(children), refused=refused)


class ForkHog:
    """Forks 3 children that each fill 160 MiB, within the limit of one process, and keep it until all have
    (or 1.5 s has passed, as when the kernel killed one): the machine's memory is the harness's too. Says how many
    the kernel killed."""

    name, version = "fork-hog", "0"
    children, mib = 3, 160

    async def run(self, task, session):
        (ready, filled), (held, hold), pids = os.pipe(), os.pipe(), []
        for _ in range(self.children):
            pid = os.fork()
            if pid == 0:
                try:
                    os.close(ready)
                    os.close(hold)
                    kept = b"\1" * (self.mib << 20)  # held until the hog closes its end of the pipe
                    os.write(filled, b"1")
                    os.read(held, 1)
                    del kept
                finally:
                    os._exit(0)
            pids.append(pid)
        os.close(filled)
        os.close(held)
        done, deadline = 0, time.monotonic() + 1.5
        while done < self.children and select.select([ready], [], [], max(0, deadline - time.monotonic()))[0]:
            got = os.read(ready, self.children)
            if not got:
                break
            done += len(got)
        os.close(hold)
        os.close(ready)
        killed = sum(os.WIFSIGNALED(status) for _, status in (os.waitpid(pid, 0) for pid in pids))
        return report(children=self.children, filled=done, killed=killed)


class Flooder:
    """Writes 1 MiB of lines to its stdout and its stderr, then 256 KiB without a line break: forge's stderr is the
    terminal's or the CI log's."""

    name, version = "flooder", "0"

    async def run(self, task, session):
        line = "FLOOD " * 170 + "\n"  # 1 KiB
        for stream in (sys.stdout, sys.stderr):
            for _ in range(1024):
                stream.write(line)
            stream.flush()
        sys.stdout.write("F" * 256 * 1024)
        sys.stdout.flush()
        return report(wrote_kib=2304)


class CircularResult:
    name, version = "circular-result", "0"

    async def run(self, task, session):
        output = {}
        output["self"] = output
        return AgentResult(answer="", output=output)


class DeepArgs:
    """A 100,000-deep argument through the client (a refused call), then the same as a raw frame."""

    name, version = "deep-args", "0"

    async def run(self, task, session):
        deep = []
        for _ in range(100_000):
            deep = [deep]
        await session.call("patient_search", mrn=deep)
        session._writer.write(
            frame(
                b'{"op":"call","trial":%d,"id":1,"tool":"patient_search","args":{"mrn":%s%s}}'
                % (session._trial, b"[" * 100_000, b"]" * 100_000)
            )
        )
        await asyncio.sleep(30)


class NonJsonArgs:
    """Calls a tool with arguments JSON cannot carry (each a refused call, the tool not run), then does its task."""

    name, version = "non-json-args", "0"

    def __init__(self):
        from forge_kernel.agents import AGENTS

        self.inner = AGENTS["scripted"]()

    async def run(self, task, session):
        mrn = task.context["mrn"]
        for what, odd in {"bytes": mrn.encode(), "object": object(), "set": {mrn}, "float nan": float("nan")}.items():
            reply = await session.call("patient_search", mrn=odd)
            error = {"code": "invalid_args", "message": f"args.mrn: {what} is not a JSON value"}
            if reply != {"ok": False, "error": error}:
                raise AssertionError(reply)
        return await self.inner.run(task, session)


class Oversize:
    """A frame header that promises a gigabyte."""

    name, version = "oversize", "0"

    async def run(self, task, session):
        session._writer.write((1 << 30).to_bytes(4, "big") + b"{")
        await asyncio.sleep(30)


class Garbage:
    name, version = "garbage", "0"

    async def run(self, task, session):
        session._writer.write(frame(b"\xff\xfe not json"))
        await asyncio.sleep(30)


class Hanger:
    name, version = "hanger", "0"

    async def run(self, task, session):
        await asyncio.Event().wait()


class CancelSwallower:
    """Catches every cancellation and keeps waiting."""

    name, version = "cancel-swallower", "0"

    async def run(self, task, session):
        while True:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                pass


class SyncBlocker:
    """A synchronous call that never returns, inside ``async def run``."""

    name, version = "sync-blocker", "0"

    async def run(self, task, session):
        time.sleep(3600)


class BusyLoop:
    name, version = "busy-loop", "0"

    async def run(self, task, session):
        while True:
            pass


class BlockingSDK:
    """The bundled ``scripted`` agent behind three blocking 0.2 s 'SDK calls' (e.g. a synchronous HTTP client)."""

    name, version = "blocking-sdk", "0"
    blocks = (0.2, 0.2, 0.2)

    def __init__(self):
        from forge_kernel.agents import AGENTS

        self.inner = AGENTS["scripted"]()

    async def run(self, task, session):
        for seconds in self.blocks:
            time.sleep(seconds)
            await asyncio.sleep(0)
        return await self.inner.run(task, session)


class LongBlockingSDK(BlockingSDK):
    """One blocking 1.2 s 'SDK call': four trials sharing a worker keep its loop stuck for 4.8 s."""

    name, blocks = "long-blocking-sdk", (1.2,)


class LazyLoader:
    """Loads its 'model' synchronously (1 s) in the first trial of each worker process, after a first call."""

    name, version = "lazy-loader", "0"
    loaded = False

    async def run(self, task, session):
        await session.call("finish")
        if not LazyLoader.loaded:
            LazyLoader.loaded = True
            time.sleep(1)
        return AgentResult()


class StallLaunderer:
    """While it shares its worker with trials of its own, it reads another patient's chart (the policy denies it and
    the record keeps the attempt), then blocks its event loop, so that each of those trials looks spoiled by a
    neighbour and would be run again, alone; alone, it does its task cleanly. The record must keep what it did."""

    name, version = "stall-launderer", "0"
    running = 0

    def __init__(self):
        from forge_kernel.agents import AGENTS

        self.inner = AGENTS["scripted"]()

    async def run(self, task, session):
        StallLaunderer.running += 1
        try:
            await asyncio.sleep(0.05)  # the other trials of its worker get under way
            if StallLaunderer.running > 1:
                shared = await self.while_shared(task, session)
                time.sleep(0.1)  # the loop stuck: every trial of the worker is reported stalled
                if shared is not None:
                    return shared
            return await self.inner.run(task, session)
        finally:
            StallLaunderer.running -= 1

    async def while_shared(self, task, session) -> AgentResult | None:
        """What it does before it stalls; a result to end the trial with, or None to do the task after."""
        await session.call("patient_history", patient_id=await other_patient(session, task.context["mrn"]))


class StallRetrier(StallLaunderer):
    """While it shares its worker, it spends most of its call budget on reads, then blocks its event loop, to have
    each of those trials run again with a fresh budget (the task takes 7 calls: 15 + 7 are over the 20 allowed)."""

    name, version = "stall-retrier", "0"

    async def while_shared(self, task, session) -> AgentResult:
        for _ in range(15):
            await session.call("patient_search", mrn=task.context["mrn"])
        return AgentResult()


class FailsToImport:
    """Stands in for a module that raises at import: it raises when built."""

    name, version = "fails-to-build", "0"

    def __init__(self):
        raise RuntimeError("no model key configured")


class NetProbe:
    """Fetches each URL in ``PROBE_URLS`` and says what came back: a plain URL as any client would (the proxy
    variables honoured), ``via-proxy:URL`` sent to the sandbox's proxy whatever ``NO_PROXY`` says, ``tunnel:URL``
    through a ``CONNECT`` tunnel of the proxy."""

    name, version = "net-probe", "0"

    async def run(self, task, session):
        import http.client
        import urllib.error
        import urllib.parse
        import urllib.request

        seen = {}
        for url in os.environ.get("PROBE_URLS", "").split():
            how, _, target = url.partition(":")
            if how not in ("via-proxy", "tunnel"):
                how, target = "", url
            try:
                if not how:
                    seen[url] = urllib.request.urlopen(target, timeout=3).read().decode()
                    continue
                proxy = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
                where = urllib.parse.urlsplit(target)
                conn = http.client.HTTPConnection(proxy.hostname, proxy.port, timeout=3)
                if how == "tunnel":
                    conn.set_tunnel(where.hostname, where.port)
                conn.request("GET", target if how == "via-proxy" else "/")
                response = conn.getresponse()
                seen[url] = f"{response.status} {response.read().decode().strip()}"
            except urllib.error.HTTPError as exc:
                seen[url] = f"{exc.code} {exc.read().decode().strip()}"
            except Exception as exc:
                seen[url] = f"unreachable ({type(exc).__name__}: {exc})"[:300]
        return report(**seen)


class Masquerader:
    """Names itself with a terminal's control characters: a title set by OSC and BEL, a carriage return and a line
    break to print a green gate over forge's own lines; it prints the same on its output."""

    name = "masquerader\x1b]0;pwned\x07\rforge: gate GREEN\n"
    version = "1\x1b[2K"

    async def run(self, task, session):
        print(self.name, flush=True)
        return await __import__("forge_kernel.agents", fromlist=["AGENTS"]).AGENTS["scripted"]().run(task, session)
