"""Small helpers shared by several test files."""

import asyncio
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
import yaml

from forge_kernel.agents import AGENTS
from forge_kernel.ehr import EHRView
from forge_kernel.engine.trial import run_trial
from forge_kernel.spec import AgentResult, Event, Package, TaskPackage, VerifierUse, load_package
from forge_kernel.spec.loading import read_yaml
from forge_kernel.spec.suites import merged
from forge_kernel.store import load_events, load_trials, load_verdicts
from forge_kernel.tools import ToolSession
from forge_kernel.verify import GradeContext, bind
from forge_kernel.workers import bwrap_problem
from forge_kernel.workers._cgroup import problem

ROOT = Path(__file__).resolve().parents[1]
MCP_AGENT = ROOT / "tests" / "mcp_agents" / "scripted_mcp_agent.py"
"""An MCP agent that makes the calls of a plan it is handed (``gold_plan``'s), then hands in its answer."""
WORKED_EXAMPLES = ["SC-DDX-CHEST-PAIN", "SC-MED-GASTRIC-ULCER", "SC-OPS-ADMISSION"]
needs_bwrap = pytest.mark.skipif(
    bwrap_problem() is not None and not os.environ.get("CI"), reason=f"no namespace sandbox here: {bwrap_problem()}"
)
"""For tests that run agents in the namespace sandbox: CI runs them (it installs bubblewrap)."""
needs_cgroups = pytest.mark.skipif(
    any(map(problem, ("pids", "memory"))) and not os.environ.get("CI"),
    reason=f"forge cannot make cgroups here: {problem('pids') or problem('memory')}",
)
"""For tests of the bounds on an agent's processes and memory: CI runs them (as root)."""


def copy_suite_files(root: Path, suite: str = "superclue") -> None:
    """The suite's two suite.yaml files (the defaults its packages take) under root."""
    for half in ("task_packages", "verifiers"):
        (root / half / suite).mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / half / suite / "suite.yaml", root / half / suite)


def update_yaml(path: Path, **fields) -> None:
    """Merge ``fields`` into a package file (mappings key by key, anything else replaced), as a person edits it."""
    path.write_text(
        yaml.safe_dump(merged(read_yaml(path), fields), allow_unicode=True, sort_keys=False), encoding="utf-8"
    )


def copy_worked_examples(root: Path) -> Path:
    """Both halves of the three worked examples under root (to edit without touching the repository), with their
    suite files; the suite."""
    return copy_packages(root, "superclue", WORKED_EXAMPLES)


def copy_packages(root: Path, suite: str, tasks) -> Path:
    """Both halves of a suite's packages under root, with its suite files; the suite's folder."""
    copy_suite_files(root, suite)
    for task in tasks:
        shutil.copytree(ROOT / "task_packages" / suite / task, root / "task_packages" / suite / task)
        shutil.copy(ROOT / "verifiers" / suite / f"{task}.yaml", root / "verifiers" / suite)
    return root / "task_packages" / suite


def records(df):
    """DataFrame rows as dicts, NaN as None (so that rows compare equal)."""
    return df.astype(object).where(df.notna(), None).to_dict("records")


TIMINGS = ["duration_s", "queued_s", "finished_at", "latency_ms", "started_ms"]
"""Columns that differ between two runs of the same thing."""


def snapshot(run_dir):
    """Everything stored about a run's outcome, without timings and row ids."""
    trials = load_trials(run_dir)
    key = trials.set_index("trial_id")[["task_id", "agent", "trial"]]
    order = ["task_id", "agent", "trial"]
    rows = trials.drop(columns=["trial_id", *TIMINGS], errors="ignore").sort_values(order)
    events = load_events(run_dir).join(key, on="trial_id").drop(columns=["trial_id", *TIMINGS], errors="ignore")
    verdicts = load_verdicts(run_dir).join(key, on="trial_id").drop(columns=["trial_id"])
    verdicts.loc[verdicts.kind == "budget.limits", "reason"] = ""  # it reports the wall time
    return (
        records(rows),
        records(events.sort_values([*order, "step"])),
        records(verdicts.sort_values([*order, "verifier_id"])),
    )


def trial(package, image, calls, answer="", output=None, **ctx_fields):
    """A context to grade: the calls run through a real tool session on a fresh view."""
    view = EHRView(image)
    session = ToolSession(package.public, view)

    async def play():
        for tool, args in calls:
            await session.call(tool, **args)

    asyncio.run(play())
    return GradeContext(package, view, session.events, AgentResult(answer=answer, output=output or {}), **ctx_fields)


def check(ctx, kind, **params):
    """One verifier's outcome on the context as it is now (a fresh grading: what an earlier one derived is
    forgotten, as ``grade`` forgets it)."""
    found, validated = bind(VerifierUse(id="v", kind=kind, category="success", severity="soft", params=params))
    ctx.memo.clear()
    return found.check(ctx, validated)


