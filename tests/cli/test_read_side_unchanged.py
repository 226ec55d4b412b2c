"""The read side gives the figures it gave before its redesign: ``forge compare`` (--json, its text and exit code),
``forge ablation``, ``forge ledger`` (--csv and its text) and ``forge summary`` on the reference run, against the
outputs recorded in tests/golden/read_side/ with the code before the redesign (recorded again when cost and model
tokens per task were added beside the pass rates: lines and fields added, none changed).

Timings differ from one run to the next: latency figures are checked against their definition instead, computed here
from the store with plain SQL. What the redesign adds (the trial ids behind each task, the synthetic-data banner)
is the only difference allowed. To record again after a deliberate change of figures (or of the bundled suites):
``FORGE_RECORD_GOLDEN=1 .venv/bin/python -m pytest tests/cli/test_read_side_unchanged.py``.
"""

from __future__ import annotations

import io
import json
import os
import re
import sqlite3
from contextlib import closing
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from forge_kernel.agents.reference import REFERENCE_SET
from forge_kernel.analysis.stats import percentile
from forge_kernel.cli import main
from forge_kernel.spec.compact import SYNTHETIC_BANNER

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "read_side"
RECORD = bool(os.environ.get("FORGE_RECORD_GOLDEN"))
PAIRS = [("baseline-v1", agent) for agent in REFERENCE_SET[1:]] + [
    ("candidate-v2", "candidate-v2-no-conflict"),
    ("candidate-v2", "candidate-v2-no-domain-gate"),
]
TIMING = re.compile(r"(P95 latency \(s\)) [0-9.e+-]+")
ABLATIONS = "candidate-v2-no-conflict,candidate-v2-no-domain-gate"


def forge(*argv) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in argv])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout


def run_id(run: Path) -> str:
    with closing(sqlite3.connect(run / "run.sqlite")) as db:
        return db.execute("SELECT value FROM meta WHERE key = 'run_id'").fetchone()[0]


def plain(text: str, run: Path) -> str:
    """Text without the banner (and the blank line after it), with the run's folder, id and timings as
    placeholders."""
    banner = re.compile(rf"^.*{re.escape(SYNTHETIC_BANNER)}\n(\n)?", re.M)
    assert banner.match(text), "the banner comes first"
    text = "\n".join(banner.sub("", text, count=1).splitlines())
    text = text.replace(str(run), "<run>").replace(run_id(run), "<run-id>")
    return TIMING.sub(r"\1 <timing>", text) + "\n"


def plain_json(doc, path: tuple = ()):
    """The --json document without the new fields (trial ids), with run folders and latencies as placeholders."""
    if isinstance(doc, dict):
        return {k: plain_json(v, (*path, k)) for k, v in doc.items() if k != "trial_ids"}
    if isinstance(doc, list):
        return [plain_json(v, path) for v in doc]
    if path and path[-1] == "run_dir":
        return "<run>"
    if "latency" in path and doc is not None:
        return "<timing>"
    if isinstance(doc, str):
        return TIMING.sub(r"\1 <timing>", doc)
    return doc


def plain_ledger(csv: str, run: Path) -> str:
    """The ledger CSV without its run id and row ids (checked against the store here)."""
    ledger = pd.read_csv(io.StringIO(csv), dtype=str, keep_default_na=False)
    with closing(sqlite3.connect(run / "run.sqlite")) as db:
        ids = {
            (t, a, str(k)): str(i) for i, t, a, k in db.execute("SELECT trial_id, task_id, agent, trial FROM trials")
        }
    assert ledger["trial_id"].tolist() == [ids[key] for key in zip(ledger["task_id"], ledger["agent"], ledger["trial"])]
    assert set(ledger["run_id"]) == {run_id(run)}
    return ledger.drop(columns=["run_id", "trial_id"]).to_csv(index=False)


