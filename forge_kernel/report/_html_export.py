"""The executed release notebook as one self-contained HTML page: outputs only, nothing fetched.

nbconvert's lab template, with every block that loads a script from a CDN emptied (``templates/forge_release``);
the page is then checked: every script, style sheet, image, frame and CSS ``url()`` must be inline or ``data:``.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from ..widgets import page_font_face, theme_fonts
from .signoff_section import with_signoff

TEMPLATES = Path(__file__).parent / "templates"
SOURCES = {
    "script": "src",
    "link": "href",
    "img": "src",
    "iframe": "src",
    "source": "src",
    "video": "src",
    "audio": "src",
    "embed": "src",
    "object": "data",
    "track": "src",
    "input": "src",
}
CSS_URL = re.compile(r"""url\(\s*['"]?(?!data:|#)([^'")\s]+)|@import\s+['"]([^'"]+)""")


class References(HTMLParser):
    """Collects every address a page would load by itself."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._style = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        where = SOURCES.get(tag)
        if where and attrs.get(where) and not attrs[where].startswith("data:"):
            self.found.append(f"<{tag} {where}={attrs[where]}>")
        if attrs.get("style"):
            self.found += [m.group(1) or m.group(2) for m in CSS_URL.finditer(attrs["style"])]
        self._style = tag == "style"

    def handle_endtag(self, tag):
        self._style = False

    def handle_data(self, data):
        if self._style:
            self.found += [m.group(1) or m.group(2) for m in CSS_URL.finditer(data)]


def external_references(html: str) -> list[str]:
    """What in the page is not inline: every script src, link href, image, frame or CSS url that is not data:."""
    parser = References()
    parser.feed(html)
    return parser.found


def with_font(html: str) -> str:
    """The page with the shipped Chinese font cut to the CJK characters it shows, at the end of its head (after the
    theme, whose font lists it then extends)."""
    rule = page_font_face(html)
    if not rule:
        return html
    end = html.index("</head>")
    return f"{html[:end]}<style>{rule}{theme_fonts(':root')}</style>\n{html[end:]}"


def export_html(notebook: Path, out: Path, signoff: dict, roles: list[str]) -> Path:
    """Write the notebook's outputs to ``out`` with its sign-off regions showing ``signoff`` and the ``roles`` it
    needs, and the Chinese font its text needs; refuse a page that would fetch anything."""
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(
        template_name="forge_release",
        extra_template_basedirs=[str(TEMPLATES)],
        exclude_input=True,
        exclude_markdown=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
    )
    body, _ = exporter.from_filename(str(notebook))
    body = with_font(with_signoff(body, signoff, roles))
    outside = external_references(body)
    if outside:
        raise RuntimeError(f"{out}: the page would fetch {outside[0]} ({len(outside)} such reference(s))")
    out.write_text(body, encoding="utf-8")
    return out
