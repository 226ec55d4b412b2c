"""Retrieval metrics from the trajectory: the records an agent's calls returned, in call order, against the gold
evidence set of its task.

Definitions:

- The gold evidence set of a task is every reference its hidden half's gold output cites (the ``evidence`` of each
  criterion of a trial-matching gold, read through ``run.gold_criteria``, which refuses trials graded with another
  hidden half). Of the bundled suites only forge-nsclc's packages name one: the gold answers of superclue and
  medagentbench-style cite no record, and their required reads name tools, not records. A task without a gold set
  (those, and a trial-matching gold that cites nothing, such as an unknown for a missing lab) is left out; ``tasks``
  says how many were in.
- Fetched: ``Type/id`` of every resource of the initial EHR that a successful read call returned to the agent, whole
  or as a search row, in call order (within a result, as written), each counted once, where first returned. What a
  write returned is not retrieval.
- Recall@k: gold references among the first k fetched / gold references (``recall``: k is everything fetched).
  Precision: gold references fetched / references fetched (0 when nothing was fetched). nDCG@k: binary relevance,
  the sum over the first k fetched of rel_i / log2(i + 1), over the same sum for min(|gold|, k) hits in front.
- No result: retrieval calls that returned no record of the initial EHR / retrieval calls, where a retrieval call is
  a successful read whose arguments name a patient (``patient_id``, ``patient`` or ``mrn``): a protocol or a
  knowledge look-up is not one. Pooled over calls, with a Wilson interval.
- Every per-trial figure is averaged over trials, with a 95% percentile bootstrap interval over trials
  (``stats.Mean``); below ten trials it shows as too few samples.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import log2
from typing import Annotated

import pandas as pd
from pydantic import BaseModel, PlainSerializer

from ..store import Run
from ..verify import returned_in_order
from .display import markdown_lines
from .stats import Mean, Rate

__all__ = [
    "RetrievalFigures",
    "TrialRetrieval",
    "ndcg_at",
    "precision",
    "recall_at",
    "retrieval_by_slice",
    "retrieval_figures",
    "trial_retrievals",
]

CATEGORY = "trial_matching"
PATIENT_ARGS = ("patient_id", "patient", "mrn")
"""Arguments that make a read a retrieval call: they name whose records it looks for."""
CUTOFFS = (5, 10)

MeanOut = Annotated[Mean, PlainSerializer(Mean.as_dict)]
RateOut = Annotated[Rate, PlainSerializer(Rate.as_dict)]


def recall_at(fetched: Sequence[str], gold: frozenset[str], k: int | None = None) -> float:
    """Share of the gold references among the first ``k`` fetched (None: all of them)."""
    return len(gold.intersection(fetched[:k])) / len(gold)


def precision(fetched: Sequence[str], gold: frozenset[str]) -> float:
    """Share of the fetched references that are gold (0 when nothing was fetched)."""
    return len(gold.intersection(fetched)) / len(fetched) if fetched else 0.0


def ndcg_at(fetched: Sequence[str], gold: frozenset[str], k: int) -> float:
    """Normalised discounted cumulative gain of the first ``k`` fetched, gold references relevant (1), others not."""
    gain = sum(1 / log2(rank + 2) for rank, ref in enumerate(fetched[:k]) if ref in gold)
    ideal = sum(1 / log2(rank + 2) for rank in range(min(len(gold), k)))
    return gain / ideal


@dataclass(frozen=True)
class TrialRetrieval:
    """What one trial fetched, against its task's gold evidence set."""

    task_id: str
    agent: str
    trial: int
    gold: frozenset[str]
    fetched: tuple[str, ...]
    """References of the initial EHR its reads returned, in order, each once."""
    calls: int
    """Retrieval calls (successful reads naming a patient)."""
    empty: int
    """Retrieval calls that returned no record."""

    def figures(self) -> dict[str, float]:
        """Recall@5, @10 and over all, precision and nDCG@5, @10 of this trial."""
        fetched, gold = self.fetched, self.gold
        return {
            **{f"recall@{k}": recall_at(fetched, gold, k) for k in CUTOFFS},
            "recall": recall_at(fetched, gold),
            "precision": precision(fetched, gold),
            **{f"ndcg@{k}": ndcg_at(fetched, gold, k) for k in CUTOFFS},
        }


def gold_evidence(run: Run, task_id: str, category: str, hidden_hash: str) -> frozenset[str]:
    """The references a task's gold output cites (empty: it has no gold evidence set)."""
    if category != CATEGORY:
        return frozenset()
    return frozenset().union(*(g.evidence for g in run.gold_criteria(task_id, hidden_hash).values()))


