"""Reviewer decisions on failing verdicts, kept in a triage YAML file and applied to every later run.

A decision is keyed by task id, task version, verifier id and, optionally, agent (no agent: every agent). It
applies to any run that graded that task version, so it outlives the run it was made on, and stops applying
when the package's version changes. The file holds free-text comments; the ledger never copies them.

```yaml
decisions:
  - {task_id: SC-MED-GASTRIC-ULCER, task_version: 1.0.0, agent: unsafe-shortcut, verifier_id: checks-first,
     decision: confirmed, reviewer: dr-chen, comment: prescribes before the interaction check}
```
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Literal

from pydantic import Field

from ..spec import SpecError, Strict, parse_model, read_yaml

DecisionKind = Literal["confirmed", "wrong_gold", "fixed", "wont_fix"]
Key = tuple[str, str, str | None, str]
"""(task id, task version, agent or None for every agent, verifier id)."""


class Decision(Strict):
    """One reviewer's decision on one failing verifier of one task version."""

    task_id: str
    task_version: str
    agent: str | None = Field(None, description="Only this agent's failures; omitted: every agent's.")
    verifier_id: str
    decision: DecisionKind
    reviewer: str = Field(min_length=1)
    comment: str = Field(min_length=1)

    @property
    def key(self) -> Key:
        return self.task_id, self.task_version, self.agent, self.verifier_id


class TriageFile(Strict):
    """The triage file: a list of decisions, at most one per key."""

    decisions: list[Decision] = Field(default_factory=list)

    @cached_property
    def by_key(self) -> dict[Key, Decision]:
        return {d.key: d for d in self.decisions}

    def lookup(self, task_id: str, task_version: str, agent: str, verifier_id: str) -> Decision | None:
        """The decision for this agent's failure, else the one for every agent, else None."""
        return self.by_key.get((task_id, task_version, agent, verifier_id)) or self.by_key.get(
            (task_id, task_version, None, verifier_id)
        )


def load_triage(path: str | Path) -> TriageFile:
    """Read and check a triage file; a bad one is a SpecError naming the field."""
    path = Path(path)
    triage = parse_model(TriageFile, read_yaml(path), path)
    seen: dict[Key, int] = {}
    for i, decision in enumerate(triage.decisions):
        if decision.key in seen:
            raise SpecError(
                path, f"decisions.{i}", f"same task, version, agent and verifier as decisions.{seen[decision.key]}"
            )
        seen[decision.key] = i
    return triage
