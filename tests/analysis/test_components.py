"""Retrieval metrics (hand-counted on constructed trajectories, then on a real run), the citation window rate, the
components block of ``forge compare`` and its out-of-site and out-of-time slices."""

import json
import subprocess
import sys
from math import log2
from pathlib import Path

import pandas as pd
import pytest

from forge_kernel.analysis import (
    TrialRetrieval,
    compare,
    components,
    coverage_slices,
    ndcg_at,
    precision,
    recall_at,
    retrieval as retrieval_module,
    retrieval_by_slice,
    retrieval_figures,
    trial_retrievals,
)
from forge_kernel.analysis.criteria import citation_checks
from forge_kernel.ehr import EHRImage
from forge_kernel.spec import Event, load_package
from forge_kernel.store import Run, gold_criteria
from forge_kernel.verify import returned_in_order

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "task_packages" / "forge-nsclc"
GOLD = frozenset({"A", "B", "C"})
FETCHED = ["A", "x", "B", "y", "z", "w", "C"]


def test_recall_precision_and_ndcg_by_hand():
    assert recall_at(FETCHED, GOLD, 5) == pytest.approx(2 / 3)
    assert recall_at(FETCHED, GOLD, 10) == recall_at(FETCHED, GOLD) == 1.0
    assert precision(FETCHED, GOLD) == pytest.approx(3 / 7)
    assert precision([], GOLD) == 0.0
    ideal = 1 + 1 / log2(3) + 1 / log2(4)  # three hits in front
    assert ndcg_at(FETCHED, GOLD, 5) == pytest.approx((1 + 1 / log2(4)) / ideal)  # hits at ranks 1 and 3
    assert ndcg_at(FETCHED, GOLD, 10) == pytest.approx((1 + 1 / log2(4) + 1 / log2(8)) / ideal)
    assert ndcg_at(["A", "B", "C"], GOLD, 5) == pytest.approx(1.0)
    assert ndcg_at(["x", "A"], frozenset({"A"}), 5) == pytest.approx(1 / log2(3))


def event(step: int, tool: str, result, ok: bool = True, kind: str = "read") -> Event:
    return Event(step=step, tool=tool, args={"patient_id": "exc-p1"}, kind=kind, ok=ok, result=result)


def test_fetched_records_come_in_call_order_each_once_from_successful_calls_only():
    package = load_package(SUITE / "TP-EXCLUSION-v1")
    image = EHRImage(package.resources, package.public.environment.now, package.image)
    events = [
        event(
            1,
            "lab_results",
            {"records": [{"type": "Observation", "id": "exc-egfr"}, {"type": "Observation", "id": "exc-anc"}]},
        ),
        event(2, "note_search", None, ok=False),
        event(
            3, "record_search", [{"resourceType": "Condition", "id": "exc-dx"}, {"type": "Observation", "id": "nope"}]
        ),
        event(4, "lab_results", {"records": [{"type": "Observation", "id": "exc-anc"}]}),
        event(5, "lab_results", {"records": [{"type": "Observation", "id": "exc-egfr"}]}),
    ]
    assert returned_in_order(events, image) == ["Observation/exc-egfr", "Observation/exc-anc", "Condition/exc-dx"]


def retrieval(fetched, gold=GOLD, trial=0, calls=2, empty=1, task="T") -> TrialRetrieval:
    return TrialRetrieval(task, "a", trial, gold, tuple(fetched), calls, empty)


def test_figures_average_trials_and_pool_calls():
    figures = retrieval_figures([retrieval(FETCHED), retrieval(["x"], trial=1, calls=3, empty=3)])
    assert (figures.tasks, figures.trials) == (1, 2)
    assert figures.recall_at_5.value == pytest.approx((2 / 3 + 0) / 2)
    assert figures.precision.value == pytest.approx(3 / 14)
    assert (figures.no_result.k, figures.no_result.n) == (4, 5)
    assert str(figures.recall) == "0.50 (n=2, too few samples)"
    assert retrieval_figures([]) is None
    table = retrieval_by_slice([retrieval(FETCHED), retrieval(FETCHED, task="U")], {"T": "x", "U": None}.get)
    assert table[["agent", "value", "trials", "recall"]].values.tolist() == [["a", "x", 1, 1.0]]


@pytest.fixture(scope="module")
def facts(reference) -> pd.DataFrame:
    return reference.facts()


