"""Slices: the package facts and declared slices a comparison reports every figure by."""

from __future__ import annotations

from ..store import Run

SLICE_NAMES = ("dimension", "language", "age_band", "sex", "missingness", "site", "period", "outcome")
"""Declared slices a comparison reports on, when packages declare them."""
SLICE_COVERAGE = ("site", "period")
"""Out-of-site and out-of-time slices: the EHR image and the month of the frozen clock unless a package declares
them (``slices: {site: ..., period: ...}``). Synthetic: they prove test coverage, not fairness."""
SLICE_COLUMNS = ("suite", "category", "purpose", *SLICE_NAMES)


def task_slices(run: Run) -> dict[str, dict[str, str | None]]:
    """Task id -> its value of every slice column (None where the package declares none)."""
    return {
        row.task_id: {
            "suite": row.suite,
            "category": row.category,
            "purpose": row.purpose,
            **{name: row.slices.get(name) for name in SLICE_NAMES},
        }
        for row in run.tasks.itertuples()
    }


def slice_value(run: Run, by: str) -> dict[str, str]:
    """Task id -> its value of a package column or declared slice (``(none)`` where it has none)."""
    tasks = run.tasks
    if by in tasks.columns and by != "slices":
        return dict(zip(tasks["task_id"], tasks[by]))
    return {row.task_id: row.slices.get(by, "(none)") for row in tasks.itertuples()}
