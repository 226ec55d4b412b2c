"""The failure ledger on real runs: one row per failed trial, an error class by the documented rules, triage
decisions that outlive a run, CSV and Parquet exports, repro bundles that ``forge grade`` re-grades to the
stored verdicts, and no patient content anywhere in what the ledger prints or writes."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from forge_kernel.agents import AGENTS
from forge_kernel.analysis.display import plain_table
from forge_kernel.analysis.ledger import failure_ledger, read_ledger
from forge_kernel.analysis.triage import load_triage
from forge_kernel.catalog import CATALOG, Entry
from forge_kernel.cli import main
from forge_kernel.engine import RunSpec, execute
from forge_kernel.engine.repro import COMMAND, write_bundles
from forge_kernel.spec import AgentResult
from forge_kernel.spec.compact import SYNTHETIC_BANNER
from forge_kernel.store import load_events, load_trials, load_verdicts, open_run
from tests.helpers import copy_worked_examples, update_yaml

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "task_packages" / "superclue"
TASKS = ["SC-DDX-CHEST-PAIN", "SC-MED-GASTRIC-ULCER", "SC-OPS-ADMISSION"]
"""The three worked examples: two high-risk tasks and one low-risk one."""
ULCER = "SC-MED-GASTRIC-ULCER"
FORGE = str(Path(sys.executable).with_name("forge"))
T = "tests.agents_for_tests"


# --- agents that fail in one way each ----------------------------------------------------------------------------


class BadArgs:
    """Sends a call with an argument the tool does not have, and stops (parser)."""

    name, version = "bad-args", "0"

    async def run(self, task, session) -> AgentResult:
        await session.call("patient_search", medical_record=task.context["mrn"])
        return AgentResult()


class Fumbler:
    """Asks for a patient that does not exist and never calls that tool again (tool/data)."""

    name, version = "fumbler", "0"

    async def run(self, task, session) -> AgentResult:
        await session.call("patient_detail", patient_id="no-such-patient")
        return AgentResult()


class Retrier:
    """Meets the same tool error, then calls the tool right: recovered, so not tool/data."""

    name, version = "retrier", "0"

    async def run(self, task, session) -> AgentResult:
        await session.call("patient_detail", patient_id="no-such-patient")
        found = await session.call("patient_search", mrn=task.context["mrn"])
        await session.call("patient_detail", patient_id=found["result"]["patients"][0]["patient_id"])
        return AgentResult()


class Trespasser:
    """Finds the patient, then writes a vital sign where the task may not write one (a denied call: policy)."""

    name, version = "trespasser", "0"

    async def run(self, task, session) -> AgentResult:
        found = await session.call("patient_search", mrn=task.context["mrn"])
        await session.call(
            "vital_sign_create",
            patient_id=found["result"]["patients"][0]["patient_id"],
            name="体温",
            value=37.0,
            unit="Cel",
        )
        return AgentResult()


class Silent:
    """Reads nothing and answers nothing (retrieval)."""

    name, version = "silent", "0"

    async def run(self, task, session) -> AgentResult:
        return AgentResult()


class Forgetful:
    """candidate-v2's calls with its answer dropped: every record read, still a wrong answer (agent/model)."""

    name, version = "forgetful", "0"

    def __init__(self):
        self.inner = AGENTS["candidate-v2"]()

    async def run(self, task, session) -> AgentResult:
        result = await self.inner.run(task, session)
        return replace(result, answer="", output={})


class UnsafeCrasher:
    """unsafe-shortcut's calls, then a crash: a critical failure whose trial status a replay cannot recreate."""

    name, version = "unsafe-crasher", "0"

    def __init__(self):
        self.inner = AGENTS["unsafe-shortcut"]()

    async def run(self, task, session) -> AgentResult:
        await self.inner.run(task, session)
        raise RuntimeError("crash after the write")


def register_agent(mp: pytest.MonkeyPatch, agent: type) -> None:
    """Register an agent class in the catalog until ``mp`` is undone."""
    mp.setitem(CATALOG.entries, ("agent", agent.name), Entry("agent", agent.name, "1", {}, agent, __name__))


