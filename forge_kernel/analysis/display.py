"""How analysis results show themselves: as plain text (``str``, ``repr``, what the CLI prints) and as HTML (a
notebook's ``_repr_html_``; ``_repr_mimebundle_`` gives both, the text as the fallback), each headed by the
synthetic-data banner; and the tables both forms (and Markdown) use.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING

from ..spec import SYNTHETIC_BANNER

if TYPE_CHECKING:
    import pandas as pd


def markdown_lines(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """The lines of a Markdown table."""
    return [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def plain_table(frame: pd.DataFrame) -> str:
    """A frame of text and integer columns as ``frame.to_string(index=False)`` prints it (every column right-aligned
    to its widest cell, a space before a numeric column's name), in a fraction of pandas' time on long tables."""
    from pandas.api.types import is_numeric_dtype

    columns = [
        [(" " if is_numeric_dtype(frame[name]) else "") + str(name), *map(str, frame[name].tolist())]
        for name in frame.columns
    ]
    widths = [max(map(len, cells)) for cells in columns]
    return "\n".join(" ".join(cell.rjust(width) for cell, width in zip(row, widths)) for row in zip(*columns))


def html_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    head = "".join(f"<th>{escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def html_heading(text: str) -> str:
    return f"<h3>{escape(text)}</h3>"


def html_paragraphs(*texts: str) -> str:
    return "".join(f"<p>{escape(t)}</p>" for t in texts)


def seconds(x: float | None, missing: str = "—") -> str:
    """A time in seconds as a person reads it: milliseconds below a second; ``missing`` for None or NaN."""
    return missing if x is None or x != x else f"{x * 1000:.1f} ms" if x < 1 else f"{x:.2f} s"


def some_ids(ids: Sequence[int], most: int = 5) -> str:
    """Trial ids, the first ``most`` of them and how many more."""
    shown = ", ".join(map(str, ids[:most]))
    return shown + (f" … (+{len(ids) - most})" if len(ids) > most else "")


class Shown:
    """A result with a plain-text form (``text()``) and an HTML body (``html()``), each shown after the banner."""

    def text(self) -> str:
        raise NotImplementedError

    def html(self) -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        return f"{SYNTHETIC_BANNER}\n{self.text()}"

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        return f'<div class="forge-result"><p><b>{escape(SYNTHETIC_BANNER)}</b></p>{self.html()}</div>'

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, str]:
        return {"text/plain": str(self), "text/html": self._repr_html_()}
