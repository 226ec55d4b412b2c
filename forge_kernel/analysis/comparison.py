"""Compare a candidate agent's trials with a baseline's: per task, overall, per slice, latency, cost, tools,
calibration. Each side is one agent of one Run (its trials read once, in SQL); a comparison carries the trial ids
behind each task, so that any task it names opens with ``run.trial_by_id``."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel

from ..spec import SpecError
from ..store import Run
from ._slices import SLICE_COLUMNS, task_slices
from ._tasks import SAFETY_RISKS, TaskSide, Tokens, per_task, task_sides, tokens_of
from .criteria import CitationChecks, CriterionConfusion, citations_of, confusion_of, graded_trials
from .display import Shown, html_heading, html_paragraphs, html_table, some_ids
from .extraction import ExtractionFigures, extraction_figures
from .retrieval import RetrievalFigures, retrieval_figures, trial_retrievals
from .stats import Rate, brier, ece, mcnemar_exact, percentile, reliability

Change = Literal["improvement", "regression", "both_pass", "both_fail", "not_compared"]


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
    baseline: dict[str, Any]
    """Strict pass rate over tasks (Rate.as_dict)."""
    candidate: dict[str, Any]
    improvements: int
    regressions: int


class Latency(BaseModel):
    """Seconds at P50 / P95 / P99 (None: too few samples). Total is the agent's own, model and tool time; queueing
    is apart."""

    total: dict[str, float | None]
    agent: dict[str, float | None]
    tool: dict[str, float | None]
    queue: dict[str, float | None]
    model: dict[str, float | None] | None = None
    """The model turns' time, as the agent reported it (None: it reported no turn)."""


class Calibration(BaseModel):
    n: int
    brier: float
    ece: float
    bins: list[dict[str, Any]]


class SideSummary(BaseModel):
    run_dir: str
    agent: str
    agent_version: str
    isolation: str
    """How the agent ran: in process (trusted) or in which sandbox."""
    trials: dict[str, Any]
    strict_tasks: dict[str, Any]
    latency: Latency
    cost_per_task: float
    """US dollars per trial of a task, averaged over tasks: what the trials were charged, model turns included."""
    tokens_per_task: Tokens | None = None
    """Model tokens per trial of a task, averaged over tasks (None: the agent reported no model turn)."""
    tool_success: dict[str, Any]
    fault_recovery: dict[str, Any]
    idempotent_replays: int
    run_again: int
    """Trials whose agent was run again after a stall of the worker it shared (their time is the last attempt's)."""
    unstable_tasks: int
    safety_failures: int
    cross_patient: int
    unauthorized_writes: int
    false_answers: int
    calibration: Calibration | None
    criteria: CriterionConfusion | None = None
    """Trial-matching criteria against the gold (None: no trial-matching tasks)."""
    citations: CitationChecks | None = None
    retrieval: RetrievalFigures | None = None
    extraction: ExtractionFigures | None = None
    """What the trials fetched against the gold evidence set (None: no task names one)."""


class Comparison(Shown, BaseModel):
    """Everything ``forge compare`` reports; gates read it."""

    baseline: SideSummary
    candidate: SideSummary
    tasks: list[TaskComparison]
    improvements: list[str]
    regressions: list[str]
    safety_regressions: list[str]
    unstable_candidate: list[str]
    not_compared: list[str]
    mcnemar: dict[str, Any]
    slices: list[SliceRow]

    def task(self, task_id: str) -> TaskComparison:
        """One task's comparison, with the trial ids of both sides."""
        return next(t for t in self.tasks if t.task_id == task_id)

    @property
    def title(self) -> str:
        b, c = self.baseline, self.candidate
        return f"{c.agent} {c.agent_version} vs {b.agent} {b.agent_version}"

    @property
    def ran(self) -> str:
        return f"{self.candidate.agent} {self.candidate.isolation} · {self.baseline.agent} {self.baseline.isolation}"

    @property
    def headline(self) -> str:
        b, c = self.baseline, self.candidate
        return (
            f"tasks passing every trial: {Rate.of(b.strict_tasks)} → {Rate.of(c.strict_tasks)}; "
            f"{len(self.improvements)} improvement(s), {len(self.regressions)} regression(s), "
            f"{len(self.unstable_candidate)} unstable; McNemar p = {self.mcnemar['p_value']:.3g}"
        )

    def highlights(self) -> list[list[str]]:
        """Improvements, regressions, safety regressions and unstable tasks: what, task, passes and trial ids of
        each side."""
        rows = []
        for what, ids in (
            ("improvement", self.improvements),
            ("regression", self.regressions),
            ("safety regression", self.safety_regressions),
            ("unstable", self.unstable_candidate),
        ):
            for t in map(self.task, ids):
                rows.append(
                    [
                        what,
                        t.task_id,
                        *(
                            f"{s.passes}/{s.n} (trials {some_ids(s.trial_ids)})" if s else "—"
                            for s in (t.baseline, t.candidate)
                        ),
                    ]
                )
        return rows

    def usage_lines(self) -> list[str]:
        """Each side's pass rates beside its cost and model tokens per task."""
        return [
            f"{label} {s.agent}: trials passing {Rate.of(s.trials)}, tasks passing every trial "
            f"{Rate.of(s.strict_tasks)} · cost per task ${s.cost_per_task:.4f}"
            + (f" · model tokens per task {s.tokens_per_task}" if s.tokens_per_task else "")
            for label, s in (("baseline", self.baseline), ("candidate", self.candidate))
        ]

    def text(self) -> str:
        lines = [self.title, f"  ran: {self.ran}", self.headline, *(f"  {line}" for line in self.usage_lines())]
        return "\n".join(lines + [f"  {what} {task}: {b} → {c}" for what, task, b, c in self.highlights()])

    def html(self) -> str:
        return (
            html_heading(self.title)
            + html_paragraphs(f"Ran: {self.ran}.", self.headline, *self.usage_lines())
            + html_table(["", "task", "baseline", "candidate"], self.highlights())
        )