OWN_AGENTS = [BadArgs, Fumbler, Retrier, Trespasser, Silent, Forgetful]
EXPECTED = {
    "crashing": "runtime",
    "hanging": "runtime",
    "budget-breaker": "runtime",
    "unsafe-shortcut": "policy",
    "trespasser": "policy",
    "bad-args": "parser",
    "fumbler": "tool/data",
    "retrier": "retrieval",
    "silent": "retrieval",
    "forgetful": "agent/model",
}
"""The error class every failed trial of each agent must get."""


# --- helpers ------------------------------------------------------------------------------------------------------


def copy_suite(root: Path, **fields) -> Path:
    """Both halves of the worked examples under root; ``fields`` merged into every package.yaml."""
    suite = copy_worked_examples(root)
    for task in TASKS:
        update_yaml(suite / task / "package.yaml", **fields)
    return suite


def edit(path: Path, replace: dict[str, str]) -> None:
    text = path.read_text(encoding="utf-8")
    for old, new in replace.items():
        assert old in text, f"{old!r} not in {path}"
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")


def ledger_of(run_dir: Path, triage=None) -> pd.DataFrame:
    """The ledger's table of a run."""
    with open_run(run_dir) as opened:
        return failure_ledger(opened, triage).table


def run(suite: Path, agents: list[str], out: Path, trials: int = 1) -> Path:
    spec = RunSpec(suite=[str(suite)], agents=agents, trials=trials, seed=0)
    asyncio.run(execute(spec, out, progress=False))
    return out


def invoke(*argv: str) -> subprocess.CompletedProcess:
    """``forge`` in this process; an uncaught exception fails the test."""
    result = CliRunner().invoke(main, [str(a) for a in argv])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return subprocess.CompletedProcess(argv, result.exit_code, result.stdout, result.stderr)


def write_triage(path: Path, *decisions: dict) -> Path:
    path.write_text(yaml.safe_dump({"decisions": list(decisions)}, allow_unicode=True), encoding="utf-8")
    return path


def verdict_keys(verdicts) -> dict[str, tuple]:
    """verifier id -> (category, severity, passed, steps): what a reproduction must match."""
    return {
        v["verifier_id"]: (
            v["category"],
            v["severity"],
            bool(v["passed"]),
            tuple(json.loads(v["steps"]) if isinstance(v["steps"], str) else v["steps"]),
        )
        for v in verdicts
    }


def fixture_texts(suite: Path) -> set[str]:
    """Patient names, MRNs and identifiers from the fixtures: text that must never reach the ledger."""
    texts = set()
    for fixture in suite.rglob("fixtures/*.json"):
        for entry in json.loads(fixture.read_text(encoding="utf-8"))["entry"]:
            resource = entry["resource"]
            if resource["resourceType"] == "Patient":
                for name in resource.get("name", []):
                    texts.update(filter(None, [name.get("text"), name.get("family"), "".join(name.get("given", []))]))
                texts.update(i["value"] for i in resource.get("identifier", []))
    return texts


# --- a run with a failure of every class --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> Path:
    """One trial per task of agents that each fail in one way, plus candidate-v2 (max_seconds 1 for the hang)."""
    tmp = tmp_path_factory.mktemp("ledger")
    suite = copy_suite(tmp, budget={"max_seconds": 1})
    mp = pytest.MonkeyPatch()
    mp.syspath_prepend(str(ROOT))
    for agent in OWN_AGENTS:
        register_agent(mp, agent)
    try:
        return run(
            suite,
            [
                "candidate-v2",
                "unsafe-shortcut",
                f"{T}:Crashing",
                f"{T}:Hanging",
                f"{T}:BudgetBreaker",
                *(a.name for a in OWN_AGENTS),
            ],
            tmp / "run",
        )
    finally:
        mp.undo()


@pytest.fixture(scope="module")
def ledger(mixed) -> pd.DataFrame:
    return ledger_of(mixed)


def test_rows_are_the_failed_trials(mixed, ledger):
    trials = load_trials(mixed)
    failed = trials[~trials["passed"]]
    assert sorted(zip(ledger["task_id"], ledger["agent"], ledger["trial"])) == sorted(
        zip(failed["task_id"], failed["agent"], failed["trial"])
    )
    verdicts = load_verdicts(mixed)
    failing = verdicts[verdicts["passed"] == 0].groupby("trial_id")["verifier_id"].agg(set)
    for row in ledger.itertuples():
        assert set(row.failed_verifiers.split(",")) == failing[row.trial_id]
        assert (
            len(row.failed_categories.split(","))
            == len(row.failed_severities.split(","))
            == len(row.failed_verifiers.split(","))
        )
    with closing(sqlite3.connect(mixed / "run.sqlite")) as db:
        assert set(ledger["run_id"]) == {db.execute("SELECT value FROM meta WHERE key = 'run_id'").fetchone()[0]}
    assert set(ledger["hidden_version"]) == {"1.1.0"} and set(ledger["fix_status"]) == {"open"}


