"""The bundled packages: every applicable mutant of their gold solutions rejected, every valid variant passing
(``forge selftest --mutants`` on the 106 packages, in process)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from forge_kernel.engine import Images
from forge_kernel.engine.selftest import PROBLEMS, mutation_test, selftest_package
from forge_kernel.spec import find_packages, load_package

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def graded():
    """Per bundled package: its selftest cases and its mutation report (about 20 s of CPU)."""

    async def run():
        images = Images()
        packages = [load_package(f) for f in find_packages([str(ROOT / "task_packages")])]
        return [(await selftest_package(p, images), await mutation_test(p, images)) for p in packages]

    return asyncio.run(run())


def test_every_applicable_mutant_is_rejected_or_valid(graded):
    problems = [
        f"{report.task_id}: {r.mutant.operator} {r.mutant.target}: {r.status} ({r.detail})"
        for _, report in graded
        for r in report.results
        if r.status in PROBLEMS
    ]
    problems += [
        f"{report.task_id}: valid_mutants {d.operator} {d.target} matches no mutant"
        for _, report in graded
        for d in report.unmatched
    ]
    assert not problems, "\n".join(problems)


def test_every_bundled_package_rejects_an_invented_value_drug_and_diagnosis_by_its_grounding(graded):
    for _, report in graded:
        invented = [r for r in report.results if r.mutant.operator == "invented-fact"]
        assert len(invented) == 3, report.task_id
        assert all(
            r.status == "rejected" and "grounded" in r.detail.split("fails ")[-1].split(", ") for r in invented
        ), [(r.mutant.target, r.status, r.detail) for r in invented]


def test_every_gold_counterexample_and_valid_variant_behaves(graded):
    failing = [f"{c.task_id}: {c.kind} {c.case}: {c.detail}" for cases, _ in graded for c in cases if not c.ok]
    assert not failing, "\n".join(failing)
    assert sum(c.kind == "valid variant" for cases, _ in graded for c in cases) >= 82
