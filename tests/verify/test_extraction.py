"""extraction.criteria: the criteria an agent extracted from a protocol's text, matched to the gold nodes by concept
and scored by node (precision, recall, F1), by field and by severe error, on TP-EXTRACT-IO-v1 (synthetic, fictional
protocol LUNG-IO-301 2.0)."""

from __future__ import annotations

import copy

import pytest

from forge_kernel.engine import Images
from forge_kernel.spec import SpecError, load_package
from forge_kernel.verify import bind
from forge_kernel.verify.kinds import _extraction
from forge_kernel.verify.kinds._extraction import measures_in
from tests.helpers import ROOT, trial

PACKAGE = ROOT / "task_packages" / "forge-extraction" / "TP-EXTRACT-IO-v1"


@pytest.fixture(scope="module")
def io():
    return load_package(PACKAGE)


@pytest.fixture(scope="module")
def gold_nodes(io):
    return io.hidden.gold.output["criteria"]


def extraction(package, nodes, **params):
    """The extraction.criteria verdict on a trial whose output holds ``nodes``, the package's params updated."""
    use = next(v for v in package.hidden.verifiers if v.kind == "extraction.criteria")
    use = use.model_copy(update={"params": {**use.params, **params}})
    kind, validated = bind(use, package.hidden_path, package.public.task.answer)
    return kind.check(trial(package, Images()[package], [], output={"criteria": nodes}), validated)


def edited(nodes, index, **fields):
    out = copy.deepcopy(nodes)
    out[index] |= fields
    return out


def test_the_gold_nodes_score_full(io, gold_nodes):
    outcome = extraction(io, gold_nodes)
    assert outcome.passed, outcome.reason
    assert dict(outcome.measures) == {
        "node_f1": 1.0,
        "node_precision": 1.0,
        "node_recall": 1.0,
        "exact_f1": 1.0,
        "field_accuracy": 1.0,
        "severe_errors": 0.0,
    }


def test_a_missed_node_and_an_invented_one_give_exact_precision_recall_and_f1(io, gold_nodes):
    nodes = [*gold_nodes[:5], {**gold_nodes[0], "id": "I9", "criterion": "Life expectancy of 12 weeks"}]
    measures = dict(extraction(io, nodes).measures)
    # 5 of 6 given nodes match, 5 of 7 gold nodes are found
    assert measures["node_precision"] == pytest.approx(5 / 6)
    assert measures["node_recall"] == pytest.approx(5 / 7)
    assert measures["node_f1"] == pytest.approx(2 * (5 / 6) * (5 / 7) / (5 / 6 + 5 / 7))
    assert measures["field_accuracy"] == 1.0 and measures["severe_errors"] == 0


def test_each_severe_error_is_counted_and_fails_the_verdict(io, gold_nodes):
    nodes = edited(gold_nodes, 0, kind="exclusion")  # an inclusion read as an exclusion
    nodes = edited(nodes, 1, operator=">=")  # ECOG at most 1 read as at least 1
    nodes = edited(nodes, 2, unit="/µL")  # 1.5 per µL: off by 10^6
    nodes = edited(nodes, 3, operator="present")  # EGFR negative read as positive
    outcome = extraction(io, nodes)
    measures = dict(outcome.measures)
    assert not outcome.passed
    assert measures["severe_errors"] == 4
    assert measures["field_accuracy"] == pytest.approx(24 / 28)
    assert measures["exact_f1"] == pytest.approx(3 / 7)
    assert "I1: severe: an inclusion criterion read as an exclusion one" in outcome.reason
    assert "I3: severe: threshold 1.5 /µL off by a unit's factor" in outcome.reason


def test_a_missed_window_is_a_field_error_not_a_severe_one(io, gold_nodes):
    outcome = extraction(io, edited(gold_nodes, 2, window=None))
    measures = dict(outcome.measures)
    assert measures["field_accuracy"] == pytest.approx(27 / 28) and measures["severe_errors"] == 0
    assert outcome.passed  # above the package's minimum of 0.95
    assert not extraction(io, edited(gold_nodes, 2, window=None), min_field_accuracy=1.0).passed


@pytest.mark.parametrize(
    "fields",
    [
        {"threshold": 1500, "unit": "/µL"},  # another unit of the dimension, converted
        {"window": {"value": 2, "unit": "week"}},
        {"window": "14 days"},
        {"window": {"value": 14, "unit": "天"}},
        {"criterion": "中性粒细胞绝对计数"},  # named as the Chinese text names it
        {"criterion": "751-8"},  # named by its LOINC code
        {"operator": "≥"},
    ],
)
def test_equivalent_readings_pass(io, gold_nodes, fields):
    outcome = extraction(io, edited(gold_nodes, 2, **fields))
    assert outcome.passed and dict(outcome.measures)["exact_f1"] == 1.0, outcome.reason


def test_the_order_of_the_nodes_does_not_matter(io, gold_nodes):
    assert extraction(io, list(reversed(gold_nodes))).passed


def test_nodes_of_one_concept_are_told_apart_by_their_label(io, gold_nodes):
    twins = [{**gold_nodes[2], "id": "I3"}, {**gold_nodes[2], "id": "I3b", "threshold": 2.0}]
    outcome = extraction(io, gold_nodes[:2] + list(reversed(twins)) + gold_nodes[3:])
    measures = dict(outcome.measures)
    assert measures["node_precision"] == pytest.approx(7 / 8) and measures["exact_f1"] == pytest.approx(14 / 15)
    assert "not in the protocol: 'Absolute neutrophil count (ANC)'" in outcome.reason


def test_the_reason_states_the_measures_a_stored_verdict_keeps(io, gold_nodes):
    outcome = extraction(io, edited(gold_nodes, 0, kind="exclusion"))
    assert measures_in(outcome.reason) == pytest.approx(dict(outcome.measures), abs=5e-4)


def test_no_output_scores_zero(io):
    outcome = extraction(io, [])
    assert not outcome.passed and dict(outcome.measures)["node_f1"] == 0.0


def test_a_matcher_that_finds_no_concept_fails_the_gold(io, gold_nodes, monkeypatch):
    assert extraction(io, gold_nodes).passed
    monkeypatch.setattr(_extraction, "same_concept", lambda gold, name: False)  # the mechanism broken
    outcome = extraction(io, gold_nodes)
    assert not outcome.passed and dict(outcome.measures)["node_f1"] == 0.0


def test_a_grader_that_ignores_units_lets_the_wrong_unit_through(io, gold_nodes, monkeypatch):
    wrong_unit = edited(gold_nodes, 2, unit="/µL")
    assert not extraction(io, wrong_unit).passed
    monkeypatch.setattr(_extraction, "in_unit", lambda found, unit: found.value)  # no conversion
    assert extraction(io, wrong_unit).passed


def test_the_params_must_name_a_declared_list_of_nodes(io):
    use = next(v for v in io.hidden.verifiers if v.kind == "extraction.criteria")
    use = use.model_copy(update={"params": {**use.params, "field": "nodes"}})
    with pytest.raises(SpecError, match="declares no list 'nodes'"):
        bind(use, io.hidden_path, io.public.task.answer)