@pytest.mark.parametrize("agent", sorted(EXPECTED))
def test_each_agent_fails_in_its_own_class(ledger, agent):
    rows = ledger[ledger["agent"] == agent]
    assert len(rows), f"{agent} failed nothing"
    assert set(rows["taxonomy"]) == {EXPECTED[agent]}
    component = {"runtime": "runtime", "tool/data": "tool catalog"}.get(EXPECTED[agent], "agent")
    assert set(rows["component"]) == {component}
    assert all(EXPECTED[agent] in s.split(",") for s in rows["signals"])


def test_runtime_rows_carry_the_trial_status(ledger):
    status = ledger.groupby("agent")["status"].agg(set)
    assert status["crashing"] == {"agent_error"}
    assert status["hanging"] == {"timeout"}
    assert status["budget-breaker"] == {"budget_exceeded"}


def test_a_recovered_tool_error_is_not_tool_data(ledger):
    assert not ledger.loc[ledger["agent"] == "retrier", "signals"].str.contains("tool/data").any()
    assert ledger.loc[ledger["agent"] == "fumbler", "signals"].str.contains("tool/data").all()


def test_steps_point_at_failed_calls_and_failing_verdicts(mixed, ledger):
    steps = {(r.agent, r.task_id): r.steps for r in ledger.itertuples()}
    assert steps[("bad-args", ULCER)] == "1"
    assert steps[("trespasser", ULCER)].split(",")[-1] == "2"  # the denied write
    unsafe = ledger[(ledger["agent"] == "unsafe-shortcut") & (ledger["task_id"] == ULCER)].iloc[0]
    writes = load_events(mixed, int(unsafe["trial_id"]))
    write_step = int(writes.loc[writes["tool"] == "medication_request_create", "step"].iloc[0])
    assert str(write_step) in unsafe["steps"].split(",")


def test_critical_is_a_hard_safety_failure_on_a_high_risk_task(mixed, ledger):
    verdicts = load_verdicts(mixed)
    hard_safety = set(
        verdicts.loc[
            (verdicts["passed"] == 0) & (verdicts["category"] == "safety") & (verdicts["severity"] == "hard"),
            "trial_id",
        ]
    )
    expected = ledger["trial_id"].isin(hard_safety) & ledger["risk"].isin(["high", "critical"])
    assert expected.any()
    assert ledger["critical"].tolist() == expected.tolist()


def test_a_medium_risk_task_has_no_critical_failure_and_no_bundle(tmp_path):
    suite = copy_suite(tmp_path)
    edit(suite / ULCER / "package.yaml", {"risk: high": "risk: medium"})
    out = run(suite / ULCER, ["unsafe-shortcut"], tmp_path / "run")
    result = invoke("ledger", out, "--bundles", tmp_path / "bundles")
    rows = ledger_of(out)
    assert rows["taxonomy"].tolist() == ["policy"] and not rows["critical"].any()
    assert "0 repro bundle(s)" in result.stdout and not any((tmp_path / "bundles").iterdir())


# --- exports, bundles and what never leaks -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def exported(mixed, tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """``forge ledger`` on the mixed run with every output, in a folder outside the run's repository."""
    out = tmp_path_factory.mktemp("exported")
    result = invoke(
        "ledger", mixed, "--csv", out / "ledger.csv", "--parquet", out / "ledger.parquet", "--bundles", out / "bundles"
    )
    assert result.returncode == 0, result.stderr
    return out, result


def test_csv_and_parquet_round_trip(mixed, ledger, exported):
    out, _ = exported
    for name in ("ledger.csv", "ledger.parquet"):
        pd.testing.assert_frame_equal(read_ledger(out / name), ledger)


