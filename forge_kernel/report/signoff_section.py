"""The sign-off section of ``release.html``: a region between two markers, always the rendering of
``signoff.json``.

A signature covers the page with that region emptied (``without_signoff``), so signing can write the region
without breaking earlier signatures; ``forge verify`` checks that the region shows exactly what ``signoff.json``
holds, so the page cannot claim a signature that is not there.
"""

from __future__ import annotations

import re

from ..spec import printable
from ..widgets._fonts import part_font_style
from ._chain import PublicKey, chain_head, decision_text
from ._html import Markup, Section, para, table

START, END = "<!--forge:signoff-->", "<!--/forge:signoff-->"
REGION = re.compile(re.escape(START) + ".*?" + re.escape(END), re.S)


def render(signoff: dict) -> str:
    """The region for a sign-off file's signatures (its markers included): one numbered row each, a withdrawn one
    marked with the number of its withdrawal, and the chain's head."""
    signatures = signoff["signatures"]
    withdrawn = {s["statement"].get("withdraws"): n for n, s in enumerate(signatures, 1)}
    rows, colours = [], []
    for n, s in enumerate(signatures, 1):
        statement = s["statement"]
        rows.append(
            [
                printable(cell)
                for cell in (  # anyone with the folder can write these; escaped by table
                    n,
                    statement["reviewer"],
                    statement["role"],
                    decision_text(statement) + (f" (withdrawn by #{withdrawn[n]})" if n in withdrawn else ""),
                    statement["time"],
                    statement["comment"],
                    PublicKey(statement["reviewer"], s["key"]).fingerprint,
                    statement["manifest"][:19],
                )
            ]
        )
        colours.append(
            None if n in withdrawn else {"approve": "green", "reject": "red"}.get(statement["decision"], "amber")
        )
    body = (
        table(["#", "reviewer", "role", "decision", "time (UTC)", "comment", "key", "manifest"], rows, colours)
        + para(f"Chain: {chain_head(signatures)}")
        if rows
        else para(
            "Not signed yet: forge signoff RELEASE_DIR --reviewer NAME --role ROLE --key KEYFILE --decision "
            "approve|reject"
        )
    )
    return f'{START}<div class="forge-signoff">{body}</div>{END}'


def placeholder() -> Section:
    """The report's sign-off section as the notebook shows it: not signed (signing rewrites it in the HTML)."""
    return Section(
        "signoff",
        "Sign-off",
        Markup(render({"signatures": []})),
        para(
            "Signatures are in signoff.json beside this report; forge verify checks them, and that this "
            "section shows exactly those signatures."
        ),
    )


def regions(html: str) -> list[str]:
    return REGION.findall(html)


def without_signoff(html: bytes) -> bytes:
    """The page with its sign-off region emptied: what a signature covers."""
    return REGION.sub(START + END, html.decode("utf-8", errors="surrogateescape")).encode(
        "utf-8", errors="surrogateescape"
    )


def shown(signoff: dict) -> str:
    """The region as the page holds it: ``render(signoff)`` with the Chinese font its own text needs (a reviewer's
    comment may bring characters the page's font was not cut to)."""
    region = render(signoff)
    return region[: -len(END)] + part_font_style(region) + END


def with_signoff(html: str, signoff: dict) -> str:
    """The page with its sign-off region showing ``signoff``."""
    return REGION.sub(lambda _: shown(signoff), html, count=1)


def shows(html: str, signoff: dict) -> bool:
    """The page has one sign-off region, and it shows exactly ``signoff``'s signatures."""
    found = regions(html)
    return len(found) == 1 and found[0] == shown(signoff)