@dataclass(eq=False)
class AgentSide:
    """One agent of one run: its trials (``Run.facts``), its per-task sides, and its summary when first asked for."""

    run: Run
    agent: str
    trials: pd.DataFrame
    tasks: dict[str, TaskSide]

    @cached_property
    def summary(self) -> SideSummary:
        return side_summary(self)


def agent_side(run: Run, agent: str | None, flag: str) -> AgentSide:
    """The side of one agent; with several agents in a run ``agent`` must name one (``flag`` says how)."""
    agents = run.agents_with_trials
    if agent is None:
        if len(agents) != 1:
            raise SpecError(run.path, flag, f"the run holds {len(agents)} agents ({', '.join(agents)}); name one")
        agent = agents[0]
    if agent not in agents:
        raise SpecError(run.path, flag, f"no agent {agent!r} in this run ({', '.join(agents)})")
    trials = run.facts(agent)
    return AgentSide(run, agent, trials, task_sides(trials))


def check_same_grading(a: AgentSide, b: AgentSide) -> None:
    """Refuse to compare tasks graded with different hidden halves."""
    ha = a.trials.groupby("task_id")["hidden_hash"].first()
    hb = b.trials.groupby("task_id")["hidden_hash"].first()
    common = ha.index.intersection(hb.index)
    differ = [t for t in common if ha[t] != hb[t]]
    if differ:
        raise SpecError(
            b.run.path,
            "hidden_hash",
            f"{len(differ)} task(s) graded with another hidden half than the "
            f"baseline (e.g. {differ[0]}); run `forge regrade` on both runs first",
        )


def latency(trials: pd.DataFrame) -> Latency:
    def pcts(values: pd.Series) -> dict[str, float | None]:
        data = values.dropna().tolist()
        return {f"p{q}": percentile(data, q) for q in (50, 95, 99)}

    return Latency(
        total=pcts(trials["duration_s"]),
        agent=pcts(trials["agent_s"]),
        tool=pcts(trials["tool_s"]),
        queue=pcts(trials["queued_s"]),
        model=pcts(trials["model_s"]) if trials["turns"].any() else None,
    )


def calibration(trials: pd.DataFrame) -> Calibration | None:
    rated = trials[trials["confidence"].notna()]
    if rated.empty:
        return None
    conf, out = rated["confidence"].tolist(), rated["passed"].tolist()
    bins = [b.__dict__ for b in reliability(conf, out) if b.count]
    return Calibration(n=len(rated), brier=brier(conf, out), ece=ece(conf, out), bins=bins)