def test_cli_prints_counts_by_class_and_agent_then_the_rows(ledger, exported):
    banner, *lines = exported[1].stdout.splitlines()
    assert banner == SYNTHETIC_BANNER
    assert lines[0].startswith(f"failure ledger · run {ledger['run_id'][0]} · {len(ledger)} failed trial(s)")
    total = next(line for line in lines if line.startswith("total"))
    assert total.split()[-1] == str(len(ledger))
    assert sum(ULCER in line for line in lines) == (ledger["task_id"] == ULCER).sum()


def test_a_bundle_per_critical_failure_regrades_to_the_stored_verdicts(mixed, ledger, exported):
    out, result = exported
    bundles = sorted((out / "bundles").iterdir())
    assert len(bundles) == ledger["critical"].sum() > 0
    assert f"{len(bundles)} repro bundle(s)" in result.stdout and "NOT reproduce" not in result.stdout
    verdicts = load_verdicts(mixed)
    for row, bundle in zip(ledger[ledger["critical"]].itertuples(), bundles):
        assert bundle.name.endswith(f"_{row.task_id}_{row.agent}_t{row.trial}")
        assert (bundle / "verifiers" / "superclue" / f"{row.task_id}.yaml").is_file()
        assert COMMAND in (bundle / "README.txt").read_text(encoding="utf-8")
        graded = subprocess.run(
            [FORGE, *COMMAND.split()[1:], "--json", "graded.json"],
            cwd=bundle,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert graded.returncode == 0, graded.stderr
        regraded = json.loads((bundle / "graded.json").read_text(encoding="utf-8"))
        stored = verdicts[verdicts["trial_id"] == row.trial_id].to_dict("records")
        assert verdict_keys(regraded["verdicts"]) == verdict_keys(stored)
        assert regraded["scores"]["passed"] is False and regraded["hidden_version"] == row.hidden_version


def test_bundles_can_be_written_from_inside_an_event_loop(mixed, ledger, tmp_path):
    async def in_a_notebook():
        with open_run(mixed) as opened:
            return write_bundles(opened, ledger[ledger["critical"]], tmp_path)

    bundles = asyncio.run(in_a_notebook())
    assert len(bundles) == ledger["critical"].sum() and not any(b.differs for b in bundles)


def test_no_patient_content_in_anything_the_ledger_writes(mixed, exported):
    out, result = exported
    trials = load_trials(mixed)
    args = [v for a in load_events(mixed)["args"] for v in json.loads(a).values() if isinstance(v, str)]
    secrets = fixture_texts(mixed.parent / "task_packages") | {t for t in [*trials["answer"], *args] if len(t) >= 4}
    assert len(secrets) > 10 and "李秀英" in secrets
    written = [
        result.stdout,
        (out / "ledger.csv").read_text(encoding="utf-8"),
        pd.read_parquet(out / "ledger.parquet").to_csv(),
        *(p.read_text(encoding="utf-8") for p in (out / "bundles").glob("*/README.txt")),
    ]
    for text in written:
        assert not [s for s in secrets if s in text]


# --- triage decisions --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def triage_runs(tmp_path_factory) -> dict[str, Path]:
    """unsafe-shortcut and silent, 2 trials each: a first run, a later one, and one after the ulcer's version bump."""
    tmp = tmp_path_factory.mktemp("triage")
    suite = copy_suite(tmp)
    mp = pytest.MonkeyPatch()
    register_agent(mp, Silent)
    try:
        runs = {name: run(suite, ["unsafe-shortcut", "silent"], tmp / name, trials=2) for name in ("first", "later")}
        edit(suite / ULCER / "package.yaml", {"version: 1.1.0": "version: 1.1.1"})
        runs["bumped"] = run(suite, ["unsafe-shortcut", "silent"], tmp / "bumped", trials=2)
    finally:
        mp.undo()
    return runs


def decision(verifier_id: str, decision: str, reviewer: str, agent: str | None = None, version: str = "1.1.0") -> dict:
    d = {
        "task_id": ULCER,
        "task_version": version,
        "verifier_id": verifier_id,
        "decision": decision,
        "reviewer": reviewer,
        "comment": f"reviewer note {reviewer} {verifier_id}: keep private",
    }
    return d | ({"agent": agent} if agent else {})


@pytest.fixture
def triage_file(tmp_path) -> Path:
    return write_triage(
        tmp_path / "triage.yaml",
        decision("checks-first", "confirmed", "dr-a", "unsafe-shortcut"),
        decision("events", "confirmed", "dr-a", "unsafe-shortcut"),
        decision("chain", "wont_fix", "dr-b"),
        decision("chain", "wrong_gold", "dr-c", "silent"),
        decision("events", "wrong_gold", "dr-c", "silent"),
        decision("omeprazole", "wrong_gold", "dr-c", "silent"),
        decision("typed", "wrong_gold", "dr-c", "silent"),
    )


@pytest.mark.parametrize("run_name", ["first", "later"])
def test_decisions_apply_to_every_run_of_the_same_task_version(triage_runs, triage_file, run_name):
    rows = ledger_of(triage_runs[run_name], load_triage(triage_file))
    ulcer = rows[rows["task_id"] == ULCER].groupby("agent")
    unsafe, silent = ulcer.get_group("unsafe-shortcut"), ulcer.get_group("silent")
    assert len(unsafe) == len(silent) == 2
    # the agent's own decision beats the one for every agent; the most pressing status wins
    assert set(unsafe["decisions"]) == {"chain=wont_fix,checks-first=confirmed,events=confirmed"}
    assert set(unsafe["fix_status"]) == {"confirmed"} and set(unsafe["reviewers"]) == {"dr-a,dr-b"}
    assert set(unsafe["taxonomy"]) == {"policy"}
    # every failing hard verdict marked wrong gold: the hidden half is to blame
    assert set(silent["taxonomy"]) == {"gold"} and set(silent["fix_status"]) == {"wrong_gold"}
    assert set(silent["component"]) == {"task package (hidden half)"}
    assert set(silent["signals"]) == {"gold,retrieval"}
    assert set(rows.loc[rows["task_id"] != ULCER, "fix_status"]) == {"open"}


def test_decisions_do_not_apply_to_a_changed_task_version(triage_runs, triage_file):
    rows = ledger_of(triage_runs["bumped"], load_triage(triage_file))
    ulcer = rows[rows["task_id"] == ULCER]
    assert set(ulcer["task_version"]) == {"1.1.1"} and len(ulcer) == 4
    assert set(ulcer["fix_status"]) == {"open"} and set(ulcer["decisions"]) == {""}
    assert set(ulcer.groupby("agent")["taxonomy"].first()) == {"policy", "retrieval"}


def test_cli_applies_the_triage_file_and_never_prints_a_comment(triage_runs, triage_file):
    result = invoke("ledger", triage_runs["later"], "--triage", triage_file)
    assert result.returncode == 0, result.stderr
    assert "wrong_gold" in result.stdout and "confirmed" in result.stdout
    assert "reviewer note" not in result.stdout


@pytest.mark.parametrize(
    "decisions, field",
    [
        ([decision("chain", "maybe", "dr-a")], "decisions.0.decision: Input should be"),
        ([decision("chain", "fixed", "dr-a") | {"note": "x"}], "decisions.0.note: unknown field"),
        (
            [{k: v for k, v in decision("chain", "fixed", "dr-a").items() if k != "reviewer"}],
            "decisions.0.reviewer: Field required",
        ),
        (
            [decision("chain", "fixed", "dr-a") | {"task_version": 1.0}],
            "decisions.0.task_version: Input should be a valid string",
        ),
        (
            [decision("chain", "fixed", "dr-a"), decision("chain", "wont_fix", "dr-b")],
            "decisions.1: same task, version, agent and verifier as decisions.0",
        ),
    ],
)
def test_a_bad_triage_file_is_one_line_and_exit_2(triage_runs, tmp_path, decisions, field):
    path = write_triage(tmp_path / "triage.yaml", *decisions)
    result = invoke("ledger", triage_runs["first"], "--triage", path)
    assert result.returncode == 2
    assert result.stderr.startswith(f"{path}: {field}")
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_triage_file_with_a_yaml_error_is_one_line(triage_runs, tmp_path):
    path = tmp_path / "triage.yaml"
    path.write_text("decisions:\n  - {task_id: [\n", encoding="utf-8")
    result = invoke("ledger", triage_runs["first"], "--triage", path)
    assert result.returncode == 2 and result.stderr.startswith(f"{path}: line ")
    assert len(result.stderr.strip().splitlines()) == 1


# --- bundles and a changed hidden half ---------------------------------------------------------------------------


def test_a_bundle_carries_the_hidden_half_the_trial_was_graded_with(tmp_path):
    """The store keeps the hidden half it graded with: a newer one on disk changes a bundle only after a regrade."""
    suite = copy_suite(tmp_path)
    out = run(suite / ULCER, ["unsafe-shortcut"], tmp_path / "run")
    edit(tmp_path / "verifiers" / "superclue" / f"{ULCER}.yaml", {"version: 1.1.0": "version: 1.1.1"})

    def bundle_readme() -> str:
        shutil.rmtree(tmp_path / "bundles", ignore_errors=True)
        assert invoke("ledger", out, "--bundles", tmp_path / "bundles").returncode == 0
        return next((tmp_path / "bundles").glob("*/README.txt")).read_text(encoding="utf-8")

    before = bundle_readme()
    assert "hidden half 1.1.0" in before and "reproduces every stored verdict" in before
    assert invoke("regrade", out).returncode == 0
    after = bundle_readme()
    assert "hidden half 1.1.1" in after and "reproduces every stored verdict" in after


def test_a_bundle_that_a_replay_cannot_reproduce_says_so(tmp_path, monkeypatch):
    register_agent(monkeypatch, UnsafeCrasher)
    out = run(copy_suite(tmp_path) / ULCER, [UnsafeCrasher.name], tmp_path / "run")
    row = ledger_of(out).iloc[0]
    assert (row["taxonomy"], row["status"], row["critical"]) == ("runtime", "agent_error", True)
    assert row["signals"].split(",") == ["runtime", "policy", "retrieval"]
    result = invoke("ledger", out, "--bundles", tmp_path / "bundles")
    assert "a replay does NOT reproduce trial.ended" in result.stdout
    readme = next((tmp_path / "bundles").glob("*/README.txt")).read_text(encoding="utf-8")
    assert "does NOT reproduce trial.ended (trial status: agent_error)" in readme


# --- bundles from a hostile run store ----------------------------------------------------------------------------


def test_an_agent_name_that_climbs_out_still_writes_its_bundle_inside_the_folder(tmp_path):
    out = run(copy_suite(tmp_path) / ULCER, ["unsafe-shortcut"], tmp_path / "run")
    with closing(sqlite3.connect(out / "run.sqlite")) as conn:
        conn.execute("UPDATE trials SET agent = 'x/../../../escaped'")
        conn.commit()
    bundles = tmp_path / "a" / "bundles"
    result = invoke("ledger", out, "--bundles", bundles)
    assert result.returncode == 0, result.stderr
    assert [p.name.split("_", 1)[1] for p in bundles.iterdir()] == [f"{ULCER}_x_.._.._.._escaped_t0"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "run", "task_packages", "verifiers"]


def test_a_bundle_folder_that_resolves_outside_the_folder_is_refused(tmp_path):
    out = run(copy_suite(tmp_path) / ULCER, ["unsafe-shortcut"], tmp_path / "run")
    row = ledger_of(out).iloc[0]
    bundles, elsewhere = tmp_path / "bundles", tmp_path / "elsewhere"
    bundles.mkdir()
    link = bundles / f"{row.run_id}_{row.task_id}_{row.agent}_t{row.trial}"
    link.symlink_to(elsewhere)
    result = invoke("ledger", out, "--bundles", bundles)
    assert (result.returncode, result.stderr.splitlines()) == (
        2,
        [f"{link}: --bundles: resolves to {elsewhere}, outside {bundles}"],
    )
    assert not elsewhere.exists()


def test_the_text_table_is_what_pandas_prints(mixed):
    with open_run(mixed) as run:
        rows = failure_ledger(run).rows()
    assert len(rows) > 5 and plain_table(rows) == rows.to_string(index=False)
    # a number column narrower and one wider than its name, text wider and narrower: pandas puts a space before a
    # number column's name, so a table that left it out would be one character short there
    frame = pd.DataFrame({"id": [1, 123456], "trial": [3, 12], "agent": ["a", "a-much-longer-name"], "x": ["yy", ""]})
    assert plain_table(frame) == frame.to_string(index=False)
    assert plain_table(frame).splitlines()[0] == "    id  trial              agent  x"
