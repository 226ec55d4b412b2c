"""The Chinese font the package ships, so that zh text renders on a machine with no CJK font (a fresh Debian, a
container): the widgets carry it whole in their style sheet, and a static page (release.html, a player page) carries
a subset holding exactly the CJK characters it shows.

``fonts/forge-cjk.woff2`` is made by scripts/make_cjk_font.py from WenQuanYi Micro Hei (fonts/README.md: its licence):
GB2312 level 1, CJK punctuation and full-width forms, and every CJK character of the bundled packages.
"""

from __future__ import annotations

import base64
import io
import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path

FAMILY = "Forge CJK"
"""The family name the style sheets list first: only CJK characters are in the font (and in its unicode-range), so
Latin text falls through to the next family."""
FONT = Path(__file__).parent / "fonts" / "forge-cjk.woff2"
CHART_FONTS = (
    f"'{FAMILY}', system-ui, 'Noto Sans', 'Noto Sans CJK SC', 'WenQuanYi Micro Hei', 'DejaVu Sans', sans-serif"
)
"""The font list of the charts (Vega-Lite's ``font``): the shipped Chinese font first."""
CJK_RANGES = (
    (0x2E80, 0x2FDF),  # radicals
    (0x3000, 0x303F),  # CJK symbols and punctuation
    (0x3040, 0x30FF),  # kana
    (0x3100, 0x312F),  # bopomofo
    (0x3200, 0x33FF),  # enclosed letters, compatibility
    (0x3400, 0x4DBF),  # extension A
    (0x4E00, 0x9FFF),  # unified ideographs
    (0xF900, 0xFAFF),  # compatibility ideographs
    (0xFE30, 0xFE4F),  # vertical and compatibility forms
    (0xFF00, 0xFFEF),  # half-width and full-width forms
    (0x20000, 0x2FFFF),  # extensions B and later
)
CJK = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in CJK_RANGES) + "]")
UNICODE_RANGE = ", ".join(f"U+{lo:X}-{hi:X}" for lo, hi in CJK_RANGES)
THEME_FONTS = {
    "ui": "system-ui,-apple-system,blinkmacsystemfont,'Segoe UI',helvetica,arial,sans-serif",
    "content": "system-ui,-apple-system,blinkmacsystemfont,'Segoe UI',helvetica,arial,sans-serif",
    "code": "menlo,consolas,'DejaVu Sans Mono',monospace",
}
"""JupyterLab's theme font lists (its defaults), which the Chinese font is put in front of."""
JSON_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")


def cjk_characters(text: str) -> set[str]:
    """The CJK characters of ``text``, those written as JSON ``\\uXXXX`` escapes included."""
    unescaped = JSON_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)
    return set(CJK.findall(text)) | set(CJK.findall(unescaped))


@cache
def _shipped_sfnt() -> bytes:
    """The shipped font decompressed (1.5 s, once): a subset cut from it then takes 0.1 s."""
    from fontTools.ttLib import TTFont

    font, out = TTFont(FONT, recalcTimestamp=False), io.BytesIO()
    font.flavor = None
    font.save(out)
    return out.getvalue()


def subset(characters: Iterable[str], source: Path = FONT, font_number: int = 0) -> bytes:
    """``source`` (a TTF, a TTC's ``font_number``-th font, or a woff2) cut to ``characters``, as woff2."""
    from fontTools import subset as subsetter
    from fontTools.ttLib import TTFont

    options = subsetter.Options()
    options.flavor = "woff2"
    options.layout_features = ["*"]
    options.name_IDs = ["*"]
    options.notdef_outline = True
    options.drop_tables += ["FFTM"]  # FontForge's timestamps, which the subsetter cannot cut
    source_file = io.BytesIO(_shipped_sfnt()) if source == FONT else source
    font = TTFont(source_file, fontNumber=font_number, recalcTimestamp=False)
    cutter = subsetter.Subsetter(options)
    cutter.populate(unicodes={ord(c) for c in characters})
    cutter.subset(font)
    out = io.BytesIO()
    font.flavor = "woff2"
    font.save(out)
    return out.getvalue()


def font_face(woff2: bytes, unicode_range: str = UNICODE_RANGE) -> str:
    """An ``@font-face`` rule for ``FAMILY`` whose source is ``woff2`` as a ``data:`` URL (nothing fetched)."""
    data = base64.b64encode(woff2).decode("ascii")
    return (
        f'@font-face{{font-family:"{FAMILY}";src:url(data:font/woff2;base64,{data}) format("woff2");'
        f"unicode-range:{unicode_range};font-display:block}}\n"
    )


def theme_fonts(selector: str) -> str:
    """A rule putting ``FAMILY`` first in JupyterLab's theme font lists within ``selector``: what Lab's own outputs
    (a DataFrame, a Markdown cell) and nbconvert's page use. A font a person chose in Lab's settings still wins (Lab
    sets it on the element itself)."""
    lists = "".join(f'--jp-{part}-font-family:"{FAMILY}",{fonts};' for part, fonts in THEME_FONTS.items())
    return f"{selector}{{{lists}}}\n"


@cache
def shipped_font_face() -> str:
    """The rule for the whole shipped font (~270 KB woff2, ~360 KB in base64): what each widget's style sheet
    carries."""
    return font_face(FONT.read_bytes())


def page_font_face(text: str) -> str:
    """The rule for the shipped font cut to the CJK characters of ``text``, or "" when it has none."""
    characters = cjk_characters(text)
    return font_face(subset(characters)) if characters else ""


def part_font_style(text: str) -> str:
    """A ``<style>`` for a part of a page written after the page's font (the sign-off region): the shipped font cut to
    the part's CJK characters, its unicode-range exactly those, so it adds what the part brings and hides nothing of
    the page's font; "" when the part has none."""
    characters = sorted(cjk_characters(text))
    if not characters:
        return ""
    exact = ", ".join(f"U+{ord(c):X}" for c in characters)
    return f"<style>{font_face(subset(characters), exact)}</style>"


def svg_with_font(svg: str) -> str:
    """An SVG whose CJK text renders where it is shown as an image (which sees none of the page's fonts): the
    subset its text needs, in a ``<style>`` of its own."""
    rule = page_font_face(svg)
    if not rule:
        return svg
    end = svg.index(">", svg.index("<svg")) + 1
    return f"{svg[:end]}<defs><style>{rule}</style></defs>{svg[end:]}"