def side_summary(side: AgentSide) -> SideSummary:
    """One agent's figures."""
    trials, sides = side.trials, side.tasks.values()
    graded = graded_trials(trials, side.run)
    usage = per_task(trials).mean()
    return SideSummary(
        run_dir=str(side.run.path),
        agent=side.agent,
        agent_version=trials["agent_version"].iloc[0],
        isolation=side.run.isolation.get(side.agent, "unknown"),
        trials=Rate(int(trials["passed"].sum()), len(trials)).as_dict(),
        strict_tasks=Rate(sum(s.strict for s in sides), len(sides)).as_dict(),
        latency=latency(trials),
        cost_per_task=float(usage["cost"]),
        tokens_per_task=tokens_of(usage),
        tool_success=Rate(int(trials["tool_ok"].sum()), int(trials["tool_calls"].sum())).as_dict(),
        fault_recovery=Rate(int(trials["recovered"].sum()), int(trials["faults"].sum())).as_dict(),
        idempotent_replays=int(trials["idempotent_replays"].sum()),
        run_again=int((trials["attempts"] > 1).sum()),
        unstable_tasks=sum(s.unstable for s in sides),
        safety_failures=sum(s.safety_failures for s in sides),
        cross_patient=sum(s.cross_patient for s in sides),
        unauthorized_writes=sum(s.unauthorized_writes for s in sides),
        false_answers=sum(s.false_answers for s in sides),
        calibration=calibration(trials),
        criteria=confusion_of(graded),
        citations=citations_of(graded, side.run),
        retrieval=retrieval_figures(trial_retrievals(trials, side.run)),
        extraction=extraction_figures(trials, side.run),
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
        values = sorted({value for t in compared if (value := t.slices.get(name)) is not None})
        for value in values:
            group = [t for t in compared if t.slices.get(name) == value]
            rows.append(
                SliceRow(
                    slice=name,
                    value=value,
                    tasks=len(group),
                    baseline=Rate(sum(t.baseline.strict for t in group if t.baseline), len(group)).as_dict(),
                    candidate=Rate(sum(t.candidate.strict for t in group if t.candidate), len(group)).as_dict(),
                    improvements=sum(t.change == "improvement" for t in group),
                    regressions=sum(t.change == "regression" for t in group),
                )
            )
    return rows


def task_facts(a: AgentSide, b: AgentSide) -> dict[str, tuple[str, dict[str, str | None]]]:
    """Task id -> (risk, slices) of every task either side ran: the baseline's package's, with the slices it does
    not declare taken from the candidate's."""
    facts: dict[str, tuple[str, dict[str, str | None]]] = {}
    for side in (b, a):  # the baseline last: its values win
        risks = dict(zip(side.run.tasks["task_id"], side.run.tasks["risk"]))
        for task_id, slices in task_slices(side.run).items():
            if task_id in side.tasks:
                known = facts.get(task_id, ("", {}))[1]
                facts[task_id] = risks[task_id], {n: known.get(n) if v is None else v for n, v in slices.items()}
    return facts


def compare_sides(a: AgentSide, b: AgentSide) -> Comparison:
    """Compare two agent sides task by task."""
    check_same_grading(a, b)
    facts = task_facts(a, b)
    tasks = []
    for task_id in sorted(facts):
        risk, slices = facts[task_id]
        sa, sb = a.tasks.get(task_id), b.tasks.get(task_id)
        change = task_change(sa, sb)
        new_violation = sa is not None and sb is not None and sb.safety_failures > 0 and sa.safety_failures == 0
        tasks.append(
            TaskComparison(
                task_id=task_id,
                risk=risk,
                slices=slices,
                baseline=sa,
                candidate=sb,
                change=change,
                safety_regression=(change == "regression" and risk in SAFETY_RISKS) or new_violation,
            )
        )
    discordant_b = sum(t.change == "regression" for t in tasks)
    discordant_c = sum(t.change == "improvement" for t in tasks)
    return Comparison(
        baseline=a.summary,
        candidate=b.summary,
        tasks=tasks,
        improvements=[t.task_id for t in tasks if t.change == "improvement"],
        regressions=[t.task_id for t in tasks if t.change == "regression"],
        safety_regressions=[t.task_id for t in tasks if t.safety_regression],
        unstable_candidate=[t.task_id for t in tasks if t.candidate and t.candidate.unstable],
        not_compared=[t.task_id for t in tasks if t.change == "not_compared"],
        mcnemar={
            "baseline_only": discordant_b,
            "candidate_only": discordant_c,
            "p_value": mcnemar_exact(discordant_b, discordant_c),
        },
        slices=slice_rows(tasks),
    )


def compare(
    baseline: Run, candidate: Run, baseline_agent: str | None = None, candidate_agent: str | None = None
) -> Comparison:
    """Compare two runs (or two agents of one run) task by task."""
    return compare_sides(
        agent_side(baseline, baseline_agent, "--baseline-agent"),
        agent_side(candidate, candidate_agent, "--candidate-agent"),
    )
