"""Text from an agent or a package as a terminal shows it: every control character written out.

An agent's name, its output, a reviewer's comment or a slice value could hold a carriage return, a bell or an
escape sequence (OSC, CSI) that moves the cursor, rewrites a line forge printed or sets the terminal's title.
Shown through ``printable`` it is inert text: ``\\x1b]0;…\\x07`` instead of the sequence.
"""

from __future__ import annotations

import re

CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""C0 and C1 control characters, DEL, the line and paragraph separators, and the bidirectional overrides that
reorder what a terminal shows."""


def printable(text: object, keep: str = "") -> str:
    """``text`` with each control character written out as ``\\xNN`` (``\\uNNNN`` above 0xff), but those in
    ``keep`` (e.g. ``"\\n"`` for text of several lines)."""

    def written(match: re.Match) -> str:
        char = match.group()
        if char in keep:
            return char
        code = ord(char)
        return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"

    return CONTROL.sub(written, str(text))


def echo(text: object = "", err: bool = False) -> None:
    """Print a line of the ``forge`` command: whatever an agent or a package put in it shows as ``printable``
    text (line breaks kept: a table's rows)."""
    import click

    click.echo(printable(text, keep="\n"), err=err)
