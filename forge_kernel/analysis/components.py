"""Components beside task success: a comparison's retrieval, extraction and citation figures, candidate against
baseline, each marked as fallen, risen or held, so that a regression is located ("retrieval fell, extraction held"); and its
out-of-site and out-of-time slices.

A figure fell when the candidate's 95% interval lies wholly below the baseline's, rose when wholly above it, and
held when they overlap (for the no-result rate, lower is better). A component fell when one of its figures fell, rose when one
rose and none fell, and held otherwise; without figures on both sides it is not compared.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ._slices import SLICE_COVERAGE
from .comparison import Comparison, SideSummary, SliceRow
from .display import markdown_lines
from .stats import Mean, Rate

Change = Literal["fell", "rose", "held", "not compared"]
COVERAGE_NOTE = "synthetic slices that prove test coverage, not fairness"

Figure = Mean | Rate
EPSILON = 1e-9
"""Intervals closer than this touch (a bound of 1 computed as 0.9999999999)."""


@dataclass(frozen=True)
class FigureChange:
    """One figure of one component on both sides."""

    component: str
    figure: str
    baseline: Figure | None
    candidate: Figure | None
    lower_is_better: bool = False

    @property
    def change(self) -> Change:
        b, c = self.baseline, self.candidate
        if b is None or c is None or b.interval is None or c.interval is None:
            return "not compared"
        if c.interval[1] < b.interval[0] - EPSILON:
            return "rose" if self.lower_is_better else "fell"
        if c.interval[0] > b.interval[1] + EPSILON:
            return "fell" if self.lower_is_better else "rose"
        return "held"

    def cells(self) -> list[str]:
        return [
            self.component,
            self.figure,
            *("no samples" if f is None else str(f) for f in (self.baseline, self.candidate)),
            self.change,
        ]


def component_change(changes: list[FigureChange]) -> Change:
    """A component's change from its figures' (module doc)."""
    found = {f.change for f in changes}
    if found <= {"not compared"}:
        return "not compared"
    return "fell" if "fell" in found else "rose" if "rose" in found else "held"


@dataclass(frozen=True)
class Components:
    """Task success, retrieval and citations of a comparison, candidate against baseline (module doc)."""

    figures: list[FigureChange]
    retrieval_tasks: tuple[int, int]
    """Tasks with a gold evidence set on the baseline's and the candidate's side."""

    def change(self, component: str) -> Change:
        return component_change([f for f in self.figures if f.component == component])

    @property
    def names(self) -> list[str]:
        return list(dict.fromkeys(f.component for f in self.figures))

    @property
    def headline(self) -> str:
        """``components: task success held; retrieval fell; citations held``."""
        return "components: " + "; ".join(f"{name} {self.change(name)}" for name in self.names)

    def lines(self) -> list[str]:
        """The headline, then each figure with both sides and its change (as the CLI prints them)."""
        b, c = self.retrieval_tasks
        out = [self.headline, f"  retrieval over tasks with a gold evidence set: {b} (baseline), {c} (candidate)"]
        return out + [f"  {comp} {fig}: {base} → {cand} ({change})" for comp, fig, base, cand, change in self.rows()]

    def rows(self) -> list[list[str]]:
        return [f.cells() for f in self.figures]

    def to_markdown(self) -> str:
        header = ["component", "figure", "baseline", "candidate", "change"]
        return "\n".join([self.headline, "", *markdown_lines(header, self.rows())])


FIGURES = {
    "retrieval": (
        ("recall@5", "recall_at_5"),
        ("recall@10", "recall_at_10"),
        ("recall (all fetched)", "recall"),
        ("precision", "precision"),
        ("nDCG@5", "ndcg_at_5"),
        ("nDCG@10", "ndcg_at_10"),
        ("no-result calls", "no_result"),
    ),
    "extraction": (("node F1", "node_f1"), ("fields read right", "field_accuracy"), ("severe errors", "severe")),
    "citations": (
        ("exist", "exists"),
        ("this patient's", "patient"),
        ("in the criterion's window", "window"),
        ("support the status", "supports"),
        ("complete", "complete"),
    ),
}
"""Component (a SideSummary field) -> (label, figure) of each of its figures, in the order shown."""
LOWER_IS_BETTER = {"no_result", "severe"}


def component_changes(component: str, b: SideSummary, c: SideSummary) -> list[FigureChange]:
    """Each figure of one component, on both sides."""
    base, cand = getattr(b, component), getattr(c, component)
    return [
        FigureChange(
            component,
            label,
            None if base is None else getattr(base, name),
            None if cand is None else getattr(cand, name),
            lower_is_better=name in LOWER_IS_BETTER,
        )
        for label, name in FIGURES[component]
    ]


def components(cmp: Comparison) -> Components:
    """Task success (tasks passing every trial), retrieval, extraction and citations of both sides of a
    comparison."""
    b, c = cmp.baseline, cmp.candidate
    success = FigureChange(
        "task success", "tasks passing every trial", Rate.of(b.strict_tasks), Rate.of(c.strict_tasks)
    )
    return Components(
        [
            success,
            *(
                f
                for component in FIGURES
                if getattr(b, component) is not None or getattr(c, component) is not None  # else: not measured here
                for f in component_changes(component, b, c)
            ),
        ],
        (retrieval_tasks(b), retrieval_tasks(c)),
    )


def retrieval_tasks(side: SideSummary) -> int:
    return 0 if side.retrieval is None else side.retrieval.tasks


@dataclass(frozen=True)
class CoverageSlices:
    """A comparison's rows of the out-of-site and out-of-time slices (``site``, ``period``)."""

    rows: list[SliceRow]

    def table(self) -> list[list[str]]:
        return [
            [
                r.slice,
                r.value,
                str(r.tasks),
                str(Rate.of(r.baseline)),
                str(Rate.of(r.candidate)),
                str(r.improvements),
                str(r.regressions),
            ]
            for r in self.rows
        ]

    def lines(self) -> list[str]:
        """A heading with the note, then one line per slice value (as the CLI prints them)."""
        return [f"out-of-site and out-of-time slices ({COVERAGE_NOTE}):"] + [
            f"  {name} {value}: {tasks} task(s), tasks passing every trial {b} → {c}; {up} improvement(s), "
            f"{down} regression(s)"
            for name, value, tasks, b, c, up, down in self.table()
        ]

    def to_markdown(self) -> str:
        header = ["slice", "value", "tasks", "baseline", "candidate", "improvements", "regressions"]
        return "\n".join(
            [f"Out-of-site and out-of-time slices: {COVERAGE_NOTE}.", "", *markdown_lines(header, self.table())]
        )


def coverage_slices(cmp: Comparison) -> CoverageSlices:
    """The comparison's slice rows of ``site`` (the EHR image, unless the package declares one) and ``period`` (the
    month of the frozen clock, unless declared)."""
    return CoverageSlices([r for r in cmp.slices if r.slice in SLICE_COVERAGE])
