"""Ablation cards: what removing one component of a candidate costs, per slice and per task."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from ..store import Run
from .comparison import AgentSide, agent_side, compare_sides
from .display import Shown, html_heading, html_paragraphs, html_table, markdown_lines


class SliceDelta(BaseModel):
    slice: str
    value: str
    tasks: int
    candidate: float
    ablation: float
    delta: float
    """Ablation minus candidate, in strict task pass rate (negative: the component helped)."""


class AblationCard(Shown, BaseModel):
    candidate: str
    ablation: str
    removed: dict[str, dict[str, Any]]
    """Configuration keys that differ: {key: {"candidate": value, "ablation": value}} (from the run manifests)."""
    overall_delta: float | None
    regressions: list[str]
    improvements: list[str]
    slices: list[SliceDelta]
    """The slices where removing the component changed the strict task pass rate."""

    def paragraph(self) -> str:
        removed = (
            ", ".join(f"`{k}` {v['candidate']} → {v['ablation']}" for k, v in self.removed.items())
            or "no configuration difference recorded"
        )
        delta = "—" if self.overall_delta is None else f"{self.overall_delta:+.1%}"
        return (
            f"Removed: {removed}.\nStrict task pass change: {delta}. Tasks that regress: "
            f"{', '.join(self.regressions) or 'none'}. Tasks that improve: {', '.join(self.improvements) or 'none'}."
        )

    def table(self) -> tuple[list[str], list[list[str]]]:
        return (
            ["slice", "value", "tasks", "candidate", "ablation", "delta"],
            [
                [s.slice, s.value, str(s.tasks), f"{s.candidate:.0%}", f"{s.ablation:.0%}", f"{s.delta:+.0%}"]
                for s in self.slices
            ],
        )

    def text(self) -> str:
        """The card as Markdown (which reads as text)."""
        return (
            "\n".join(
                [
                    f"## Ablation: {self.ablation} (from {self.candidate})",
                    "",
                    self.paragraph(),
                    "",
                    *markdown_lines(*self.table()),
                ]
            )
            + "\n"
        )

    def html(self) -> str:
        return (
            html_heading(f"Ablation: {self.ablation} (from {self.candidate})")
            + html_paragraphs(*self.paragraph().split("\n"))
            + html_table(*self.table())
        )


def agent_config(run: Run, agent: str) -> dict[str, Any]:
    cards = {card["name"]: card for card in run.manifest["agents"]}
    return cards.get(agent, {}).get("config") or {}


def card(candidate: AgentSide, ablation: AgentSide) -> AblationCard:
    """One ablated variant against the candidate; the removed component is read from the manifests."""
    cmp = compare_sides(candidate, ablation)
    before, after = agent_config(candidate.run, candidate.agent), agent_config(ablation.run, ablation.agent)
    removed = {
        key: {"candidate": before.get(key), "ablation": after.get(key)}
        for key in sorted(before.keys() | after.keys())
        if before.get(key) != after.get(key)
    }
    slices = [
        SliceDelta(
            slice=row.slice,
            value=row.value,
            tasks=row.tasks,
            candidate=row.baseline["rate"],
            ablation=row.candidate["rate"],
            delta=row.candidate["rate"] - row.baseline["rate"],
        )
        for row in cmp.slices
    ]
    b, c = cmp.baseline.strict_tasks["rate"], cmp.candidate.strict_tasks["rate"]
    return AblationCard(
        candidate=candidate.agent,
        ablation=ablation.agent,
        removed=removed,
        overall_delta=None if b is None or c is None else c - b,
        regressions=cmp.regressions,
        improvements=cmp.improvements,
        slices=[s for s in slices if s.delta],
    )


def ablation_cards(
    run: Run, candidate: str, ablations: Sequence[str], ablation_run: Run | None = None
) -> list[AblationCard]:
    """A card per ablated variant (in ``ablation_run``, else in ``run``); the candidate's side is computed once."""
    side = agent_side(run, candidate, "--candidate")
    return [card(side, agent_side(ablation_run or run, name, "--ablation")) for name in ablations]


def ablation_card(candidate_run: Run, ablation_run: Run, candidate: str, ablation: str) -> AblationCard:
    """One ablated variant against the candidate."""
    return ablation_cards(candidate_run, candidate, [ablation], ablation_run)[0]