def retrieval_of(run: Run, row, gold: frozenset[str]) -> TrialRetrieval:
    """One trial's retrieval, from its stored events."""
    trial = run.trial_by_id(int(row.trial_id))
    reads = [e for e in trial.events if e.ok and e.kind == "read"]
    image = run.image(row.task_id)
    returned = [returned_in_order([e], image) for e in reads]
    lookups = [found for e, found in zip(reads, returned, strict=True) if any(map(e.args.get, PATIENT_ARGS))]
    return TrialRetrieval(
        task_id=row.task_id,
        agent=row.agent,
        trial=int(row.trial),
        gold=gold,
        fetched=tuple(dict.fromkeys(ref for found in returned for ref in found)),
        calls=len(lookups),
        empty=sum(not found for found in lookups),
    )


def trial_retrievals(trials: pd.DataFrame, run: Run) -> list[TrialRetrieval]:
    """The retrieval of every trial (rows of ``run.facts``) whose task has a gold evidence set."""
    golds = {
        (task_id, hidden_hash): gold_evidence(run, task_id, category, hidden_hash)
        for task_id, category, hidden_hash in trials[["task_id", "category", "hidden_hash"]]
        .drop_duplicates()
        .itertuples(index=False)
    }
    return [
        retrieval_of(run, row, gold) for row in trials.itertuples() if (gold := golds[(row.task_id, row.hidden_hash)])
    ]


class RetrievalFigures(BaseModel):
    """Retrieval of an agent's trials over the tasks with a gold evidence set (module doc)."""

    tasks: int
    trials: int
    recall_at_5: MeanOut
    recall_at_10: MeanOut
    recall: MeanOut
    precision: MeanOut
    ndcg_at_5: MeanOut
    ndcg_at_10: MeanOut
    no_result: RateOut
    """Retrieval calls that returned no record / retrieval calls."""

    def rows(self) -> list[tuple[str, str]]:
        """(figure, value as text) of each figure, in the order shown."""
        return [
            ("recall@5", str(self.recall_at_5)),
            ("recall@10", str(self.recall_at_10)),
            ("recall (all fetched)", str(self.recall)),
            ("precision", str(self.precision)),
            ("nDCG@5", str(self.ndcg_at_5)),
            ("nDCG@10", str(self.ndcg_at_10)),
            ("no-result calls", str(self.no_result)),
        ]

    def to_markdown(self) -> str:
        head = f"Retrieval over {self.tasks} task(s) with a gold evidence set, {self.trials} trial(s):"
        return "\n".join([head, "", *markdown_lines(["figure", "value"], [list(r) for r in self.rows()])])


def retrieval_figures(retrievals: Sequence[TrialRetrieval]) -> RetrievalFigures | None:
    """The figures of some trials' retrievals; None without any (no task with a gold evidence set)."""
    if not retrievals:
        return None
    per_trial = [r.figures() for r in retrievals]

    def mean(name: str) -> Mean:
        return Mean.of([f[name] for f in per_trial])

    return RetrievalFigures(
        tasks=len({r.task_id for r in retrievals}),
        trials=len(retrievals),
        recall_at_5=mean("recall@5"),
        recall_at_10=mean("recall@10"),
        recall=mean("recall"),
        precision=mean("precision"),
        ndcg_at_5=mean("ndcg@5"),
        ndcg_at_10=mean("ndcg@10"),
        no_result=Rate(sum(r.empty for r in retrievals), sum(r.calls for r in retrievals)),
    )


def retrieval_by_slice(retrievals: Sequence[TrialRetrieval], value_of: Callable[[str], str | None]) -> pd.DataFrame:
    """One row per agent and slice value (``value_of(task_id)``; None: the task is left out): tasks, trials, the
    mean of each figure with the bounds of its interval, and the no-result rate."""
    rows = []
    keyed: dict[tuple[str, str], list[TrialRetrieval]] = {}
    for r in retrievals:
        if (value := value_of(r.task_id)) is not None:
            keyed.setdefault((r.agent, value), []).append(r)
    for (agent, value), group in sorted(keyed.items()):
        figures = retrieval_figures(group)
        assert figures is not None  # a group has trials
        row: dict[str, object] = {"agent": agent, "value": value, "tasks": figures.tasks, "trials": figures.trials}
        for name in ("recall_at_5", "recall_at_10", "recall", "precision", "ndcg_at_5", "ndcg_at_10"):
            m: Mean = getattr(figures, name)
            row |= {name: m.value, f"{name}_lo": m.interval[0] if m.interval else None}
            row[f"{name}_hi"] = m.interval[1] if m.interval else None
        rows.append(row | {"no_result": figures.no_result.value, "retrieval_calls": figures.no_result.n})
    return pd.DataFrame(rows)
