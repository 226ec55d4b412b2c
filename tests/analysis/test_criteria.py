"""Criterion confusion matrix and citation checks: hand-counted on constructed outputs, then on a real run."""

import json
from pathlib import Path

import pandas as pd
import pytest

from forge_kernel.analysis import compare
from forge_kernel.analysis.criteria import (
    citation_checks,
    criterion_confusion,
    gold_criteria,
)
from forge_kernel.report.compare_markdown import criteria, render_comparison
from forge_kernel.spec import SpecError, load_package

SUITE = Path(__file__).resolve().parents[2] / "task_packages" / "forge-nsclc"
EXCLUSION, CONFLICT = "TP-EXCLUSION-v1", "TP-CONFLICT-v1"


def crit(cid: str, status: str | None, *evidence: str) -> dict:
    return {"criterion_id": cid, "status": status, "evidence": list(evidence), "reason": None}


def output(*criteria: dict) -> str:
    return json.dumps(
        {
            "in_scope": True,
            "assessments": [
                {
                    "protocol_id": "LUNG-IO-301",
                    "protocol_version": "2.0",
                    "eligibility": "undetermined",
                    "criteria": list(criteria),
                }
            ],
        }
    )


@pytest.fixture(scope="module")
def packages():
    return {name: load_package(SUITE / name) for name in (EXCLUSION, CONFLICT)}


def frame(packages, *trials: tuple[str, int, str], category: str = "trial_matching") -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "task_id": task,
                "agent": "a",
                "trial": i,
                "category": category,
                "output": out,
                "hidden_hash": packages[task].hidden_hash,
            }
            for task, i, out in trials
        ]
    )


@pytest.fixture(scope="module")
def constructed(packages) -> pd.DataFrame:
    """Three trials against golds of LUNG-IO-301 v2.0 (see the comments for what each deviates in)."""
    gold_exclusion = json.dumps(packages[EXCLUSION].hidden.gold.output)
    missed = output(
        crit("I1", "met", "Condition/exc-dx"),
        crit("I2", "Met", "DocumentReference/exc-note"),  # read as met
        crit("I3", "unknown"),  # gold met, no citation
        crit("I4a", "met", "Observation/exc-egfr", "Observation/exc-x-egfr"),  # + the neighbour's EGFR
        # I4b not reported: missing
        crit("E1", "not met"),  # read as not_met
        crit("E2", "not_met"),  # the critical exclusion (prior pembrolizumab) missed
        crit("X9", "met", "Observation/exc-anc-404"),  # not in the gold; the resource does not exist
    )
    newest_wins = output(
        crit("I1", "met", "Condition/cfl-dx"),
        crit("I2", "met", "DocumentReference/cfl-note"),
        crit("I3", "met", "Observation/cfl-anc"),
        crit("I4a", "met", "Observation/cfl-egfr"),
        crit("I4b", "met", "Observation/cfl-alk-fish"),  # gold: conflict, citing IHC and FISH
        crit("E1", "excluded"),  # not one of the four states: missing
        crit("E2", "not_met"),
    )
    return frame(packages, (EXCLUSION, 0, missed), (EXCLUSION, 1, gold_exclusion), (CONFLICT, 0, newest_wins))


def test_exclusions_come_from_the_protocol_tree(packages):
    gold = gold_criteria(packages[EXCLUSION])
    assert [k[1] for k, g in gold.items() if g.critical] == ["E2"]  # E2 met: prior PD-1 therapy excludes
    assert gold[("LUNG-IO-301", "E1")].status == "not_met" and not gold[("LUNG-IO-301", "E1")].critical
    assert not any(g.critical for g in gold_criteria(packages[CONFLICT]).values())  # exclusions not_met