def change_existing(ctx, rtype, rid, **fields):
    """Append a write that changes an existing resource (no bundled tool does), as one more event."""
    view, step = ctx.view, len(ctx.events) + 1
    view.step, first = step, len(view.changes)
    view.update({**view.get(rtype, rid), **fields})
    ctx.events.append(
        Event(
            step=step,
            tool="record_update",
            args={},
            kind="write",
            ok=True,
            changes=[op for _, op in view.changes[first:]],
        )
    )


def unit_package(
    folder: Path, task_id: str, category: str, resources: list[dict], now: str, instruction: dict | None = None
) -> Package:
    """A package held in memory, over these resources, for patient p1 and the clock ``now``."""
    public = TaskPackage.model_validate(
        {
            "id": task_id,
            "version": "1",
            "title": "t",
            "suite": "unit",
            "category": category,
            "environment": {
                "ehr_image": "unit",
                "ehr_version": "1",
                "fixtures": ["ehr.json"],
                "now": now,
                "patient_id": "p1",
            },
            "task": {"instruction": instruction or {"zh": "测试", "en": "test"}},
            "tools": ["finish"],
        }
    )
    return Package(public=public, path=folder, fixture_hashes={}, resources=resources)


def read_session(image, patient_id: str = "p1") -> ToolSession:
    """A tool session with every read tool of the catalog, on a fresh view of the image, for ``patient_id``."""
    from forge_kernel.tools import TOOLS

    package = TaskPackage.model_validate(
        {
            "id": "UNIT-READ",
            "version": "1",
            "title": "t",
            "suite": "unit",
            "category": "information_retrieval",
            "environment": {
                "ehr_image": "u",
                "ehr_version": "1",
                "fixtures": ["e.json"],
                "now": image.now.isoformat(),
                "patient_id": patient_id,
            },
            "task": {"instruction": {"zh": "测试", "en": "test"}},
            "tools": sorted(name for name, spec in TOOLS.items() if spec.kind == "read"),
        }
    )
    return ToolSession(package, EHRView(image))


SYNTHEA_BUNDLES = sorted((Path(__file__).parent / "fixtures" / "realformat" / "synthea").glob("*.json"))
"""Three Synthea-format patients (synthetic), one bundle each."""


def write_image(root: Path, name: str = "rf", version: str = "1") -> Path:
    """``root/ehr_images/<name>/<version>/``: the Synthea fixtures as a shared image (the first bundle gzipped)."""
    import gzip

    folder = root / "ehr_images" / name / version
    folder.mkdir(parents=True)
    manifest = {"name": name, "version": version, "description": "three synthetic patients", "synthetic": True}
    (folder / "image.yaml").write_text(yaml.safe_dump(manifest), encoding="utf-8")
    for i, path in enumerate(SYNTHEA_BUNDLES):
        if i == 0:
            (folder / f"{path.name}.gz").write_bytes(gzip.compress(path.read_bytes()))
        else:
            shutil.copy(path, folder / path.name)
    return folder


def image_patients() -> list[str]:
    """The Patient ids of the Synthea fixtures, in the order of their bundles."""
    import json

    bundles = [json.loads(p.read_text(encoding="utf-8")) for p in SYNTHEA_BUNDLES]
    return [e["resource"]["id"] for b in bundles for e in b["entry"] if e["resource"]["resourceType"] == "Patient"]


def image_package(
    root: Path,
    task_id: str,
    patient_id: str,
    now: str = "2026-06-01T00:00:00+00:00",
    overlay: list[dict] | None = None,
    image: str = "rf",
) -> Path:
    """A package naming the shared image ``image`` (``write_image``), its fixtures an overlay bundle of ``overlay``
    (none when None), its hidden half asking only for a finish."""
    import json

    folder = root / "task_packages" / "images" / task_id
    folder.mkdir(parents=True)
    fixtures = []
    if overlay is not None:
        bundle = {"resourceType": "Bundle", "type": "collection", "entry": [{"resource": r} for r in overlay]}
        (folder / "overlay.json").write_text(json.dumps(bundle), encoding="utf-8")
        fixtures = ["overlay.json"]
    public = {
        "id": task_id,
        "version": "1",
        "title": "a chart of a shared image (synthetic)",
        "suite": "images",
        "category": "information_retrieval",
        "environment": {
            "ehr_image": image,
            "ehr_version": "1",
            "fixtures": fixtures,
            "now": now,
            "patient_id": patient_id,
        },
        "task": {"instruction": {"zh": "测试", "en": "test"}, "language": "en"},
        "tools": ["vital_signs", "lab_results", "finish"],
    }
    (folder / "package.yaml").write_text(yaml.safe_dump(public, allow_unicode=True), encoding="utf-8")
    verifiers = root / "verifiers" / "images"
    verifiers.mkdir(parents=True, exist_ok=True)
    rule = {"require": {"tool": "finish"}, "reason": "the task ends with finish"}
    hidden = {
        "id": task_id,
        "version": "1",
        "expected_tools": ["finish"],
        "verifiers": [{"id": "done", "kind": "trace.events", "category": "trace", "params": {"rules": [rule]}}],
        "gold": {"answer": "done", "calls": [{"tool": "finish", "args": {"summary": "done"}}]},
    }
    (verifiers / f"{task_id}.yaml").write_text(yaml.safe_dump(hidden), encoding="utf-8")
    return folder


