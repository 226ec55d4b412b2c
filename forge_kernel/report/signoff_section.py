"""The sign-off regions of the release report: the first screen's sign-off state and the sign-off section at the
end, each between two markers and always the rendering of ``signoff.json`` and the roles the release needs.

A signature covers the page (and a notebook that has the first-screen state) with those regions emptied
(``covered``), so signing can rewrite them without breaking earlier signatures; ``forge verify`` checks that each
region shows exactly what ``signoff.json`` holds (``file_shows``), so the page cannot claim a signature that is not
there nor hide a rejection. In the notebook the regions sit inside its JSON strings, and are written escaped.
"""

from __future__ import annotations

import json
import re
from html import escape

from ..spec import printable
from ..widgets import part_font_style
from ._chain import PublicKey, chain_head, decision_text, standing
from ._html import Markup, Section, badge, para, table

SECTION, STATE = "signoff", "signoff-state"
START, END = "<!--forge:signoff-->", "<!--/forge:signoff-->"
STATE_START = "<!--forge:signoff-state-->"
REGION = re.compile(r"<!--forge:(signoff|signoff-state)-->.*?<!--/forge:\1-->", re.S)
NOTEBOOK_SUFFIX = ".ipynb"


def marked(name: str, body: str) -> str:
    return f"<!--forge:{name}-->{body}<!--/forge:{name}-->"


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
    return marked(SECTION, f'<div class="forge-signoff">{body}</div>')


def named(statement: dict) -> str:
    """``reviewer (role)``, inert and escaped: anyone with the folder can write them."""
    return escape(printable(f"{statement['reviewer']} ({statement['role']})"))


def render_state(signoff: dict, roles: list[str]) -> str:
    """The first screen's sign-off state (its markers included): who approved, who rejected and why (red whatever
    the gate), and which of ``roles`` still lack an approval. Withdrawn signatures no longer count."""
    decided = [e["statement"] for e in standing(dict(enumerate(signoff["signatures"], 1))).values()]
    approved = [s for s in decided if s["decision"] == "approve"]
    rejected = [s for s in decided if s["decision"] == "reject"]
    missing = [role for role in roles if role not in {s["role"] for s in approved}]
    lines = [
        f"{badge('REJECTED', 'red')} by {named(s)}: {escape(printable(s['comment'])) or 'no reason given'}"
        for s in rejected
    ]
    if approved:
        lines.append(f"Approved by {', '.join(map(named, approved))}.")
    if missing:
        lines.append(f"Still to approve: {escape(printable(', '.join(missing)))}.")
    if rejected:
        colour, head = "red", ""
        lines.append("A reviewer rejected this release: it must not ship while that stands, whatever the gate says.")
    elif not signoff["signatures"]:
        colour, head = "grey", badge("NOT SIGNED YET", "grey")
    elif missing:
        colour, head = "amber", badge("AWAITING SIGN-OFF", "amber")
    else:
        colour, head = "green", badge("APPROVED", "green")
    if head:
        lines = [f"{head} {lines[0] if lines else ''}", *lines[1:]]
    body = "".join(f"<p>{line}</p>" for line in lines)
    return marked(STATE, f'<div class="forge-verdict forge-signoff-state {colour}">{body}</div>')


def placeholder() -> Section:
    """The report's sign-off section as the notebook shows it: not signed (signing rewrites it)."""
    return Section(
        "signoff",
        "Sign-off",
        Markup(render({"signatures": []})),
        para(
            "Signatures are in signoff.json beside this report; forge verify checks them, and that this "
            "section and the sign-off line at the top show exactly those signatures."
        ),
    )


def state_placeholder() -> Markup:
    """The first screen's sign-off state before anyone signs (building the release writes the roles in)."""
    return Markup(render_state({"signatures": []}, []))


def with_part_font(region: str) -> str:
    """A region with the Chinese font its own text needs (a reviewer's comment may bring characters the page's font
    was not cut to), inside its markers."""
    end = region.rindex("<!--/forge:")
    return region[:end] + part_font_style(region) + region[end:]


def renderings(signoff: dict, roles: list[str]) -> dict[str, str]:
    return {SECTION: with_part_font(render(signoff)), STATE: with_part_font(render_state(signoff, roles))}


def quoted(html: str) -> str:
    """``html`` as it stands inside a JSON string of the notebook."""
    return json.dumps(html, ensure_ascii=False)[1:-1]


def unquoted(text: str) -> str | None:
    try:
        found = json.loads(f'"{text}"')
    except ValueError:
        return None
    return found if isinstance(found, str) else None


def live(name: str, text: str) -> bool:
    """Whether signing rewrites the file's regions: the page's always, a notebook's once it shows the first-screen
    state (one built before that keeps its sign-off section as it was signed)."""
    return not name.endswith(NOTEBOOK_SUFFIX) or STATE_START in text


def covered(name: str, data: bytes) -> bytes:
    """What a signature covers of a report file: the file with its regions emptied, where signing rewrites them."""
    text = data.decode("utf-8", errors="surrogateescape")
    if not live(name, text):
        return data
    return REGION.sub(lambda m: marked(m.group(1), ""), text).encode("utf-8", errors="surrogateescape")


def with_signoff(text: str, signoff: dict, roles: list[str], name: str = "release.html") -> str:
    """A report file (``name``: the page or the notebook) with its regions showing ``signoff``."""
    if not live(name, text):
        return text
    shown = renderings(signoff, roles)
    quote = quoted if name.endswith(NOTEBOOK_SUFFIX) else str
    return REGION.sub(lambda m: quote(shown[m.group(1)]), text)


def file_shows(text: str, signoff: dict, roles: list[str], name: str = "release.html") -> bool:
    """The file has one sign-off section and at most one first-screen state, each showing exactly ``signoff`` (a
    notebook from before the first-screen state is not rewritten, so not checked)."""
    if not live(name, text):
        return True
    shown = renderings(signoff, roles)
    unquote = unquoted if name.endswith(NOTEBOOK_SUFFIX) else str
    found = [(m.group(1), unquote(m.group(0))) for m in REGION.finditer(text)]
    names = [region for region, _ in found]
    return (
        names.count(SECTION) == 1 and names.count(STATE) <= 1 and all(html == shown[region] for region, html in found)
    )