def test_only_tasks_with_a_gold_evidence_set_are_scored(reference, facts):
    found = trial_retrievals(facts[facts.agent == "candidate-v2"], reference)
    with_gold = {
        p.name for p in SUITE.iterdir() if (p / "package.yaml").exists() and any(g.evidence for g in gold_of(p))
    }
    assert {r.task_id for r in found} == with_gold and len(with_gold) == 10
    assert all(r.fetched and r.gold <= set(r.fetched) for r in found)  # the reference agent reads what it cites


def gold_of(path: Path):
    return gold_criteria(load_package(path)).values()


def test_a_neighbouring_record_counted_as_gold_changes_the_figures(reference, facts, monkeypatch):
    rows = facts[facts.agent == "candidate-v2"]
    honest = retrieval_figures(trial_retrievals(rows, reference))
    real = retrieval_module.gold_evidence

    def with_neighbour(run, task_id, category, hidden_hash):
        gold = real(run, task_id, category, hidden_hash)
        return gold | {"Observation/exc-x-egfr"} if gold else gold  # the other patient's EGFR

    monkeypatch.setattr(retrieval_module, "gold_evidence", with_neighbour)
    broken = retrieval_figures(trial_retrievals(rows, reference))
    assert honest.recall.value == 1.0 and broken.recall.value < honest.recall.value


def anc_output(*evidence: str) -> str:
    criterion = {"criterion_id": "I3", "status": "unknown", "evidence": list(evidence), "reason": "missing_lab"}
    return json.dumps(
        {"assessments": [{"protocol_id": "LUNG-IO-301", "protocol_version": "2.0", "criteria": [criterion]}]}
    )


def test_a_citation_outside_the_criterions_window_is_counted(reference, monkeypatch):
    package = load_package(SUITE / "TP-ANC-UNKNOWN-v1")
    trials = pd.DataFrame(
        [
            {
                "task_id": "TP-ANC-UNKNOWN-v1",
                "agent": "a",
                "trial": 0,
                "category": "trial_matching",
                "output": anc_output("Observation/anc-anc"),  # dated before the 14-day window
                "hidden_hash": package.hidden_hash,
            }
        ]
    )
    window = citation_checks(trials, reference).window
    assert (window.k, window.n) == (0, 1)
    monkeypatch.setattr(Run, "in_window", lambda self, task_id, reference, days: True)
    assert citation_checks(trials, reference).window.k == 1


def test_components_locate_a_regression(reference):
    cmp = compare(reference, reference, "candidate-v2", "unsafe-shortcut")
    found = components(cmp)
    assert found.change("task success") == "fell"
    assert found.names == ["task success", "retrieval", "citations"]  # no extraction task in this run
    assert found.retrieval_tasks == (10, 10)
    same = components(compare(reference, reference, "candidate-v2", "candidate-v2"))
    assert {same.change(n) for n in same.names} == {"held"}
    assert "| retrieval | nDCG@5 |" in found.to_markdown()


def test_a_candidate_that_fetches_nothing_shows_retrieval_fell(reference):
    cmp = compare(reference, reference, "candidate-v2", "candidate-v2")
    empty = cmp.candidate.retrieval.model_copy(update={"recall": retrieval_figures([retrieval([])] * 20).recall})
    cmp = cmp.model_copy(update={"candidate": cmp.candidate.model_copy(update={"retrieval": empty})})
    found = components(cmp)
    assert found.headline == "components: task success held; retrieval fell; citations held"


def test_site_and_period_slices_are_split_and_marked(reference):
    cmp = compare(reference, reference, "candidate-v2", "unsafe-shortcut")
    slices = coverage_slices(cmp)
    assert {r.slice for r in slices.rows} == {"site", "period"}
    by_site = {r.value: r.tasks for r in slices.rows if r.slice == "site"}
    assert sum(by_site.values()) == len(cmp.tasks) - len(cmp.not_compared)
    assert "not fairness" in slices.lines()[0] and "not fairness" in slices.to_markdown()


def test_compare_prints_the_components_block(reference_run):
    agents = ["--baseline-agent", "candidate-v2", "--candidate-agent", "unsafe-shortcut"]
    out = subprocess.run(
        [sys.executable, "-m", "forge_kernel.cli", "compare", str(reference_run), str(reference_run), *agents],
        capture_output=True,
        text=True,
        cwd=ROOT,
    ).stdout
    assert "components: task success fell;" in out
    assert "  retrieval recall@5: " in out and "  citations in the criterion's window: " in out
    assert "synthetic slices that prove test coverage, not fairness" in out
