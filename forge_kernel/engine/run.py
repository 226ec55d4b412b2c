"""A run: tasks x agents x k trials, concurrent, resumable, each trial stored as it finishes."""
from __future__ import annotations

import asyncio
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from time import perf_counter

from tqdm import tqdm

from ..agents import agent_factory
from ..spec import Package, SpecError, find_packages, load_package
from ..spec.gate_policy import load_policy
from ..store import DB_NAME, RunStore
from ..store.run_store import utc_now
from .manifest import build_manifest
from .seeds import trial_seed
from .trial import Images, run_trial
from .validate import check_halves


@dataclass(frozen=True)
class RunSpec:
    """What to run; stored with the run so that a resume runs the same thing."""

    suite: list[str]
    agents: list[str]
    trials: int
    seed: int = 0
    gate: str | None = None
    """A release-gate policy declared before the run: its hash goes into the manifest."""


@dataclass(frozen=True)
class RunOutcome:
    run_dir: Path
    run_id: str
    total: int
    ran: int
    skipped: int


def agent_card(agent) -> dict:
    """Name, version and, where the agent states it, its configuration (for the manifest)."""
    card = {"name": agent.name, "version": str(agent.version)}
    if getattr(agent, "config", None) is not None:
        card["config"] = agent.config
    return card


def load_suite(paths: list[str]) -> list[Package]:
    """Load and cross-check every package under the paths, before any agent runs; ids must be unique."""
    packages = [check_halves(load_package(p)) for p in find_packages(paths)]
    seen: dict[str, Path] = {}
    for package in packages:
        if package.id in seen:
            raise SpecError(package.path / "package.yaml", "id", f"{package.id} also at {seen[package.id]}")
        seen[package.id] = package.path
    return packages


def open_store(run_dir: Path, spec: RunSpec, packages: list[Package], agents: list[dict], resume: bool) -> RunStore:
    """A new store, or the existing one when resuming the same spec on the same packages.

    Hashing reads every hidden half here, so a bad one fails before any trial runs (agents never see it).
    """
    exists = (run_dir / DB_NAME).exists()
    if exists and not resume:
        raise SpecError(run_dir, "--out", "holds a run already; pass --resume to finish it, or choose another folder")
    store = RunStore.open(run_dir) if exists else RunStore.create(run_dir)
    try:
        if store.spec() is None:  # new, or killed before its manifest was written
            start_run(store, spec, packages, agents)
        else:
            check_same_run(store, run_dir, spec, packages)
    except BaseException:
        store.close()
        raise
    return store


def start_run(store: RunStore, spec: RunSpec, packages: list[Package], agents: list[dict]) -> None:
    run_id = uuid.uuid4().hex[:12]
    hashes = {p.id: p.package_hash for p in packages}
    manifest = build_manifest(run_id, asdict(spec), hashes, agents, utc_now())
    if spec.gate:
        manifest["gate_policy"] = {"path": str(Path(spec.gate).resolve()), "hash": load_policy(spec.gate).hash}
    store.start(run_id, asdict(spec), manifest, packages)


def check_same_run(store: RunStore, run_dir: Path, spec: RunSpec, packages: list[Package]) -> None:
    """A resume must run the same agents, trials, seed and packages as the stored run."""
    stored = store.spec()
    for key, value in asdict(spec).items():
        if key not in ("suite", "gate") and stored.get(key) != value:
            raise SpecError(run_dir, f"--{key}", f"is {value!r}, the stored run has {stored.get(key)!r}")
    current = {p.id: p.package_hash for p in packages}
    stored_hashes = store.package_hashes()
    changed = sorted(k for k, h in stored_hashes.items() if current.get(k) != h)
    if changed or len(stored_hashes) != len(packages):
        raise SpecError(run_dir, "--suite", f"packages differ from the stored run ({', '.join(changed) or 'set changed'})")


async def execute(spec: RunSpec, run_dir: Path, concurrency: int = 4, resume: bool = False,
                  progress: bool | None = None) -> RunOutcome:
    """Run every (task, agent, trial) not yet stored; return what was done."""
    packages = load_suite(spec.suite)
    factories = {}
    for spec_name in spec.agents:
        factory = agent_factory(spec_name)
        name = factory().name
        if name in factories:
            raise SpecError("--agent", spec_name, f"a second agent named {name!r}")
        factories[name] = factory
    agents = [agent_card(factory()) for factory in factories.values()]
    store = open_store(run_dir, spec, packages, agents, resume)
    try:
        done = store.done()
        plan = [(p, name, k) for p in packages for name in factories for k in range(spec.trials)
                if (p.id, name, k) not in done]
        images = Images()
        limit = asyncio.Semaphore(concurrency)
        bar = tqdm(total=len(plan), unit="trial", desc="trials", disable=None if progress is None else not progress)

        async def one(package: Package, name: str, k: int) -> None:
            waiting = perf_counter()
            async with limit:
                queued = perf_counter() - waiting
                agent = factories[name]()
                record = await run_trial(package, images[package], agent, k, trial_seed(spec.seed, package.id, name, k))
                record.queued_s = queued
                store.write_trial(record)
                bar.update()

        await asyncio.gather(*(one(*item) for item in plan))
        bar.close()
        store.finish()
        total = len(packages) * len(spec.agents) * spec.trials
        return RunOutcome(run_dir, store.manifest()["run_id"], total, len(plan), total - len(plan))
    finally:
        store.close()
