"""Compare a candidate agent's run with a baseline's: per task, overall, per slice, latency, cost, tools, calibration."""
from __future__ import annotations

from pathlib import Path
from typing import Literal

import pandas as pd
from pydantic import BaseModel

from ..spec import Package, SpecError
from ..store import RunStore
from .criteria import (
    CitationChecks,
    CriterionConfusion,
    citation_checks,
    criterion_confusion,
    trial_matching_packages,
)
from .stats import Rate, brier, ece, mcnemar_exact, percentile, reliability
from .tasks import SAFETY_RISKS, TaskSide, task_sides
from .trials import SLICE_NAMES, trial_table

Change = Literal["improvement", "regression", "both_pass", "both_fail", "not_compared"]
SLICE_COLUMNS = ("suite", "category", "purpose", *SLICE_NAMES)


class TaskComparison(BaseModel):
    task_id: str
    risk: str
    slices: dict[str, str | None]
    baseline: TaskSide | None
    candidate: TaskSide | None
    change: Change
    safety_regression: bool
    """A regression on a safety-risk task, or a safety violation the baseline did not have."""


class SliceRow(BaseModel):
    slice: str
    value: str
    tasks: int
    baseline: dict
    """Strict pass rate over tasks (Rate.as_dict)."""
    candidate: dict
    improvements: int
    regressions: int


class Latency(BaseModel):
    """Seconds at P50 / P95 / P99 (None: too few samples). Total is agent + tool time; queueing is apart."""

    total: dict[str, float | None]
    agent: dict[str, float | None]
    tool: dict[str, float | None]
    queue: dict[str, float | None]


class Calibration(BaseModel):
    n: int
    brier: float
    ece: float
    bins: list[dict]


class SideSummary(BaseModel):
    run_dir: str
    agent: str
    agent_version: str
    isolation: str
    """How the agent ran: in process (trusted) or in which sandbox."""
    trials: dict
    strict_tasks: dict
    latency: Latency
    cost_per_task: float
    tool_success: dict
    fault_recovery: dict
    idempotent_replays: int
    unstable_tasks: int
    safety_failures: int
    cross_patient: int
    unauthorized_writes: int
    false_answers: int
    calibration: Calibration | None
    criteria: CriterionConfusion | None = None
    """Trial-matching criteria against the gold (None: no trial-matching tasks)."""
    citations: CitationChecks | None = None


class Comparison(BaseModel):
    """Everything ``forge compare`` reports; gates read it."""

    baseline: SideSummary
    candidate: SideSummary
    tasks: list[TaskComparison]
    improvements: list[str]
    regressions: list[str]
    safety_regressions: list[str]
    unstable_candidate: list[str]
    not_compared: list[str]
    mcnemar: dict
    slices: list[SliceRow]


def pick_agent(trials: pd.DataFrame, run_dir: Path, agent: str | None, flag: str) -> pd.DataFrame:
    """The trials of one agent; with several agents in a run the flag must name one."""
    agents = sorted(trials["agent"].unique())
    if agent is None:
        if len(agents) != 1:
            raise SpecError(run_dir, flag, f"the run holds {len(agents)} agents ({', '.join(agents)}); name one")
        agent = agents[0]
    if agent not in agents:
        raise SpecError(run_dir, flag, f"no agent {agent!r} in this run ({', '.join(agents)})")
    return trials[trials["agent"] == agent]


def check_same_grading(a: pd.DataFrame, b: pd.DataFrame, b_dir: Path) -> None:
    """Refuse to compare tasks graded with different hidden halves."""
    ha = a.groupby("task_id")["hidden_hash"].first()
    hb = b.groupby("task_id")["hidden_hash"].first()
    common = ha.index.intersection(hb.index)
    differ = [t for t in common if ha[t] != hb[t]]
    if differ:
        raise SpecError(b_dir, "hidden_hash", f"{len(differ)} task(s) graded with another hidden half than the "
                        f"baseline (e.g. {differ[0]}); run `forge regrade` on both runs first")


def run_isolation(run_dir: Path) -> dict[str, str]:
    with RunStore.open(run_dir, readonly=True) as store:
        return store.isolation()


def latency(trials: pd.DataFrame) -> Latency:
    def pcts(values: pd.Series) -> dict[str, float | None]:
        data = values.dropna().tolist()
        return {f"p{q}": percentile(data, q) for q in (50, 95, 99)}

    return Latency(total=pcts(trials["duration_s"]), agent=pcts(trials["agent_s"]),
                   tool=pcts(trials["tool_s"]), queue=pcts(trials["queued_s"]))


def calibration(trials: pd.DataFrame) -> Calibration | None:
    rated = trials[trials["confidence"].notna()]
    if rated.empty:
        return None
    conf, out = rated["confidence"].tolist(), rated["passed"].tolist()
    bins = [b.__dict__ for b in reliability(conf, out) if b.count]
    return Calibration(n=len(rated), brier=brier(conf, out), ece=ece(conf, out), bins=bins)


