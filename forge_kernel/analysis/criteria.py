"""Trial-matching answers against the gold: the four-state criterion confusion matrix and citation checks.

Definitions, for trials of tasks of category ``trial_matching``:

- The gold is the structured ``output`` of the package's hidden-half gold trajectory; the agent's is its trial
  output. Both have the shape ``{assessments: [{protocol_id, protocol_version, criteria: [{criterion_id, status,
  evidence}]}]}``. A criterion is keyed by (protocol id, criterion id), since ids such as I1 or E2 recur across
  protocols. The protocol version is not in the key: an assessment of a superseded version is held against the
  gold of the current one, so assessing the wrong version shows as wrong statuses. A criterion reported twice
  counts once, as first reported.
- Statuses are read lower-cased, with spaces and hyphens as ``_``. met / not_met / unknown / conflict are kept;
  anything else (no status, null, "excluded", ...) and a criterion not reported at all are ``missing``. Criteria the
  agent reports that the gold does not assess are counted as ``extra``, outside the matrix.
- An exclusion is a leaf under ``criteria.exclusion`` of the protocol version the gold assesses, in the protocol
  table (``tools/tables/protocols.yaml``); an id's spelling (E1, ...) is not used. For an exclusion ``met`` means
  the exclusion applies, so an exclusion the gold reports ``met`` is a critical exclusion: caught only when the agent
  reports ``met`` too; any other status, unknown and conflict included, is a miss.
- Citations are the ``evidence`` references of the output's criteria (where the planner puts them; its written
  assessment repeats them). One exists when the initial EHR holds the resource (the ``answer.evidence`` look-up);
  it is this patient's when that resource belongs to the package's patient; it supports the claim when the gold
  cites the same reference for the same criterion. Being of the type and code a criterion needs is not enough (an
  ANC outside the look-back window is both); whether the status is right is the matrix's question. Each rate is
  over all citations. A list is complete when it holds every reference the gold cites for that criterion; only gold
  criteria with citations are judged, and one the agent did not report is incomplete.
- In the window: of the citations of a gold criterion whose protocol version (the one the gold assesses) declares a
  look-back window, those whose resource exists and is dated within it before the frozen clock, as
  ``answer.evidence`` places it (the same function: no grading is repeated).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Annotated, Any

import pandas as pd
from pydantic import BaseModel, PlainSerializer

from ..store import STATES, Gold, Key, Run, evidence_of, gold_criteria, reported_criteria, status_of
from .display import markdown_lines
from .stats import Rate

__all__ = ["CitationChecks", "CriterionConfusion", "citation_checks", "criterion_confusion", "gold_criteria"]

CATEGORY = "trial_matching"
COLUMNS = (*STATES, "missing")
RateOut = Annotated[Rate, PlainSerializer(Rate.as_dict)]
"""A Rate that serializes with its interval and sample-size flag."""


class Miss(BaseModel):
    """A critical exclusion the agent did not report as met."""

    task_id: str
    agent: str
    trial: int
    protocol_id: str
    criterion_id: str
    reported: str


class CriticalExclusions(BaseModel):
    caught: RateOut
    missed: list[Miss]


class CriterionConfusion(BaseModel):
    trials: int
    matrix: dict[str, dict[str, int]]
    """Gold status -> reported status (or missing) -> criteria."""
    recall: dict[str, RateOut]
    """Per gold status: reported the same / all of that gold status."""
    extra: int
    """Reported criteria the gold does not assess."""
    critical_exclusions: CriticalExclusions


class CitationChecks(BaseModel):
    exists: RateOut
    patient: RateOut
    """Cited resources that are the current patient's."""
    supports: RateOut
    complete: RateOut
    """Gold-cited criteria whose reported evidence holds every gold reference."""
    window: RateOut | None = None
    """Citations of a criterion with a look-back window whose resource is dated within it."""

    def rows(self) -> list[tuple[str, str]]:
        """(check, rate as text) of each check, in the order shown: existence, scope, support, completeness."""
        return [
            ("exists", str(self.exists)),
            ("scope: this patient's", str(self.patient)),
            ("scope: in the criterion's window", "no samples" if self.window is None else str(self.window)),
            ("supports the status (the gold cites it)", str(self.supports)),
            ("complete (every gold citation)", str(self.complete)),
        ]

    def to_markdown(self) -> str:
        return "\n".join(markdown_lines(["citations", "rate"], [list(row) for row in self.rows()]))


