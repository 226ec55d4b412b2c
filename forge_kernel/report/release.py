"""What a release report is built on: its runs opened once, the comparison, the gate, the ablation cards, the
failure ledgers and the mutation kill rate; and the values the executed notebook records for readers and tests."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from IPython.display import display

from ..analysis import (
    AblationCard,
    AgentSide,
    Comparison,
    GateResult,
    Ledger,
    agent_side,
    card,
    compare_sides,
    counts_against,
    declared_policy,
    evaluate,
    failure_ledger,
    load_policy,
    load_triage,
)
from ..store import Run, open_run
from .judges import judge_agreement_rows
from .kill_rate import mutation_kill_rate

MIMETYPE = "application/vnd.forge.release+json"
"""The custom output that records a report's values in the executed notebook."""
MAX_PAIRS = 24
"""Regressed and unstable tasks opened side by side in a player; any more are listed by task."""
MAX_FAILED = 10
"""The candidate's failed trials opened in a player, critical and safety failures first; the others are listed in
the failure ledger."""
FAILED_KINDS = ("critical safety failure", "safety failure", "failed trial")
"""How a played failed trial is labelled, in the order they are played."""


@dataclass(eq=False)
class ReleaseReport:
    """One release: baseline and candidate sides, ablation sides, and everything computed from them."""

    release: str
    baseline_source: str
    trials: int
    runs: dict[str, Run]
    """Label (baseline, candidate, ablation-N) -> its run."""
    baseline: AgentSide
    candidate: AgentSide
    comparison: Comparison
    gate: GateResult
    cards: list[AblationCard]
    ablation_sides: list[AgentSide]
    ledgers: dict[str, Ledger]
    """Baseline's and candidate's failure ledgers."""
    kill_rate: dict
    judges: list[dict]
    """Each judge of the suites against its labelled set (``judges.judge_agreement_rows``)."""

    @classmethod
    def build(
        cls,
        release: str,
        baseline_run: str,
        baseline_agent: str,
        candidate_run: str,
        candidate_agent: str,
        ablations: dict[str, str],
        gate_policy: str | None,
        suites: list[str],
        trials: int,
        baseline_source: str = "",
        triage: str | None = None,
        mutants_cache: str | None = None,
        judges_cache: str | None = None,
    ) -> ReleaseReport:
        """Open the runs, compare, evaluate the gate (refused when the candidate run declared another policy), and
        build the cards and ledgers. ``ablations`` maps each ablated agent to its run."""
        runs = {"baseline": open_run(baseline_run), "candidate": open_run(candidate_run)}
        runs.update({f"ablation-{i}": open_run(path) for i, path in enumerate(ablations.values(), 1)})
        a = agent_side(runs["baseline"], baseline_agent, "baseline_agent")
        b = agent_side(runs["candidate"], candidate_agent, "candidate_agent")
        cmp = compare_sides(a, b)
        gate = evaluate(cmp, load_policy(gate_policy), declared_policy(runs["candidate"]))
        sides = [agent_side(runs[f"ablation-{i}"], name, "ablations") for i, name in enumerate(ablations, 1)]
        decisions = load_triage(triage) if triage else None
        ledgers = {label: failure_ledger(runs[label], decisions) for label in ("baseline", "candidate")}
        cache = Path(mutants_cache) if mutants_cache else None
        kill_rate = mutation_kill_rate(suites, cache, runs["candidate"].manifest["packages"].values())
        judges = judge_agreement_rows(suites, Path(judges_cache) if judges_cache else None)
        return cls(
            release,
            baseline_source or f"agent {baseline_agent}",
            trials,
            runs,
            a,
            b,
            cmp,
            gate,
            [card(b, side) for side in sides],
            sides,
            ledgers,
            kill_rate,
            judges,
        )

    def first_trial(self, side: AgentSide, task_id: str, passed: bool) -> int | None:
        """The id of a side's first trial of a task that passed (or failed)."""
        rows = side.trials
        found = rows[(rows["task_id"] == task_id) & (rows["passed"].astype(bool) == passed)]
        return int(found["trial_id"].iloc[0]) if len(found) else None

    def pairs(self) -> list[dict]:
        """Every regressed task's failing candidate trial beside the baseline's passing one, then every unstable
        task's failing trial beside a passing one of the candidate: what a player shows, by run label and trial id."""
        cmp, shown = self.comparison, []
        for task_id in dict.fromkeys(cmp.safety_regressions + cmp.regressions):
            shown.append(self.beside(task_id, "regression", self.first_trial(self.candidate, task_id, False)))
        for task_id in cmp.unstable_candidate:
            failed = self.first_trial(self.candidate, task_id, False)
            passed = self.first_trial(self.candidate, task_id, True)
            if failed is not None and passed is not None:
                shown.append(self.beside(task_id, "unstable", failed, "candidate", passed))
        return [s for s in shown if s["trial_id"] is not None]

    def failures(self) -> list[dict]:
        """The candidate's failed trials (its failure ledger's) that no pair shows: critical safety failures
        first, then other safety failures, then the rest (within each, every task's first failed trial before any
        task's second), each beside a passing trial of its task where there is one
        (the candidate's, else the baseline's)."""
        paired = {s["trial_id"] for s in self.pairs()}
        shown = []
        for row in self.ledgers["candidate"].table.itertuples(index=False):
            if row.trial_id in paired:
                continue
            kind = FAILED_KINDS[0 if row.critical else 1 if "safety" in row.failed_categories.split(",") else 2]
            passed = self.first_trial(self.candidate, row.task_id, True)
            if passed is not None:
                shown.append(self.beside(row.task_id, kind, int(row.trial_id), "candidate", passed))
            else:
                shown.append(self.beside(row.task_id, kind, int(row.trial_id)))
        earlier: Counter[str] = Counter()
        ranked = []
        for s in shown:
            ranked.append(((FAILED_KINDS.index(s["kind"]), earlier[s["task"]]), s))
            earlier[s["task"]] += 1
        return [s for _, s in sorted(ranked, key=lambda r: r[0])]

    def beside(
        self, task_id: str, kind: str, trial_id: int | None, other_run: str = "baseline", other: int | None = None
    ) -> dict:
        """A candidate trial to play, beside ``other`` of ``other_run`` (by default the baseline's first passing
        trial of the task, None if it has none)."""
        if other_run == "baseline" and other is None:
            other = self.first_trial(self.baseline, task_id, True)
        return {
            "kind": kind,
            "task": task_id,
            "run": "candidate",
            "trial_id": trial_id,
            "other_run": other_run,
            "other_trial_id": other,
        }

    def played(self) -> dict[str, Any]:
        """The trajectories the report opens in a player: ``pairs`` (at most ``MAX_PAIRS``) and ``failures`` (at
        most ``MAX_FAILED``), and how many of each are ``not_shown``."""
        pairs, failures = self.pairs(), self.failures()
        return {
            "pairs": pairs[:MAX_PAIRS],
            "failures": failures[:MAX_FAILED],
            "not_shown": {"pairs": max(0, len(pairs) - MAX_PAIRS), "failures": max(0, len(failures) - MAX_FAILED)},
        }

    def values(self) -> dict:
        """What the report says, as data: gate, highlights, players, cards, kill rate."""
        cmp, played = self.comparison, self.played()
        return {
            "release": self.release,
            "green": self.gate.green,
            "baseline_source": self.baseline_source,
            "gate": [
                {"name": c.name, "level": c.level, "status": c.status, "counts_against": counts_against(c)}
                for c in self.gate.checks
            ],
            "red_because": [c.name for c in self.gate.red_because],
            "highlights": {
                "regressions": cmp.regressions,
                "safety_regressions": cmp.safety_regressions,
                "improvements": cmp.improvements,
                "unstable": cmp.unstable_candidate,
            },
            "players": [*played["pairs"], *played["failures"]],
            "players_not_shown": played["not_shown"],
            "cards": [card_values(c) for c in self.cards],
            "kill_rate": {k: self.kill_rate[k] for k in ("rate", "mutants", "rejected", "survived", "packages")},
            "judges": self.judges,
            "trials": {label: len(run.trials) for label, run in self.runs.items()},
        }

    def record(self) -> None:
        """Display the values as a custom-mimetype output, read back from the executed notebook."""
        values = self.values()
        display(
            {MIMETYPE: values, "text/plain": f"release {self.release}: gate {'GREEN' if values['green'] else 'RED'}"},
            raw=True,
        )


def card_values(c: AblationCard) -> dict:
    return {
        "ablation": c.ablation,
        "removed": sorted(c.removed),
        "overall_delta": c.overall_delta,
        "costs": bool(c.overall_delta is not None and c.overall_delta < 0),
        "regressions": c.regressions,
    }


def recorded(notebook: dict) -> dict:
    """The values a release notebook recorded (``MIMETYPE``), from the executed notebook's JSON."""
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            if MIMETYPE in output.get("data", {}):
                return output["data"][MIMETYPE]
    raise KeyError(f"no {MIMETYPE} output in the notebook")
