"""medagentbench-style: MedAgentBench's ten task families over the committed Synthea image synthea-10 (SYNTHETIC):
every package's selftest and mutants, the reference agents' run and its comparison, expectations read from the
data at grading time, and the llm agent against the scripted chat server."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from forge_kernel.cli import main
from forge_kernel.engine import Images, RunSpec, execute
from forge_kernel.engine.grading import grade_trajectory
from forge_kernel.engine.selftest import PROBLEMS, mutation_test, selftest_package
from forge_kernel.spec import load_package
from forge_kernel.store import load_trials
from forge_kernel.verify import expressions, registry
from tests.chat_server import ChatServer, gold_script

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "task_packages" / "medagentbench-style"
PACKAGES = sorted(p.name for p in SUITE.iterdir() if (p / "package.yaml").is_file())
BASELINE_FAILS = {"MAB-T4-VERNA", "MAB-T6-MYRON", "MAB-T6-VERNA", "MAB-T10-MARGARETTE"}
"""What baseline-v1 gets wrong: it reads no window (a stale magnesium, a mean over every glucose) and reorders an
HbA1c taken within the year."""


@pytest.fixture(scope="module")
def images():
    return Images()


@pytest.fixture(scope="module")
def loaded():
    """Every package, loaded once (they hold the shared image, which is read once while any package holds it)."""
    return {name: load_package(SUITE / name) for name in PACKAGES}


def test_ten_families_each_over_two_or_three_patients_of_the_shared_image(loaded):
    packages = list(loaded.values())
    families = Counter(p.public.task.context["family"] for p in packages)
    assert len(families) == 10 and set(families.values()) <= {2, 3}
    assert {(p.public.environment.ehr_image, p.public.environment.ehr_version) for p in packages} == {
        ("synthea-10", "1")
    }
    assert all("mrn" not in p.public.task.context for p in packages if p.id.startswith("MAB-T1-"))


@pytest.mark.parametrize("name", PACKAGES)
def test_gold_counterexamples_variants_and_mutants_as_declared(name, images, loaded):
    package = loaded[name]
    cases = asyncio.run(selftest_package(package, images))
    assert all(case.ok for case in cases), [c.detail for c in cases if not c.ok]
    report = asyncio.run(mutation_test(package, images))
    assert not [r for r in report.results if r.status in PROBLEMS]


def test_an_expectation_is_read_from_the_data_when_graded(images, loaded, monkeypatch):
    """Break the expression's reading (one more than the record holds) and the gold's glucose is wrong."""
    package = loaded["MAB-T7-VERNA"]
    assert not [
        v for v in asyncio.run(grade_trajectory(package, package.hidden.gold, images)).grading.verdicts if not v.passed
    ]
    read = expressions.Chart.value
    monkeypatch.setattr(expressions.Chart, "value", lambda chart, e: read(chart, e) + 1)
    monkeypatch.setattr(registry, "BOUND", {})  # the params valued by the grading above, forgotten
    grading = asyncio.run(grade_trajectory(package, package.hidden.gold, images)).grading
    typed = next(v for v in grading.verdicts if v.verifier_id == "typed")
    assert not typed.passed and "100.8" in typed.reason


def test_an_expectation_the_data_lacks_is_an_error_of_the_verdict_not_a_pass(images, loaded, monkeypatch):
    package = loaded["MAB-T4-STEFAN"]
    monkeypatch.setattr(expressions.Chart, "value", lambda chart, e: None)
    monkeypatch.setattr(registry, "BOUND", {})  # params valued by an earlier test's grading, forgotten
    grading = asyncio.run(grade_trajectory(package, package.hidden.gold, images)).grading
    typed = next(v for v in grading.verdicts if v.verifier_id == "typed")
    assert not typed.passed and typed.error and "expect.magnesium: a number" in typed.reason


def test_the_reference_agents_run_the_suite_and_compare(tmp_path, loaded):
    out = tmp_path / "run"
    spec = RunSpec(suite=[str(SUITE)], agents=["baseline-v1", "candidate-v2"], trials=1, seed=0)
    asyncio.run(execute(spec, out, progress=False))
    trials = load_trials(out)
    failed = trials[~trials.passed]
    assert set(failed.agent) == {"baseline-v1"} and set(failed.task_id) == BASELINE_FAILS
    compared = CliRunner().invoke(
        main, ["compare", str(out), str(out), "--baseline-agent", "baseline-v1", "--candidate-agent", "candidate-v2"]
    )
    assert compared.exit_code == 0, compared.output
    assert "17/21 = 81%" in compared.output and "21/21 = 100%" in compared.output


def test_the_llm_agent_runs_a_package_of_the_suite_against_the_scripted_server(tmp_path, loaded):
    """A scripted model plays the gold of the potassium package (two fhir_create writes) through the llm agent."""
    folder = SUITE / "MAB-T9-DONNELL"
    with ChatServer(gold_script([folder])) as chat:
        config = tmp_path / "model.yaml"
        config.write_text(yaml.safe_dump({"base_url": chat.url, "model": "gold", "seed": 0, "timeout_s": 5.0}))
        entry = f"llm:{config}"
        spec = RunSpec(suite=[str(folder)], agents=[entry], trials=1, seed=0, trust=[entry])
        asyncio.run(execute(spec, tmp_path / "run", progress=False))
        called = [
            c["function"]["name"] for r in chat.requests for m in r["messages"] for c in m.get("tool_calls") or []
        ]
    trials = load_trials(tmp_path / "run")
    assert trials.passed.all(), trials[["task_id", "status", "reason"]]
    assert called.count("fhir_create") >= 2