@dataclass(frozen=True)
class Graded:
    """The trial-matching trials of one task that reported the same output (their rows, in order), with the gold
    criteria of the task and the criteria the output reports: every count is the same for each of them."""

    rows: list[tuple[int, Any]]
    """(position among the trials, row)"""
    gold: dict[Key, Gold]
    reported: dict[Key, dict]


def graded_trials(trials: pd.DataFrame, run: Run) -> list[Graded]:
    """The trial-matching trials, grouped by task and output, each group with its task's gold (``run.gold_criteria``,
    which refuses a hidden half other than the one that graded the trials)."""
    rows = trials[trials["category"] == CATEGORY]
    gold = {
        task_id: run.gold_criteria(task_id, hidden_hash)
        for task_id, hidden_hash in rows.groupby("task_id")["hidden_hash"].first().items()
    }
    groups: dict[tuple[str, str], list] = {}
    for position, row in enumerate(rows.itertuples()):
        groups.setdefault((row.task_id, row.output), []).append((position, row))
    return [
        Graded(same, gold[task_id], reported_criteria(json.loads(output))) for (task_id, output), same in groups.items()
    ]


def criterion_confusion(trials: pd.DataFrame, run: Run) -> CriterionConfusion | None:
    """Gold status x reported status over every gold criterion of every trial (rows of ``run.facts``, or any frame
    with task_id, agent, trial, category, hidden_hash and output); None without trial-matching trials."""
    return confusion_of(graded_trials(trials, run))


def confusion_of(graded: list[Graded]) -> CriterionConfusion | None:
    """``criterion_confusion`` of trials already graded."""
    if not graded:
        return None
    matrix = {gold: dict.fromkeys(COLUMNS, 0) for gold in STATES}
    ordered: list[tuple[tuple[int, int], Miss]] = []
    caught, extra = 0, 0
    for g in graded:
        n = len(g.rows)
        extra += n * len(g.reported.keys() - g.gold.keys())
        for order, (key, gold) in enumerate(g.gold.items()):
            status = status_of(g.reported.get(key))
            matrix[gold.status][status] += n
            if gold.critical and status == "met":
                caught += n
            elif gold.critical:
                ordered += [
                    (
                        (position, order),
                        Miss(
                            task_id=row.task_id,
                            agent=row.agent,
                            trial=row.trial,
                            protocol_id=key[0],
                            criterion_id=key[1],
                            reported=status,
                        ),
                    )
                    for position, row in g.rows
                ]
    missed = [miss for _, miss in sorted(ordered, key=lambda m: m[0])]
    return CriterionConfusion(
        trials=sum(len(g.rows) for g in graded),
        matrix=matrix,
        extra=extra,
        recall={s: Rate(matrix[s][s], sum(matrix[s].values())) for s in STATES},
        critical_exclusions=CriticalExclusions(caught=Rate(caught, caught + len(missed)), missed=missed),
    )


def citation_checks(trials: pd.DataFrame, run: Run) -> CitationChecks | None:
    """Rates of cited resources that exist (in the run's initial EHR of the task), are this patient's, support the
    claim; of complete lists. None without trial-matching trials."""
    return citations_of(graded_trials(trials, run), run)


def citations_of(graded: list[Graded], run: Run) -> CitationChecks | None:
    """``citation_checks`` of trials already graded."""
    if not graded:
        return None
    n: Counter[str] = Counter()
    for g in graded:
        task_id, times = g.rows[0][1].task_id, len(g.rows)
        for key, item in g.reported.items():
            gold = g.gold.get(key)
            for ref in evidence_of(item):
                exists, mine = run.citation(task_id, ref)
                n["cited"] += times
                n["exists"] += times * exists
                n["patient"] += times * mine
                n["supports"] += times * (gold is not None and ref in gold.evidence)
                if gold is not None and gold.window is not None:
                    n["windowed"] += times
                    n["in_window"] += times * run.in_window(task_id, ref, gold.window)
        for key, gold in g.gold.items():
            if gold.evidence:
                n["lists"] += times
                n["complete"] += times * (gold.evidence <= set(evidence_of(g.reported.get(key))))
    return CitationChecks(
        exists=Rate(n["exists"], n["cited"]),
        patient=Rate(n["patient"], n["cited"]),
        supports=Rate(n["supports"], n["cited"]),
        complete=Rate(n["complete"], n["lists"]),
        window=Rate(n["in_window"], n["windowed"]),
    )
