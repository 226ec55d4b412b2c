"""Chinese renders on a machine with no CJK font: this Chromium sees none (conftest's ``no_cjk_fonts``), so every CJK
glyph of release.html and of a Lab widget must come from the font the page or the widget carries. Chrome's DevTools
protocol names the fonts that drew a node's text (``CSS.getPlatformFontsForNode``); a font a page carries is marked
``isCustomFont``. With the page's font taken out, no CJK glyph comes from it: the empty boxes a reader would see.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

from forge_kernel.widgets._fonts import CJK

ROOT = Path(__file__).resolve().parents[2]
FILES = ("file:", "data:", "blob:")
MARK = """(scope) => {
  const zh = /[\\u3000-\\u303f\\u4e00-\\u9fff\\uff00-\\uffef]/;
  const texts = (el) => [...el.childNodes].filter((n) => n.nodeType === 3);
  const own = (el) => texts(el).map((n) => n.textContent).join("");
  const laidOut = (node) => { const r = document.createRange(); r.selectNodeContents(node); return r.getClientRects().length; };
  const found = [];
  for (const el of document.querySelectorAll(scope + " *")) {
    if (found.length < 8 && zh.test(own(el)) && el.checkVisibility() && texts(el).every(laidOut)) {
      el.setAttribute("data-zh-probe", String(found.length));
      found.push(own(el));
    }
  }
  return found;
}"""
"""Marks up to eight elements whose own text holds Chinese and is laid out (not in a closed part); returns those
texts."""


def drawn(page, scope: str = "body") -> list[dict]:
    """For each marked element: its text, its CJK characters and how many glyphs a carried font drew."""
    texts = page.evaluate(MARK, scope)
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
    found = []
    for i, text in enumerate(texts):
        node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": f'[data-zh-probe="{i}"]'})["nodeId"]
        fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
        carried = sum(f["glyphCount"] for f in fonts if f["isCustomFont"])
        found.append({"text": text[:60], "cjk": len(CJK.findall(text)), "carried": carried, "fonts": fonts})
    cdp.detach()
    return found


def file_page(browser):
    """A page that may open files (and data: / blob: URLs) and nothing else."""
    page = browser.page()
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(FILES) else route.abort())
    return page


@pytest.fixture(scope="module")
def release_page(tmp_path_factory) -> Path:
    """A small red release whose players and task titles are in Chinese."""
    from forge_kernel.report.build import build_release

    folder = tmp_path_factory.mktemp("release-fonts")
    suite = str(ROOT / "task_packages" / "superclue" / "SC-EXM-HEAD-CT")
    parameters = {"release": "fonts", "baseline": "baseline-v1", "candidate": "flaky-simulator", "trials": 2}
    (folder / "fonts.yaml").write_text(json.dumps({**parameters, "suites": [suite]}))
    return build_release(folder / "fonts.yaml", progress=False, say=lambda line: None).html


@pytest.fixture(scope="module")
def built(release_page, lab):
    """What the tests open, made before the browser starts (the release's notebook and the runs use an asyncio loop,
    which cannot run beside Playwright's)."""
    return release_page, lab


def test_release_html_draws_its_chinese_in_the_font_it_carries(built, browser):
    release_page, _ = built
    page = file_page(browser)
    page.goto(release_page.as_uri(), wait_until="load")
    page.locator(".mf-player").first.wait_for()
    page.evaluate("document.fonts.ready")
    probes = drawn(page)
    assert len(probes) >= 4, probes
    for probe in probes:  # every CJK character of the node, and only those, from the page's font
        assert probe["carried"] == probe["cjk"] > 0, probe
    page.locator(".mf-player").first.scroll_into_view_if_needed()
    browser.shot(page, "fonts-release-player")


def test_without_its_font_the_release_page_has_no_chinese_glyphs(built, browser, tmp_path):
    """The same page with its @font-face rules taken out: nothing on this machine draws the Chinese."""
    release_page, _ = built
    stripped = tmp_path / "release.html"
    stripped.write_text(re.sub(r"@font-face\{[^}]*\}", "", release_page.read_text(encoding="utf-8")), encoding="utf-8")
    page = file_page(browser)
    page.goto(stripped.as_uri(), wait_until="load")
    page.locator(".mf-player").first.wait_for()
    probes = drawn(page)
    assert probes and all(p["carried"] == 0 and p["cjk"] > 0 for p in probes), probes
    page.locator(".mf-player").first.scroll_into_view_if_needed()
    browser.shot(page, "fonts-release-player-without-font")


@pytest.fixture(scope="module")
def lab(lab_server, reference_run):
    cells = [
        f"from forge_kernel import open_run\nfrom forge_kernel.widgets import play\nrun = open_run({str(reference_run)!r})",
        "import pandas as pd\npd.DataFrame({'剂量': ['20 mg']}, index=['奥美拉唑'])",  # Lab's own output, no widget's
        "play(run.trial('SC-MED-GASTRIC-ULCER', 'unsafe-shortcut', 0))",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(notebook, lab_server.root / "fonts.ipynb")
    return lab_server


def test_a_lab_widget_draws_its_chinese_in_the_font_it_carries(built, browser):
    _, lab = built
    page = browser.page()
    lab.run_all(page, "fonts.ipynb", ".mf-player", workspace="fonts")
    page.evaluate("document.fonts.ready")
    probes = drawn(page, ".mf-player")
    assert len(probes) >= 2, probes
    table = drawn(page, ".jp-OutputArea-output table")  # the widget's font reaches the notebook's other outputs
    assert len(table) == 2, table
    for probe in probes + table:
        assert probe["carried"] == probe["cjk"] > 0, probe
    page.locator(".jp-OutputArea-output table").first.scroll_into_view_if_needed()
    browser.shot(page, "fonts-lab-notebook")