@pytest.fixture(scope="module")
def outputs(reference_run, tmp_path_factory) -> dict[str, str]:
    """File name in GOLDEN -> today's output, made comparable."""
    tmp, run, out = tmp_path_factory.mktemp("read-side"), reference_run, {}
    for base, cand in PAIRS:
        name = f"compare-{base}-{cand}"
        code, text = forge(
            "compare", run, run, "--baseline-agent", base, "--candidate-agent", cand, "--json", tmp / f"{name}.json"
        )
        out[f"{name}.txt"] = f"exit {code}\n" + plain(text, run)
        doc = plain_json(json.loads((tmp / f"{name}.json").read_text(encoding="utf-8")))
        out[f"{name}.json"] = json.dumps(doc, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
    out["ablation.txt"] = plain(forge("ablation", run, "--candidate", "candidate-v2", "--ablation", ABLATIONS)[1], run)
    out["ledger.txt"] = plain(forge("ledger", run, "--csv", tmp / "ledger.csv")[1], run)
    out["ledger.csv"] = plain_ledger((tmp / "ledger.csv").read_text(encoding="utf-8"), run)
    for name, args in (("summary", ()), ("summary-markdown", ("--markdown",)), ("summary-suite", ("--by", "suite"))):
        out[f"{name}.txt"] = plain(forge("summary", run, *args)[1], run)
    if RECORD:
        GOLDEN.mkdir(parents=True, exist_ok=True)
        for name, text in out.items():
            (GOLDEN / name).write_text(text, encoding="utf-8")
    return out


def differences(got, want, path: str = "") -> list[str]:
    """Where two JSON documents differ; numbers equal to 12 significant digits count as equal."""
    if isinstance(want, dict) and isinstance(got, dict):
        return [
            d for k in sorted(got.keys() | want.keys()) for d in differences(got.get(k), want.get(k), f"{path}.{k}")
        ]
    if isinstance(want, list) and isinstance(got, list) and len(got) == len(want):
        return [d for i, (g, w) in enumerate(zip(got, want)) for d in differences(g, w, f"{path}[{i}]")]
    both_numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (got, want))
    if both_numbers and got == pytest.approx(want, rel=1e-12, abs=1e-15):
        return []
    return [] if got == want else [f"{path}: {got!r} != {want!r}"]


def golden_names() -> list[str]:
    return sorted(p.name for p in GOLDEN.iterdir()) if GOLDEN.is_dir() else []


@pytest.mark.parametrize("name", golden_names())
def test_same_output_as_before_the_redesign(outputs, name):
    want = (GOLDEN / name).read_text(encoding="utf-8")
    if name.endswith(".json"):
        assert differences(json.loads(outputs[name]), json.loads(want)) == []
    else:
        assert outputs[name] == want


def test_every_recorded_output_is_checked(outputs):
    assert golden_names() == sorted(outputs)


@pytest.mark.parametrize("base, cand", PAIRS[:3])
def test_latency_is_agent_tool_and_queue_time_as_defined(reference_run, tmp_path, base, cand):
    """Each side's P50 / P95 / P99, against the definition: total = the trial's duration, tool = the sum of its calls'
    latencies, agent = total - tool (never below 0), queue = the time it waited for a worker."""
    forge(
        "compare",
        reference_run,
        reference_run,
        "--baseline-agent",
        base,
        "--candidate-agent",
        cand,
        "--json",
        tmp_path / "c.json",
    )
    doc = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))["comparison"]
    with closing(sqlite3.connect(reference_run / "run.sqlite")) as db:
        for side, agent in (("baseline", base), ("candidate", cand)):
            rows = db.execute(
                "SELECT t.duration_s, t.queued_s, (SELECT COALESCE(SUM(latency_ms), 0) / 1000.0 FROM "
                "events e WHERE e.trial_id = t.trial_id) FROM trials t WHERE agent = ?",
                (agent,),
            ).fetchall()
            parts = {
                "total": [r[0] for r in rows],
                "tool": [r[2] for r in rows],
                "agent": [max(r[0] - r[2], 0.0) for r in rows],
                "queue": [r[1] for r in rows],
            }
            for part, values in parts.items():
                want = {f"p{q}": percentile(values, q) for q in (50, 95, 99)}
                assert doc[side]["latency"][part] == pytest.approx(want, rel=1e-9, abs=1e-12), (side, part)
