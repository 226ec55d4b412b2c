"""Small HTML pieces of the release report: tables whose cells may carry a colour, badges, sections."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape


class Markup(str):
    """HTML that a table puts in as it is (anything else is escaped)."""


def cell(value: object) -> str:
    return value if isinstance(value, Markup) else escape(str(value))


def table(header: Sequence[str], rows: Sequence[Sequence[object]], colours: Sequence[str | None] = ()) -> Markup:
    """A table; ``colours[i]`` (red, green, amber or None) tints row i."""
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join(
        f'<tr class="{colours[i] if i < len(colours) and colours[i] else ""}">'
        + "".join(f"<td>{cell(c)}</td>" for c in row)
        + "</tr>"
        for i, row in enumerate(rows)
    )
    return Markup(f'<table class="forge-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>')


def badge(text: str, colour: str) -> Markup:
    return Markup(f'<span class="badge {colour}">{escape(text)}</span>')


def para(*texts: object) -> Markup:
    return Markup("".join(f"<p>{cell(t)}</p>" for t in texts))


class Section:
    """One part of the report, shown as HTML in the notebook (and so in the exported page); ``lead`` comes before
    its title (the first screen's banner)."""

    def __init__(self, anchor: str, title: str, *parts: str, lead: str = ""):
        self.anchor, self.title, self.parts, self.lead = anchor, title, parts, lead

    def _repr_html_(self) -> str:
        return (
            f'<section class="forge-release" id="{self.anchor}">{self.lead}<h2>{escape(self.title)}</h2>'
            + "".join(self.parts)
            + "</section>"
        )
