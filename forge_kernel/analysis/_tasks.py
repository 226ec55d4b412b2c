"""Per task over its k trials: strict pass, pass@k, pass^k, instability, cost and model tokens."""

from __future__ import annotations

import pandas as pd
from pydantic import BaseModel

from .stats import pass_at_k, pass_hat_k

SAFETY_RISKS = ("high", "critical")
"""Package risk levels that make a task safety-critical."""
TOKENS = ("prompt_tokens", "completion_tokens", "cached_tokens")
"""A trial's model tokens (``Run.facts``, ``Run.usage``): NaN where its agent reported no turn."""


class Tokens(BaseModel):
    """Model tokens per trial, as the agent reported them: in (prompt), out (completion) and the cached part of in."""

    prompt: float
    completion: float
    cached: float

    def __str__(self) -> str:
        return f"{self.prompt:,.0f} in ({self.cached:,.0f} cached) / {self.completion:,.0f} out"


def tokens_of(means: pd.Series) -> Tokens | None:
    """The tokens of a row of means over ``TOKENS`` (None where no trial behind it reported a turn)."""
    if pd.isna(means["prompt_tokens"]):
        return None
    return Tokens(prompt=means["prompt_tokens"], completion=means["completion_tokens"], cached=means["cached_tokens"])


def per_task(trials: pd.DataFrame, keys: tuple[str, ...] = ()) -> pd.DataFrame:
    """The mean per trial of each task (within ``keys``) of its cost, model turns and ``TOKENS`` (NaN where none of
    its trials reported a turn)."""
    return trials.groupby([*keys, "task_id"], sort=True)[["cost", "turns", *TOKENS]].mean()


class TaskSide(BaseModel):
    """One agent on one task."""

    n: int
    passes: int
    strict: bool
    """Every trial passed."""
    pass_at_k: float
    """P(at least one of k=n trials passes)."""
    pass_hat_k: dict[int, float]
    """Unbiased C(c,k)/C(n,k) for every k <= n."""
    unstable: bool
    unstable_reasons: list[str]
    safety_failures: int
    """Failing hard safety verdicts over the trials."""
    cross_patient: int
    unauthorized_writes: int
    false_answers: int
    """Trials that claimed completion with a failing answer check."""
    failed_verifiers: list[str]
    trial_ids: list[int]
    """The run's id of each trial, by trial index (``run.trial_by_id``)."""
    cost: float = 0.0
    """US dollars per trial, on average (what each was charged, its model turns included)."""
    tokens: Tokens | None = None
    """Model tokens per trial, on average (None: its agent reported no model turn)."""


INSTABILITY = (("status", "status"), ("answer", "answer"), ("final state", "fingerprint"), ("outcome", "passed"))
"""(reason, column): a task is unstable for each column whose value differs across its trials."""


def task_sides(trials: pd.DataFrame) -> dict[str, TaskSide]:
    """Task id -> summary, for one agent's trials (in trial order); every figure from one grouping of the trials."""
    false_answer = (trials["answer_failures"] > 0) & (trials["self_status"] == "completed")
    grouped = trials.assign(false_answer=false_answer).groupby("task_id", sort=True)
    sums = grouped[["passed", "safety_failures", "cross_patient", "unauthorized_writes", "false_answer"]].sum()
    varies = grouped[[column for _, column in INSTABILITY]].nunique() > 1
    failed: dict[str, set[str]] = {}
    failing = trials[trials["failed_verifiers"] != ""]
    for task_id, ids in zip(failing["task_id"].tolist(), failing["failed_verifiers"].tolist()):
        failed.setdefault(task_id, set()).update(v for v in ids.split(",") if v)
    usage = per_task(trials)
    sides = {}
    for task_id, trial_ids in grouped["trial_id"].agg(list).items():
        n, c, row = len(trial_ids), int(sums.at[task_id, "passed"]), sums.loc[task_id]
        reasons = [name for name, column in INSTABILITY if varies.at[task_id, column]]
        sides[task_id] = TaskSide(
            n=n,
            passes=c,
            strict=c == n,
            pass_at_k=pass_at_k(c, n, n),
            pass_hat_k={k: pass_hat_k(c, n, k) for k in range(1, n + 1)},
            unstable=bool(reasons),
            unstable_reasons=reasons,
            safety_failures=int(row["safety_failures"]),
            cross_patient=int(row["cross_patient"]),
            unauthorized_writes=int(row["unauthorized_writes"]),
            false_answers=int(row["false_answer"]),
            failed_verifiers=sorted(failed.get(task_id, ())),
            trial_ids=trial_ids,
            cost=float(usage.at[task_id, "cost"]),
            tokens=tokens_of(usage.loc[task_id]),
        )
    return sides
