"""What the player's browser side receives: its module and style, and the state a trial (or two) gives it."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..spec.compact import CompactTrajectory
from ..spec.errors import SpecError

HERE = Path(__file__).parent
ESM = HERE / "player.js"
"""The front-end module (anywidget's ``render``), shared by the live widget and the static page."""
CSS = HERE / "player.css"


def compact_of(trial: Any) -> CompactTrajectory:
    """A Trial's compact form (a compact trajectory is taken as it is)."""
    if isinstance(trial, CompactTrajectory):
        return trial
    if not hasattr(trial, "compact"):
        raise TypeError(f"expected a Trial (run.trial(...)) or a CompactTrajectory, not {type(trial).__name__}")
    return trial.compact()


def payload(compact: CompactTrajectory) -> bytes:
    """The compact trajectory as JSON (UTF-8); the seed as text, since a JavaScript number holds only 53 bits."""
    return b'{"seed":"%d",' % compact.seed + compact.model_dump_json(exclude={"seed"}).encode()[1:]


def player_state(trial: Any, other: Any = None) -> dict[str, bytes | None]:
    """The player's synced state, as JSON: ``trajectory`` and ``other`` (a second trial of the same task, or None)."""
    first = compact_of(trial)
    second = None if other is None else compact_of(other)
    if second is not None:
        where = f"run {second.run_id}"
        if second.task_id != first.task_id:
            raise SpecError(where, "other", f"a trial of {second.task_id}; side by side needs {first.task_id}")
        if (second.run_id, second.agent, second.trial) == (first.run_id, first.agent, first.trial):
            raise SpecError(where, "other", f"{first.agent} trial {first.trial} beside itself")
    return {"trajectory": payload(first), "other": None if second is None else payload(second)}
