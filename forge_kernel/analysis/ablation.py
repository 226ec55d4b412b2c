"""Ablation cards: what removing one component of a candidate costs, per slice and per task."""
from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from ..store import RunStore
from .comparison import compare


class SliceDelta(BaseModel):
    slice: str
    value: str
    tasks: int
    candidate: float
    ablation: float
    delta: float
    """Ablation minus candidate, in strict task pass rate (negative: the component helped)."""


class AblationCard(BaseModel):
    candidate: str
    ablation: str
    removed: dict[str, dict]
    """Configuration keys that differ: {key: {"candidate": value, "ablation": value}} (from the run manifests)."""
    overall_delta: float | None
    regressions: list[str]
    improvements: list[str]
    slices: list[SliceDelta]
    """The slices where removing the component changed the strict task pass rate."""


def agent_config(run_dir: Path, agent: str) -> dict | None:
    with RunStore.open(run_dir, readonly=True) as store:
        cards = {card["name"]: card for card in store.manifest()["agents"]}
    return cards.get(agent, {}).get("config")


def ablation_card(candidate_run: str | Path, ablation_run: str | Path, candidate: str, ablation: str) -> AblationCard:
    """Compare a candidate with one ablated variant; the removed component is read from the manifests."""
    candidate_run, ablation_run = Path(candidate_run), Path(ablation_run)
    cmp = compare(candidate_run, ablation_run, candidate, ablation)
    before, after = agent_config(candidate_run, candidate) or {}, agent_config(ablation_run, ablation) or {}
    removed = {key: {"candidate": before.get(key), "ablation": after.get(key)}
               for key in sorted(before.keys() | after.keys()) if before.get(key) != after.get(key)}
    slices = [SliceDelta(slice=row.slice, value=row.value, tasks=row.tasks, candidate=row.baseline["rate"],
                         ablation=row.candidate["rate"], delta=row.candidate["rate"] - row.baseline["rate"])
              for row in cmp.slices]
    b, c = cmp.baseline.strict_tasks["rate"], cmp.candidate.strict_tasks["rate"]
    return AblationCard(candidate=candidate, ablation=ablation, removed=removed,
                        overall_delta=None if b is None or c is None else c - b,
                        regressions=cmp.regressions, improvements=cmp.improvements,
                        slices=[s for s in slices if s.delta])