def test_confusion_matrix_recall_and_critical_exclusions(constructed, reference):
    c = criterion_confusion(constructed, reference)
    # rows: gold. EXCLUSION gold: I1-I4b and E2 met, E1 not_met; CONFLICT gold: I1-I4a met, I4b conflict, E1-E2 not_met
    assert c.matrix == {
        "met": {"met": 3 + 6 + 4, "not_met": 1, "unknown": 1, "conflict": 0, "missing": 1},
        "not_met": {"met": 0, "not_met": 1 + 1 + 1, "unknown": 0, "conflict": 0, "missing": 1},
        "unknown": {"met": 0, "not_met": 0, "unknown": 0, "conflict": 0, "missing": 0},
        "conflict": {"met": 1, "not_met": 0, "unknown": 0, "conflict": 0, "missing": 0},
    }
    assert (c.trials, c.extra) == (3, 1)
    assert {s: (r.k, r.n) for s, r in c.recall.items()} == {
        "met": (13, 16),
        "not_met": (3, 4),
        "unknown": (0, 0),
        "conflict": (0, 1),
    }
    assert str(c.recall["met"]) == "13/16 = 81% [57%, 93%]"
    assert str(c.recall["unknown"]) == "no samples"
    assert str(c.recall["conflict"]) == "0/1 (too few samples)"
    ex = c.critical_exclusions
    assert (ex.caught.k, ex.caught.n) == (1, 2)
    assert [(m.task_id, m.trial, m.protocol_id, m.criterion_id, m.reported) for m in ex.missed] == [
        (EXCLUSION, 0, "LUNG-IO-301", "E2", "not_met")
    ]
    dumped = c.model_dump(mode="json")
    assert dumped["recall"]["met"]["ci95"] == pytest.approx([0.5699, 0.9341], abs=1e-4)
    assert dumped["recall"]["unknown"] == {"k": 0, "n": 0, "rate": None, "ci95": None, "too_few_samples": True}


def test_citation_rates(constructed, reference):
    c = citation_checks(constructed, reference)
    # cited: trial 0 five (dx, note, egfr, the neighbour's egfr, exc-anc-404), trial 1 six (the gold's), trial 2 five
    assert (c.exists.k, c.exists.n) == (15, 16)  # exc-anc-404 is not in the EHR
    assert (c.patient.k, c.patient.n) == (14, 16)  # nor is exc-x-egfr this patient's
    assert (c.supports.k, c.supports.n) == (14, 16)  # FISH is one of the two the gold cites for I4b
    # gold-cited criteria: 6 per EXCLUSION trial, 5 in CONFLICT; incomplete: I3, I4b, E2 of trial 0 and I4b (FISH only)
    assert (c.complete.k, c.complete.n) == (13, 17)
    assert str(c.complete) == "13/17 = 76% [53%, 90%]"


def test_no_trial_matching_tasks_is_no_samples(reference, constructed):
    other = constructed.assign(category="diagnosis")
    assert criterion_confusion(other, reference) is None
    assert citation_checks(other, reference) is None


def test_a_changed_hidden_half_is_refused(reference, constructed):
    with pytest.raises(SpecError, match="forge regrade"):
        criterion_confusion(constructed.assign(hidden_hash="sha256:another"), reference)


@pytest.fixture(scope="module")
def run(reference) -> pd.DataFrame:
    return reference.facts()


def of(run: pd.DataFrame, agent: str, task: str | None = None) -> pd.DataFrame:
    return run[(run.agent == agent) & ((run.task_id == task) if task else True)]


def test_real_run_conflict_kept_only_with_conflict_retention(run, reference):
    kept = criterion_confusion(of(run, "candidate-v2", CONFLICT), reference)
    lost = criterion_confusion(of(run, "candidate-v2-no-conflict", CONFLICT), reference)
    assert kept.matrix["conflict"] == {"met": 0, "not_met": 0, "unknown": 0, "conflict": 3, "missing": 0}
    assert lost.matrix["conflict"] == {"met": 3, "not_met": 0, "unknown": 0, "conflict": 0, "missing": 0}
    assert (lost.recall["conflict"].k, lost.recall["conflict"].n) == (0, 3)


def test_real_run_citations_and_critical_exclusions(run, reference):
    cited = citation_checks(of(run, "candidate-v2"), reference)
    assert cited.exists.n > 100 and cited.exists.k == cited.patient.k == cited.exists.n
    caught = criterion_confusion(of(run, "candidate-v2"), reference).critical_exclusions
    assert (caught.caught.k, caught.caught.n, caught.missed) == (3, 3, [])
    unsafe = criterion_confusion(of(run, "unsafe-shortcut"), reference).critical_exclusions
    assert unsafe.caught.k == 0 and {(m.task_id, m.criterion_id) for m in unsafe.missed} == {(EXCLUSION, "E2")}


def test_comparison_carries_and_renders_both(reference):
    cmp = compare(reference, reference, "candidate-v2", "candidate-v2-no-conflict")
    assert cmp.candidate.criteria.matrix["conflict"]["met"] == 3
    text = render_comparison(cmp)
    assert "## Trial-matching criteria" in text and "Critical exclusions caught: 3/3 (too few samples)" in text
    none = cmp.baseline.model_copy(update={"criteria": None, "citations": None})
    assert criteria(none, none) == []
    one_side = "\n".join(criteria(none, cmp.candidate))
    assert "no trial-matching tasks (no samples)" in one_side and "| cited resource exists | no samples |" in one_side
