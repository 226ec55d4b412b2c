"""The replay player as static HTML: the widget's own module mounted through a small model shim, fully offline.

No kernel, no widget manager, nothing fetched: the state, the module's source and its style are inlined, and the
module is imported from a ``blob:`` URL, so the fragment works in an exported notebook, a report and from file://.
The fragment brings no font: the page that holds it does (``write_player_page``, release.html), cut to the CJK
characters of the whole page.
"""

from __future__ import annotations

import json
import uuid
from html import escape
from pathlib import Path
from typing import Any

from ..spec import SYNTHETIC_BANNER
from ._fonts import page_font_face
from ._frontend import BUNDLE, CSS, ESM, compact_of, player_state

SHIM = BUNDLE / "static.js"
MODULE_ID = "mf-player-module"
"""The element of a page's one copy of the player's module (``player_module``)."""


def _in_script(text: str) -> str:
    """JSON that can sit inside a <script> element."""
    return text.replace("<", "\\u003c")  # "<" occurs only inside JSON strings, where the escape means the same


def _script_json(trial: Any, other: Any, module: bool) -> str:
    """The state and (``module``) the module's source as JSON that can sit inside a <script> element."""
    state = {key: "null" if value is None else value.decode() for key, value in player_state(trial, other).items()}
    esm = f',"esm":{json.dumps(ESM, ensure_ascii=False)}' if module else ""
    return _in_script(f'{{"state":{{"trajectory":{state["trajectory"]},"other":{state["other"]}}}{esm}}}')


def player_module() -> str:
    """The player's module and style, once for a page of many players (each made with ``player_html(...,
    module=False)``)."""
    return (
        f'<style>{CSS}</style>\n<script type="application/json" id="{MODULE_ID}">'
        f"{_in_script(json.dumps(ESM, ensure_ascii=False))}</script>\n"
    )


def player_html(trial: Any, other: Any = None, module: bool = True) -> str:
    """A self-contained HTML fragment that plays ``trial`` (and ``other`` beside it): Trials or compact forms.
    Without ``module`` it carries only the trial's state and needs the page to hold ``player_module()`` once."""
    uid = f"mf-{uuid.uuid4().hex[:12]}"
    return (
        f'<div class="mf-static" id="{uid}"><noscript>{escape(SYNTHETIC_BANNER)} The replay player needs '
        f"JavaScript.</noscript></div>\n{f'<style>{CSS}</style>' if module else ''}\n"
        f'<script type="application/json" id="{uid}-data">{_script_json(trial, other, module)}</script>\n'
        f'<script type="module">const MF_ID = "{uid}";\n{SHIM.read_text(encoding="utf-8")}</script>\n'
    )


def write_player_page(path: str | Path, trial: Any, other: Any = None) -> Path:
    """A whole offline HTML page with the player and the Chinese font cut to the characters it shows; returns its
    path."""
    compact = compact_of(trial)
    title = f"{compact.task_id} · {compact.agent} trial {compact.trial} · replay (synthetic data)"
    path, body = Path(path), player_html(compact, other)
    path.write_text(
        f'<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{escape(title)}</title>\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<style>{page_font_face(title + body)}body {{ margin: 16px; background: #fff; }}</style>\n</head>\n<body>\n"
        f"{body}</body>\n</html>\n",
        encoding="utf-8",
    )
    return path