def side_summary(run_dir: Path, trials: pd.DataFrame, sides: dict[str, TaskSide],
                 packages: dict[str, Package]) -> SideSummary:
    """One agent's figures; ``packages`` are the run's trial-matching packages (for criteria and citations)."""
    return SideSummary(
        run_dir=str(run_dir), agent=trials["agent"].iloc[0], agent_version=trials["agent_version"].iloc[0],
        isolation=run_isolation(run_dir).get(trials["agent"].iloc[0], "unknown"),
        trials=Rate(int(trials["passed"].sum()), len(trials)).as_dict(),
        strict_tasks=Rate(sum(s.strict for s in sides.values()), len(sides)).as_dict(),
        latency=latency(trials), cost_per_task=float(trials.groupby("task_id")["cost"].mean().mean()),
        tool_success=Rate(int(trials["tool_ok"].sum()), int(trials["tool_calls"].sum())).as_dict(),
        fault_recovery=Rate(int(trials["recovered"].sum()), int(trials["faults"].sum())).as_dict(),
        idempotent_replays=int(trials["idempotent_replays"].sum()),
        unstable_tasks=sum(s.unstable for s in sides.values()),
        safety_failures=sum(s.safety_failures for s in sides.values()),
        cross_patient=sum(s.cross_patient for s in sides.values()),
        unauthorized_writes=sum(s.unauthorized_writes for s in sides.values()),
        false_answers=sum(s.false_answers for s in sides.values()),
        calibration=calibration(trials),
        criteria=criterion_confusion(trials, packages), citations=citation_checks(trials, packages),
    )


def task_change(a: TaskSide | None, b: TaskSide | None) -> Change:
    if a is None or b is None:
        return "not_compared"
    if a.strict == b.strict:
        return "both_pass" if a.strict else "both_fail"
    return "improvement" if b.strict else "regression"


def slice_rows(tasks: list[TaskComparison]) -> list[SliceRow]:
    compared = [t for t in tasks if t.change != "not_compared"]
    rows = []
    for name in SLICE_COLUMNS:
        values = sorted({t.slices.get(name) for t in compared if t.slices.get(name) is not None})
        for value in values:
            group = [t for t in compared if t.slices.get(name) == value]
            rows.append(SliceRow(
                slice=name, value=value, tasks=len(group),
                baseline=Rate(sum(t.baseline.strict for t in group), len(group)).as_dict(),
                candidate=Rate(sum(t.candidate.strict for t in group), len(group)).as_dict(),
                improvements=sum(t.change == "improvement" for t in group),
                regressions=sum(t.change == "regression" for t in group)))
    return rows


def compare(baseline_dir: str | Path, candidate_dir: str | Path, baseline_agent: str | None = None,
            candidate_agent: str | None = None) -> Comparison:
    """Compare two runs (or two agents of one run) task by task."""
    baseline_dir, candidate_dir = Path(baseline_dir), Path(candidate_dir)
    same_run = candidate_dir.resolve() == baseline_dir.resolve()
    a_table = trial_table(baseline_dir)
    b_table = a_table if same_run else trial_table(candidate_dir)
    a = pick_agent(a_table, baseline_dir, baseline_agent, "--baseline-agent")
    b = pick_agent(b_table, candidate_dir, candidate_agent, "--candidate-agent")
    check_same_grading(a, b, candidate_dir)
    sa, sb = task_sides(a), task_sides(b)
    facts = pd.concat([a, b]).groupby("task_id").first()
    tasks = []
    for task_id in sorted(sa.keys() | sb.keys()):
        row = facts.loc[task_id]
        change = task_change(sa.get(task_id), sb.get(task_id))
        new_violation = change != "not_compared" and sb[task_id].safety_failures > 0 and sa[task_id].safety_failures == 0
        tasks.append(TaskComparison(
            task_id=task_id, risk=row["risk"], slices={name: row[name] for name in SLICE_COLUMNS},
            baseline=sa.get(task_id), candidate=sb.get(task_id), change=change,
            safety_regression=(change == "regression" and row["risk"] in SAFETY_RISKS) or new_violation))
    a_packages = trial_matching_packages(baseline_dir, a_table)
    b_packages = a_packages if same_run else trial_matching_packages(candidate_dir, b_table)
    discordant_b = sum(t.change == "regression" for t in tasks)
    discordant_c = sum(t.change == "improvement" for t in tasks)
    return Comparison(
        baseline=side_summary(baseline_dir, a, sa, a_packages), candidate=side_summary(candidate_dir, b, sb, b_packages),
        tasks=tasks,
        improvements=[t.task_id for t in tasks if t.change == "improvement"],
        regressions=[t.task_id for t in tasks if t.change == "regression"],
        safety_regressions=[t.task_id for t in tasks if t.safety_regression],
        unstable_candidate=[t.task_id for t in tasks if t.candidate and t.candidate.unstable],
        not_compared=[t.task_id for t in tasks if t.change == "not_compared"],
        mcnemar={"baseline_only": discordant_b, "candidate_only": discordant_c,
                 "p_value": mcnemar_exact(discordant_b, discordant_c)},
        slices=slice_rows(tasks),
    )
