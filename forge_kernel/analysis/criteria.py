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
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Annotated, Any, Iterator

import pandas as pd
from pydantic import BaseModel, PlainSerializer

from ..ehr.image import patient_of
from ..spec import Package, SpecError
from ..store import Run
from ..tools.knowledge import table
from ..tools.protocols import criterion_leaves
from ..verify.kinds.evidence import resolve
from ..verify.matchers import values_at
from .stats import Rate

CATEGORY = "trial_matching"
STATES = ("met", "not_met", "unknown", "conflict")
COLUMNS = (*STATES, "missing")
Key = tuple[str, str]
"""(protocol id, criterion id)"""
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


@dataclass(frozen=True)
class Gold:
    status: str
    evidence: frozenset[str]
    critical: bool
    """An exclusion that applies (gold ``met``)."""


@dataclass(frozen=True)
class Graded:
    """One trial-matching trial with its package, the gold criteria and the criteria it reported."""

    row: Any
    package: Package
    gold: dict[Key, Gold]
    reported: dict[Key, dict]


def criteria_of(output: Any) -> Iterator[tuple[Key, str | None, dict]]:
    """(key, protocol version, criterion item) for each criterion of a structured output, skipping malformed ones."""
    for assessment in values_at(output, "assessments"):
        for item in values_at(assessment, "criteria"):
            if isinstance(item, dict):
                key = (str(assessment.get("protocol_id")), str(item.get("criterion_id")))
                yield key, assessment.get("protocol_version"), item


def status_of(item: dict | None) -> str:
    """One of STATES, or ``missing``."""
    status = str((item or {}).get("status") or "").strip().lower().replace(" ", "_").replace("-", "_")
    return status if status in STATES else "missing"


def evidence_of(item: dict | None) -> list[str]:
    refs = (item or {}).get("evidence") or []
    return [str(r) for r in (refs if isinstance(refs, list) else [refs])]


def exclusion_ids(protocol_id: str, version: str | None) -> set[str] | None:
    """Leaf ids under ``criteria.exclusion`` of one protocol version, or None if the table has no such version."""
    found = next((v for p in table("protocols") if p["id"] == protocol_id for v in p["versions"]
                  if v["version"] == version), None)
    return None if found is None else {leaf["id"] for leaf in criterion_leaves(found["criteria"]["exclusion"])}


def gold_criteria(package: Package) -> dict[Key, Gold]:
    """The gold output's criteria, each with its status, references and whether it is a critical exclusion."""
    gold = {}
    for key, version, item in criteria_of(package.hidden.gold.output):
        status, exclusions = status_of(item), exclusion_ids(key[0], version)
        where = f"gold.output {key[0]} v{version} {key[1]}"
        if exclusions is None:
            raise SpecError(package.hidden_path, where, "protocol version not in the protocol table")
        if status == "missing":
            raise SpecError(package.hidden_path, where, f"status {item.get('status')!r} is not one of {STATES}")
        gold.setdefault(key, Gold(status, frozenset(evidence_of(item)), status == "met" and key[1] in exclusions))
    return gold


def reported_criteria(output: Any) -> dict[Key, dict]:
    found: dict[Key, dict] = {}
    for key, _, item in criteria_of(output):
        found.setdefault(key, item)
    return found


def graded_trials(trials: pd.DataFrame, run: Run) -> list[Graded]:
    """The trial-matching trials, each with its gold from the run's package; a hidden half other than the one that
    graded the trial is refused."""
    rows = trials[trials["category"] == CATEGORY]
    gold = {}
    for task_id, hidden_hash in rows.groupby("task_id")["hidden_hash"].first().items():
        package = run.package(task_id)
        if package.hidden_hash != hidden_hash:
            raise SpecError(package.hidden_path, "(hidden half)",
                            "differs from the one that graded the run; run `forge regrade` first")
        gold[task_id] = gold_criteria(package)
    return [Graded(row, run.package(row.task_id), gold[row.task_id], reported_criteria(json.loads(row.output)))
            for row in rows.itertuples()]


def criterion_confusion(trials: pd.DataFrame, run: Run) -> CriterionConfusion | None:
    """Gold status x reported status over every gold criterion of every trial (rows of ``run.facts``, or any frame
    with task_id, agent, trial, category, hidden_hash and output); None without trial-matching trials."""
    graded = graded_trials(trials, run)
    if not graded:
        return None
    matrix = {gold: dict.fromkeys(COLUMNS, 0) for gold in STATES}
    missed, caught, extra = [], 0, 0
    for g in graded:
        extra += len(g.reported.keys() - g.gold.keys())
        for key, gold in g.gold.items():
            status = status_of(g.reported.get(key))
            matrix[gold.status][status] += 1
            if gold.critical and status == "met":
                caught += 1
            elif gold.critical:
                missed.append(Miss(task_id=g.row.task_id, agent=g.row.agent, trial=g.row.trial, protocol_id=key[0],
                                   criterion_id=key[1], reported=status))
    return CriterionConfusion(
        trials=len(graded), matrix=matrix, extra=extra,
        recall={s: Rate(matrix[s][s], sum(matrix[s].values())) for s in STATES},
        critical_exclusions=CriticalExclusions(caught=Rate(caught, caught + len(missed)), missed=missed))


def citation_checks(trials: pd.DataFrame, run: Run) -> CitationChecks | None:
    """Rates of cited resources that exist (in the run's initial EHR of the task), are this patient's, support the
    claim; of complete lists. None without trial-matching trials."""
    graded = graded_trials(trials, run)
    if not graded:
        return None
    n = Counter()
    for g in graded:
        image, patient = run.image(g.row.task_id), g.package.public.environment.patient_id
        for key, item in g.reported.items():
            gold = g.gold.get(key)
            for ref in evidence_of(item):
                resource = resolve(image, ref)
                n["cited"] += 1
                n["exists"] += resource is not None
                n["patient"] += resource is not None and patient_of(resource) == patient
                n["supports"] += gold is not None and ref in gold.evidence
        for key, gold in g.gold.items():
            if gold.evidence:
                n["lists"] += 1
                n["complete"] += gold.evidence <= set(evidence_of(g.reported.get(key)))
    return CitationChecks(exists=Rate(n["exists"], n["cited"]), patient=Rate(n["patient"], n["cited"]),
                          supports=Rate(n["supports"], n["cited"]), complete=Rate(n["complete"], n["lists"]))
