"""Extraction as a component: the node F1, fields read right and severe errors of each side's extraction verdicts,
read from the stored verdicts, so that compare says which component moved (baseline-v1 leaves the windows out)."""

from __future__ import annotations

import asyncio

import pytest

from forge_kernel.analysis import compare, components, extraction as extraction_module
from forge_kernel.engine import RunSpec, execute
from forge_kernel.store import open_run
from tests.helpers import ROOT


@pytest.fixture(scope="module")
def extraction_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("extraction") / "run"
    spec = RunSpec(
        suite=[str(ROOT / "task_packages" / "forge-extraction")],
        agents=["baseline-v1", "candidate-v2"],
        trials=4,
        seed=0,
    )
    asyncio.run(execute(spec, out, progress=False))
    with open_run(out) as run:
        yield run


def test_extraction_rose_where_the_candidate_reads_the_windows(extraction_run):
    cmp = compare(extraction_run, extraction_run, "baseline-v1", "candidate-v2")
    b, c = cmp.baseline.extraction, cmp.candidate.extraction
    assert (b.tasks, b.trials, c.tasks, c.trials) == (3, 12, 3, 12)
    assert c.node_f1.value == c.field_accuracy.value == 1.0 and b.node_f1.value == 1.0
    assert b.field_accuracy.value < 1.0 and b.severe.k == c.severe.k == 0
    found = components(cmp)
    assert found.change("extraction") == "rose" and "extraction rose" in found.headline
    by_figure = {row[1]: row[4] for row in found.rows() if row[0] == "extraction"}
    assert by_figure == {"node F1": "held", "fields read right": "rose", "severe errors": "held"}


def test_the_figures_are_the_verdicts_own(extraction_run, monkeypatch):
    """Read nothing from the verdicts and the figures fall to nothing: they are not computed anew."""
    monkeypatch.setattr(extraction_module, "measures_in", lambda reason: {})
    side = compare(extraction_run, extraction_run, "baseline-v1", "candidate-v2").candidate.extraction
    assert side.node_f1.value == side.field_accuracy.value == 0.0


def test_a_run_without_extraction_tasks_has_no_extraction_figures(reference):
    cmp = compare(reference, reference, "baseline-v1", "candidate-v2")
    assert cmp.baseline.extraction is None and "extraction" not in components(cmp).names
