"""The Chinese font the package ships: it covers every CJK character of the bundled packages, and a page's subset
holds exactly the characters the page shows (in the browser: tests/browser/test_chinese_fonts.py)."""

from __future__ import annotations

import base64
import io
import re
import sys
from pathlib import Path

from fontTools.ttLib import TTFont

from forge_kernel.widgets import _fonts
from forge_kernel.widgets._frontend import widget_css
from forge_kernel.widgets.designer import CSS as DESIGNER_CSS

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import make_cjk_font  # noqa: E402

DATA = re.compile(r"url\(data:font/woff2;base64,([A-Za-z0-9+/=]+)\)")


def covered(woff2: bytes) -> set[str]:
    return {chr(code) for code in TTFont(io.BytesIO(woff2)).getBestCmap()}


def faces(css: str) -> list[bytes]:
    return [base64.b64decode(m.group(1)) for m in DATA.finditer(css)]


def test_the_shipped_font_covers_every_character_of_the_bundled_packages():
    shipped = covered(_fonts.FONT.read_bytes())
    missing = make_cjk_font.bundled_characters() - shipped - set(make_cjk_font.SOURCE_LACKS)
    assert not missing, (
        f"forge_kernel/widgets/fonts/forge-cjk.woff2 lacks {len(missing)} CJK character(s) the packages use "
        f"({''.join(sorted(missing)[:20])}...): run python3 scripts/make_cjk_font.py (it needs fonts-wqy-microhei)"
    )
    assert make_cjk_font.gb2312_level1() <= shipped and len(make_cjk_font.gb2312_level1()) == 3755
    assert not any(c.isascii() for c in shipped)  # Latin falls through to the next family
    assert _fonts.FONT.stat().st_size < 320_000


def test_a_page_carries_exactly_the_characters_it_shows():
    rule = _fonts.page_font_face('<p>头颅CT平扫</p><script>{"x":"\\u51fa\\u8840"}</script> plain')
    assert f'font-family:"{_fonts.FAMILY}"' in rule and "unicode-range:U+2E80-2FDF" in rule
    [woff2] = faces(rule)
    assert covered(woff2) == set("头颅平扫出血")  # JSON escapes count: a player's state is JSON
    assert len(woff2) < 8_000
    assert _fonts.page_font_face("no Chinese here") == ""


def test_each_live_widget_carries_the_whole_font():
    for css in (widget_css("player.css"), widget_css("failures.css"), DESIGNER_CSS):
        [woff2] = faces(css)
        assert woff2 == _fonts.FONT.read_bytes()
        assert css.index("@font-face") < css.index(f'font-family:"{_fonts.FAMILY}",')  # declared, then listed first


def test_a_chart_image_carries_its_own_characters():
    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="9"><text>肺炎</text></svg>'
    fonted = _fonts.svg_with_font(svg)
    assert fonted.startswith('<svg xmlns="http://www.w3.org/2000/svg" width="9"><defs><style>@font-face')
    assert covered(faces(fonted)[0]) == set("肺炎")
    assert _fonts.svg_with_font("<svg><text>lung</text></svg>") == "<svg><text>lung</text></svg>"


def test_a_part_written_later_adds_only_its_own_characters():
    style = _fonts.part_font_style("<td>同意发布</td>")
    assert "unicode-range:U+53D1, U+540C, U+5E03, U+610F" in style
    assert _fonts.part_font_style("<td>approve</td>") == ""


def test_a_package_bringing_a_character_the_font_lacks_is_caught(tmp_path):
    package = tmp_path / "task_packages" / "demo" / "X-1" / "package.yaml"
    package.parent.mkdir(parents=True)
    package.write_text("title: 龘\n", encoding="utf-8")  # U+9F98: in no bundled package, nor in GB2312 level 1
    assert make_cjk_font.bundled_characters(tmp_path) - covered(_fonts.FONT.read_bytes()) == {"龘"}


def test_a_subset_is_the_same_bytes_in_another_process():
    """forge verify renders the sign-off region again (its font included) and compares it with the page's."""
    import subprocess

    code = "from forge_kernel.widgets._fonts import part_font_style; print(part_font_style('同意发布'), end='')"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert other == _fonts.part_font_style("同意发布") != ""