def signoff_argv(release: Path, key_dir: Path, name: str, role: str, decision: str, comment: str) -> list:
    """``forge signoff``'s arguments for ``name`` signing ``release`` with the key ``key_dir/<name>.key``."""
    return [
        *("signoff", release, "--reviewer", name, "--role", role, "--key", key_dir / f"{name}.key"),
        *("--decision", decision, "--comment", comment),
    ]


def reference_trial(folder: Path, agent: str, images):
    """Trial 0 (seed 7) of a bundled reference agent on the package in ``folder``, with ``images`` (an ``Images``)."""
    package = load_package(folder)
    return asyncio.run(run_trial(package, images[package], AGENTS[agent](), 0, 7))


def gold_plan(task: str, verifiers: Path = ROOT / "verifiers") -> dict:
    """The gold calls and answer of a SuperCLUE package, as a plan for the scripted MCP agent (``MCP_AGENT``)."""
    found = read_yaml(verifiers / "superclue" / f"{task}.yaml")["gold"]
    return {"calls": found["calls"], "answer": found.get("answer", ""), "output": found.get("output", {})}


TRIAL_TABLES = ("events", "call_data", "turns", "scores", "verdict_rows", "trials")
"""The tables that hold a trial's rows, its own row's last."""


def delete_trial(db: sqlite3.Connection, trial_id: int) -> None:
    """Remove a trial with every row of it, as if it had never been stored."""
    for table in TRIAL_TABLES:
        db.execute(f"DELETE FROM {table} WHERE trial_id = ?", (trial_id,))


VERSION_5_VERDICTS = """
CREATE TABLE verdicts (
  trial_id INTEGER NOT NULL REFERENCES trials(trial_id), grading_id INTEGER NOT NULL REFERENCES gradings(grading_id),
  verifier_id TEXT NOT NULL, kind TEXT NOT NULL, category TEXT NOT NULL, severity TEXT NOT NULL,
  passed INTEGER NOT NULL, reason TEXT NOT NULL, steps TEXT NOT NULL, error INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (trial_id, grading_id, verifier_id)
) WITHOUT ROWID;
"""
"""The verdicts table of a version 5 store: each row with its kind, category, severity and reason."""


def back_to_version_5(db_path: Path) -> None:
    """Make a store of this version one of version 5, as that version wrote it: ``verdicts`` a table again, without
    ``verdict_texts`` and ``verdict_rows``."""
    with sqlite3.connect(db_path) as db:
        rows = db.execute("SELECT * FROM verdicts").fetchall()
        db.executescript(f"DROP VIEW verdicts; DROP TABLE verdict_rows; DROP TABLE verdict_texts;{VERSION_5_VERDICTS}")
        db.executemany("INSERT INTO verdicts VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
        db.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
    db.close()


VERSION_4_EVENTS = """
CREATE TABLE events (
  trial_id INTEGER NOT NULL REFERENCES trials(trial_id), step INTEGER NOT NULL, tool TEXT NOT NULL, kind TEXT NOT NULL,
  args TEXT NOT NULL, ok INTEGER NOT NULL, result TEXT, error TEXT, denied TEXT, flags TEXT NOT NULL, fault TEXT,
  latency_ms REAL NOT NULL, changes TEXT NOT NULL, started_ms REAL, PRIMARY KEY (trial_id, step)
) WITHOUT ROWID;
CREATE INDEX events_calls ON events (trial_id, step, tool, ok, latency_ms, fault, denied, flags, error, changes);
"""
"""The events table of a version 4 store: each call's arguments, result and changes in its row."""


def back_to_version_4(db_path: Path) -> None:
    """Make a store of this version one of version 4, as that version wrote it: the call data back in ``events``
    (with its index), no ``call_data`` and no ``trials.writes``, and verdicts as version 5 kept them."""
    from forge_kernel.store._call_data import unpack

    back_to_version_5(db_path)
    with sqlite3.connect(db_path) as db:
        calls = {
            (trial_id, step): call
            for trial_id, data in db.execute("SELECT trial_id, data FROM call_data")
            for step, call in zip(
                [s for (s,) in db.execute("SELECT step FROM events WHERE trial_id = ? ORDER BY step", (trial_id,))],
                unpack(data),
                strict=True,
            )
        }
        rows = db.execute(
            "SELECT trial_id, step, tool, kind, ok, error, denied, flags, fault, latency_ms, started_ms FROM events"
        ).fetchall()
        db.executescript(
            f"DROP TABLE events; DROP TABLE call_data; ALTER TABLE trials DROP COLUMN writes;{VERSION_4_EVENTS}"
        )
        db.executemany(
            "INSERT INTO events VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [
                (
                    t,
                    s,
                    tool,
                    kind,
                    calls[t, s][0],
                    ok,
                    calls[t, s][1],
                    error,
                    denied,
                    flags,
                    fault,
                    ms,
                    calls[t, s][2],
                    at,
                )
                for t, s, tool, kind, ok, error, denied, flags, fault, ms, at in rows
            ],
        )
        db.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    db.close()
