"""What the widgets' browser side receives: each module and style sheet behind the shared part, and the state a
trial (or two) gives the player."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..spec import CompactTrajectory, SpecError
from ._fonts import shipped_font_face, theme_fonts

HERE = Path(__file__).parent
BUNDLE = HERE / "bundle"
"""The built modules and style sheets: esbuild bundles them from frontend/src/ (``npm run build`` there); they are
committed, so that installing the package needs no Node (tests/widgets/test_frontend.py checks they are what the sources
build)."""


def bundled(name: str) -> str:
    """A built module or style sheet (``player.js``, ``failures.css``, ...) as the browser receives it: one ES module
    or one sheet, with what every widget shares (``common.js``: h() and the other helpers; ``common.css``: the
    variables, the synthetic-data banner, the title line and the buttons) imported into it."""
    return (BUNDLE / name).read_text(encoding="utf-8")


def widget_css(name: str) -> str:
    """A widget's style sheet as a live widget sends it: the shipped Chinese font's ``@font-face`` (the whole font, ~360
    KB in base64 with each widget) before the built sheet, so that Lab renders zh on a machine with no CJK font, and
    the font first in the notebook's own lists (a DataFrame's zh columns in the same notebook render too)."""
    return shipped_font_face() + theme_fonts(".jp-Notebook") + bundled(name)


ESM = bundled("player.js")
"""The player's module (anywidget's ``render``), shared by the live widget and the static page."""
CSS = bundled("player.css")


def checked(trial: Any) -> Any:
    """A Trial or a CompactTrajectory, as it is; anything else is a TypeError."""
    if not isinstance(trial, CompactTrajectory) and not hasattr(trial, "compact_json"):
        raise TypeError(f"expected a Trial (run.trial(...)) or a CompactTrajectory, not {type(trial).__name__}")
    return trial


def compact_of(trial: Any) -> CompactTrajectory:
    """A Trial's compact form (a compact trajectory is taken as it is)."""
    trial = checked(trial)
    return trial if isinstance(trial, CompactTrajectory) else trial.compact()


def payload(trial: Any) -> bytes:
    """A Trial's (or a compact trajectory's) compact form as JSON (UTF-8); the seed as text, since a JavaScript number
    holds only 53 bits. A Trial's steps go as its store holds them (``Trial.compact_json``), not decoded."""
    text = (
        trial.model_dump_json(exclude={"seed"})
        if isinstance(trial, CompactTrajectory)
        else trial.compact_json(frozenset({"seed"}))
    )
    return b'{"seed":"%d",' % trial.seed + text.encode()[1:]


def identity(trial: Any) -> tuple[str, str, str, int]:
    """(run id, task id, agent, trial index) of a Trial or a compact trajectory."""
    run_id = trial.run_id if isinstance(trial, CompactTrajectory) else trial.run.run_id
    return run_id, trial.task_id, trial.agent, trial.trial


def player_state(trial: Any, other: Any = None) -> dict[str, bytes | None]:
    """The player's synced state, as JSON: ``trajectory`` and ``other`` (a second trial of the same task, or None)."""
    first = checked(trial)
    second = None if other is None else checked(other)
    if second is not None:
        (run_a, task_a, agent_a, trial_a), (run_b, task_b, agent_b, trial_b) = identity(first), identity(second)
        where = f"run {run_b}"
        if task_b != task_a:
            raise SpecError(where, "other", f"a trial of {task_b}; side by side needs {task_a}")
        if (run_b, agent_b, trial_b) == (run_a, agent_a, trial_a):
            raise SpecError(where, "other", f"{agent_a} trial {trial_a} beside itself")
    return {"trajectory": payload(first), "other": None if second is None else payload(second)}
