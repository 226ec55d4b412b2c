"""The widgets' shared front end: every module and style sheet is served behind common.js / common.css, and no
module defines again what the common part defines (a copy would also break the module: one ES module cannot
declare a name twice; the browser tests load every assembled module)."""
from __future__ import annotations

import re

from forge_kernel.widgets._frontend import CSS, ESM, HERE, assembled
from forge_kernel.widgets.dashboard import RunDashboard
from forge_kernel.widgets.failures import FailureTable
from forge_kernel.widgets.player import ReplayPlayer

MODULES = ("player", "failures", "dashboard")
COMMON_JS = (HERE / "common.js").read_text(encoding="utf-8")
COMMON_CSS = (HERE / "common.css").read_text(encoding="utf-8")
DEFINED = re.compile(r"^(?:async\s+)?function\s+(\w+)|^(?:const|let|var)\s+(\w+)\s*=", re.M)
CSS_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")


def text(name: str) -> str:
    return (HERE / name).read_text(encoding="utf-8")


def js_names(source: str) -> set[str]:
    """The names a module defines at its top level."""
    return {a or b for a, b in DEFINED.findall(source)}


def js_copies(common: str, module: str) -> list[str]:
    """The common names a module defines again, at any depth: as a function or as a const / let / var bound to a
    function."""
    again = []
    for name in sorted(js_names(common)):
        redefined = (rf"\bfunction\s+{name}\s*\("
                     rf"|\b(?:const|let|var)\s+{name}\s*=\s*(?:async\s*)?(?:function\b|\(|\w+\s*=>)")
        if re.search(redefined, module):
            again.append(name)
    return again


def rules(sheet: str) -> list[tuple[list[str], frozenset[str]]]:
    """A style sheet's rules: their selectors (``:where(x)`` read as ``x``) and their declarations, comments removed
    and white space folded."""
    sheet = re.sub(r"/\*.*?\*/", "", sheet, flags=re.S)
    fold = lambda s: " ".join(s.split())  # noqa: E731
    return [([fold(re.sub(r":where\(([^()]*)\)", r"\1", s)) for s in head.split(",")],
             frozenset(fold(d) for d in body.split(";") if d.strip())) for head, body in CSS_RULE.findall(sheet)]


def css_copies(common: str, sheet: str) -> list[str]:
    """What a module's sheet styles again of the common sheet: a property of a common selector, or a whole common
    block (two or more declarations) under another selector."""
    shared = {(s, d.split(":")[0]) for selectors, body in rules(common) for s in selectors for d in body}
    blocks = {body for _, body in rules(common) if len(body) > 1}
    again = []
    for selectors, body in rules(sheet):
        again += [f"{s} {{ {d.split(':')[0]} }}" for s in selectors for d in sorted(body)
                  if (s, d.split(":")[0]) in shared]
        again += [f"{', '.join(selectors)}: a common block" for _ in [body] if body in blocks]
    return again


def test_each_widget_is_served_behind_the_common_part():
    for name in MODULES:
        assert assembled(f"{name}.js") == f"{COMMON_JS}\n{text(name + '.js')}"
        assert assembled(f"{name}.css") == f"{COMMON_CSS}\n{text(name + '.css')}"
    assert ReplayPlayer._esm == ESM == assembled("player.js") and ReplayPlayer._css == CSS == assembled("player.css")
    assert (FailureTable._esm, FailureTable._css) == (assembled("failures.js"), assembled("failures.css"))
    assert RunDashboard._css == assembled("dashboard.css")  # its module is bundled with Vega: test_dashboard.py


def test_no_module_defines_again_what_the_common_part_defines():
    assert {"h", "banner", "sync", "listen"} <= js_names(COMMON_JS)
    for name in MODULES:
        module, sheet = text(f"{name}.js"), text(f"{name}.css")
        assert js_copies(COMMON_JS, module) == [], name
        assert css_copies(COMMON_CSS, sheet) == [], name
        assert "banner(" in module, f"{name}.js opens without the synthetic-data banner"
    # the checks see a copy put back, the way they came before: h() in a module, the banner's style in a sheet
    h = COMMON_JS[COMMON_JS.index("function h("):COMMON_JS.index("\n}\n") + 3]
    assert js_copies(COMMON_JS, f"{text('dashboard.js')}\n{h}") == ["h"]
    nested = "function x() {\n  const sync = (model, key, value) => model.set(key, value);\n}"
    assert js_copies(COMMON_JS, nested) == ["sync"]
    assert js_copies(COMMON_JS, 'const banner = model.get("banner");') == []  # a value of that name is no copy
    banner = COMMON_CSS[COMMON_CSS.index(".mf-banner {"):COMMON_CSS.index("}", COMMON_CSS.index(".mf-banner {")) + 1]
    assert css_copies(COMMON_CSS, f"{text('failures.css')}\n{banner.replace('.mf-banner', '.ff-banner')}") == [
        ".ff-banner: a common block"]
    assert css_copies(COMMON_CSS, f"{text('dashboard.css')}\n.fd-x, .mf-heading b {{ font-size: 15px; }}") == [
        ".mf-heading b { font-size }"]


def test_every_variable_a_sheet_uses_is_defined():
    defined = set(re.findall(r"(--mf-[\w-]+)\s*:", COMMON_CSS))
    for name in MODULES:
        sheet = text(f"{name}.css")
        used = set(re.findall(r"var\((--[\w-]+)", COMMON_CSS + sheet)) - set(re.findall(r"--jp-[\w-]+", COMMON_CSS))
        assert used <= defined | set(re.findall(r"(--mf-[\w-]+)\s*:", sheet)), name
