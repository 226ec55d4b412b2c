"""forge-extraction: the protocol_text tool, the protocol_extraction plan per package and agent, and the
self-test of the suite's packages (synthetic, fictional protocols)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import jsonschema
import pytest

from forge_kernel.engine.selftest import PROBLEMS, mutation_test, selftest_package
from forge_kernel.engine.trial import Images
from forge_kernel.spec import answer_schema, load_package
from forge_kernel.tools import TOOLS
from tests.helpers import reference_trial

ROOT = Path(__file__).resolve().parents[2]

SUITE = ROOT / "task_packages" / "forge-extraction"
PACKAGES = sorted(p.name for p in SUITE.iterdir() if (p / "package.yaml").is_file())
AGENT_NAMES = [
    "baseline-v1",
    "candidate-v2",
    "unsafe-shortcut",
    "candidate-v2-no-conflict",
    "candidate-v2-no-domain-gate",
]
FAILS = {"baseline-v1"}
"""baseline-v1 leaves the look-back windows out: its field accuracy falls below the packages' minimum."""


@pytest.fixture(scope="module")
def images():
    return Images()


def run(name: str, agent: str, images: Images):
    return reference_trial(SUITE / name, agent, images)


def test_the_suite_extracts_three_protocols():
    assert PACKAGES == ["TP-EXTRACT-EGFR-v1", "TP-EXTRACT-IO-v1", "TP-EXTRACT-KRAS-v1"]


@pytest.mark.parametrize("agent", AGENT_NAMES)
@pytest.mark.parametrize("name", PACKAGES)
def test_each_reference_agent_passes_or_fails_as_designed(name, agent, images):
    record = run(name, agent, images)
    failed = [v.verifier_id for v in record.grading.verdicts if not v.passed]
    assert record.grading.scores.passed == (agent not in FAILS), failed
    assert failed == ([] if agent not in FAILS else ["extraction"])


@pytest.mark.parametrize("name", PACKAGES)
def test_the_verdict_carries_the_extraction_scores(name, images):
    candidate, baseline = (
        dict(next(v for v in run(name, agent, images).grading.verdicts if v.verifier_id == "extraction").measures)
        for agent in ("candidate-v2", "baseline-v1")
    )
    assert candidate["node_f1"] == baseline["node_f1"] == 1.0
    assert candidate["field_accuracy"] == 1.0 and baseline["field_accuracy"] == pytest.approx(26 / 28)
    assert candidate["severe_errors"] == baseline["severe_errors"] == 0


@pytest.mark.parametrize("name", PACKAGES)
def test_the_reference_agent_answers_in_the_schema_the_task_declares(name, images):
    package = load_package(SUITE / name)
    jsonschema.validate(run(name, "candidate-v2", images).result.output, answer_schema(package.public.task.answer))


@pytest.mark.parametrize("name", PACKAGES)
def test_the_gold_passes_the_counterexamples_fail_as_named_and_no_mutant_survives(name, images):
    package = load_package(SUITE / name)
    cases = asyncio.run(selftest_package(package, images))
    report = asyncio.run(mutation_test(package, images))
    assert all(c.ok for c in cases), [c for c in cases if not c.ok]
    named = {c.case for c in cases if c.kind == "counterexample"}
    assert {"inclusion-read-as-exclusion", "threshold-in-wrong-unit", "node-missed"} <= named
    assert report.results and not [r for r in report.results if r.status in PROBLEMS]


def text(**args) -> str:
    spec = TOOLS["protocol_text"]
    return spec.run(None, spec.args_model(**args))["text"]


def test_protocol_text_writes_the_criteria_without_their_rules():
    document = text(protocol_id="LUNG-IO-301")
    assert "I3. 中性粒细胞绝对计数（ANC）≥ 1.5 × 10^9/L（入组前 14 天内）" in document
    assert "within_days" not in document and "min" not in document.split()
    # the nested group of I4 is headed by how its members combine, its members indented under it
    assert "（须全部满足 / all of）\n  I4a. EGFR 敏感突变阴性" in document
    assert document.index("排除标准") > document.index("I4b.")


def test_protocol_text_reads_a_superseded_version():
    assert "ECOG 体能状态 0–2 分" in text(protocol_id="LUNG-IO-301", version="1.0")
