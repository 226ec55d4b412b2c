"""The widgets' front end. Its sources (frontend/src/: ES modules with JSDoc types, and style sheets) are bundled by
esbuild into forge_kernel/widgets/bundle/, which the package ships and the widgets load. Here: the committed bundle is
byte for byte what the sources build, the trial's types are what its JSON Schema gives and what the player receives,
the sources type-check, the unit tests of the pure logic pass (``node --test``), every widget serves its bundle, and
no module or sheet repeats what the common part defines.

The tests that run Node need it and ``npm ci`` in frontend/ (``scripts/dev.py test`` runs it where npm is found, and
.ci/run installs Node where it is missing): outside CI they are skipped without them, in CI never."""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import jsonschema
import pytest

from forge_kernel import open_run
from forge_kernel.widgets import page
from forge_kernel.widgets._fonts import shipped_font_face, theme_fonts
from forge_kernel.widgets._frontend import BUNDLE, CSS, ESM, bundled, payload
from forge_kernel.widgets.dashboard import RunDashboard
from forge_kernel.widgets.designer import CSS as DESIGNER_CSS
from forge_kernel.widgets.failures import FailureTable
from forge_kernel.widgets.player import ReplayPlayer

ROOT = Path(__file__).resolve().parents[2]
FRONTEND = ROOT / "frontend"
SRC = FRONTEND / "src"
SCHEMA = ROOT / "forge_kernel" / "spec" / "schemas" / "compact-trajectory.schema.json"
TYPES = SRC / "generated" / "compact-trajectory.d.ts"
BUILT = {
    "player.js",
    "failures.js",
    "dashboard.js",
    "static.js",
    "player.css",
    "failures.css",
    "dashboard.css",
    "designer.css",
}
MODULES = ("player", "failures", "dashboard")
DEFINED = re.compile(
    r"^(?:export\s+)?(?:async\s+)?function\s+(\w+)|^(?:export\s+)?(?:const|let|var)\s+(\w+)\s*=", re.MULTILINE
)
CSS_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")


def source(name: str) -> str:
    return (SRC / name).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def node() -> str:
    """Node, with frontend/'s packages installed as package-lock.json pins them."""
    found = shutil.which("node")
    pinned = json.loads((FRONTEND / "package-lock.json").read_text(encoding="utf-8"))["packages"]
    installed = FRONTEND / "node_modules" / "esbuild" / "package.json"
    version = json.loads(installed.read_text(encoding="utf-8"))["version"] if installed.exists() else None
    problem = (
        "no node on PATH"
        if found is None
        else "frontend/node_modules is missing"
        if version is None
        else "frontend/node_modules is not what package-lock.json pins"
        if version != pinned["node_modules/esbuild"]["version"]
        else None
    )
    if problem:
        message = f"{problem}: the front-end tests need Node and `npm ci` in frontend/ (scripts/dev.py test runs it)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


def run_node(node: str, *args: str | Path) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [node, *map(str, args)], cwd=FRONTEND, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, f"node {' '.join(map(str, args))} failed:\n{done.stdout}\n{done.stderr}"
    return done


def test_the_committed_bundle_is_what_the_sources_build(node, tmp_path):
    run_node(node, "scripts/build.mjs", "--outdir", tmp_path)
    built = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    committed = {p.name: p.read_bytes() for p in BUNDLE.iterdir()}
    assert set(built) == BUILT and set(committed) == BUILT
    stale = sorted(name for name in BUILT if built[name] != committed[name])
    assert not stale, (
        f"forge_kernel/widgets/bundle/ is not what frontend/src/ builds ({', '.join(stale)}): "
        "`npm run build` in frontend/"
    )


def test_the_trial_types_are_generated_from_its_schema(node, tmp_path):
    run_node(node, "scripts/types.mjs", "--out", tmp_path / "types.d.ts")
    assert (tmp_path / "types.d.ts").read_text(encoding="utf-8") == TYPES.read_text(encoding="utf-8"), (
        "frontend/src/generated/compact-trajectory.d.ts is not what the schema gives: `npm run types` in frontend/"
    )


@pytest.mark.parametrize("config", ["tsconfig.json", "tsconfig.logic.json", "tsconfig.node.json"])
def test_the_sources_type_check(node, config):
    """tsc --noEmit, strict, over the JavaScript and its JSDoc types: the widgets' modules (with the DOM's types),
    their pure logic (src/logic/, without them: it cannot touch the DOM) and what runs in Node (the unit tests and the
    scripts)."""
    run_node(node, "node_modules/typescript/bin/tsc", "-p", config)


def test_the_unit_tests_of_the_pure_logic_pass(node):
    tests = sorted((FRONTEND / "test").glob("*.test.js"))
    done = run_node(node, "--test", "--test-reporter=tap", *tests)
    counts = dict(re.findall(r"^# (pass|fail) (\d+)$", done.stdout, re.MULTILINE))
    assert int(counts["pass"]) >= 20 and counts["fail"] == "0", done.stdout


def every_property_required(schema):
    """The schema with every property of every object required, as the player's types have it."""
    schema = copy.deepcopy(schema)
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "properties" in node:
                node["required"] = sorted(node["properties"])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return schema


def test_the_player_receives_every_field_its_types_promise(reference, llm_run):
    """The generated types make every field required (pydantic writes them all): each trial of a task, and one with
    model turns, as the player receives it, is valid under the schema with every property required."""
    validator = jsonschema.Draft202012Validator(every_property_required(json.loads(SCHEMA.read_text(encoding="utf-8"))))
    with open_run(llm_run) as narrated:
        trials = [reference.trial("SC-MED-GASTRIC-ULCER", agent, 0) for agent in ("unsafe-shortcut", "candidate-v2")]
        trials.append(narrated.trial("SC-MED-GASTRIC-ULCER", "narrated", 0))
        for trial in trials:
            data = json.loads(payload(trial))
            assert isinstance(data["seed"], str)  # the one field the wire types differently (src/types.d.ts's Trial)
            validator.validate({**data, "seed": int(data["seed"])})
            assert data["steps"] and (trial.agent != "narrated" or data["turns"])


def test_each_widget_serves_its_bundle():
    assert {p.name for p in BUNDLE.iterdir()} == BUILT
    font = shipped_font_face() + theme_fonts(".jp-Notebook")  # what each live widget's sheet starts with: test_fonts.py
    assert ReplayPlayer._esm == ESM == bundled("player.js")
    assert ReplayPlayer._css == font + CSS == font + bundled("player.css")
    assert (FailureTable._esm, FailureTable._css) == (bundled("failures.js"), font + bundled("failures.css"))
    assert RunDashboard._css == font + bundled("dashboard.css")  # its module is bundled with Vega: test_dashboard.py
    assert page.SHIM == BUNDLE / "static.js" and font + bundled("designer.css") == DESIGNER_CSS
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-data"]
    assert {"widgets/bundle/*.js", "widgets/bundle/*.css", "widgets/fonts/*"} <= set(data["forge_kernel"])  # shipped
    for name in BUILT:  # one line under the note: a tool that compares lines takes none for a copy of the sources
        note, code = bundled(name).split("\n", 1)
        assert "Built by frontend/scripts/build.mjs" in note and "\n" not in code.rstrip("\n"), name
    assert "@import" not in CSS and ".mf-banner{" in CSS  # common.css inlined in front of the player's own rules
    assert CSS.index(".mf-banner{") < CSS.index(".mf-task{")


def test_every_source_module_is_type_checked():
    for path in [*SRC.rglob("*.js"), *(FRONTEND / "test").glob("*.js")]:
        assert path.read_text(encoding="utf-8").startswith("// @ts-check\n"), path.relative_to(ROOT)


def js_names(text: str) -> set[str]:
    """The names a module defines at its top level."""
    return {a or b for a, b in DEFINED.findall(text)}


def js_copies(common: str, module: str) -> list[str]:
    """The common names a module defines again, at any depth: as a function or as a const / let / var bound to a
    function."""
    again = []
    for name in sorted(js_names(common)):
        redefined = (
            rf"\bfunction\s+{name}\s*\("
            rf"|\b(?:const|let|var)\s+{name}\s*=\s*(?:async\s*)?(?:function\b|\(|\w+\s*=>)"
        )
        if re.search(redefined, module):
            again.append(name)
    return again


def rules(sheet: str) -> list[tuple[list[str], frozenset[str]]]:
    """A style sheet's rules: their selectors (``:where(x)`` read as ``x``) and their declarations, comments and
    imports removed and white space folded."""
    sheet = re.sub(r"/\*.*?\*/|@import[^;]*;", "", sheet, flags=re.DOTALL)

    def fold(text: str) -> str:
        return " ".join(text.split())

    return [
        (
            [fold(re.sub(r":where\(([^()]*)\)", r"\1", s)) for s in head.split(",")],
            frozenset(fold(d) for d in body.split(";") if d.strip()),
        )
        for head, body in CSS_RULE.findall(sheet)
    ]


def css_copies(common: str, sheet: str) -> list[str]:
    """What a module's sheet styles again of the common sheet: a property of a common selector, or a whole common
    block (two or more declarations) under another selector."""
    shared = {(s, d.split(":")[0]) for selectors, body in rules(common) for s in selectors for d in body}
    blocks = {body for _, body in rules(common) if len(body) > 1}
    again = []
    for selectors, body in rules(sheet):
        again += [
            f"{s} {{ {d.split(':')[0]} }}" for s in selectors for d in sorted(body) if (s, d.split(":")[0]) in shared
        ]
        again += [f"{', '.join(selectors)}: a common block" for _ in [body] if body in blocks]
    return again


def test_no_module_defines_again_what_the_common_part_defines():
    common_js, common_css = source("common.js"), source("common.css")
    assert {"h", "banner", "sync", "listen"} <= js_names(common_js)
    for path in SRC.rglob("*.js"):
        if path.name != "common.js":
            assert js_copies(common_js, path.read_text(encoding="utf-8")) == [], path.name
    for name in MODULES:
        module, sheet = source(f"{name}.js"), source(f"{name}.css")
        assert css_copies(common_css, sheet) == [], name
        assert re.search(r'^import \{[^}]*\bbanner\b[^}]*\} from "\./common\.js";$', module, re.MULTILINE), name
        assert "banner(" in module, f"{name}.js opens without the synthetic-data banner"
        assert sheet.split("\n")[1] == '@import "./common.css";', f"{name}.css does not start from common.css"
    # the checks see a copy put back: h() in a module, the banner's style in a sheet
    h = common_js[common_js.index("export function h(") : common_js.index("\n}\n") + 3]
    assert js_copies(common_js, f"{source('dashboard.js')}\n{h}") == ["h"]
    nested = "function x() {\n  const sync = (model, key, value) => model.set(key, value);\n}"
    assert js_copies(common_js, nested) == ["sync"]
    assert js_copies(common_js, 'const banner = model.get("banner");') == []  # a value of that name is no copy
    start = common_css.index(".mf-banner {")
    banner = common_css[start : common_css.index("}", start) + 1]
    assert css_copies(common_css, f"{source('failures.css')}\n{banner.replace('.mf-banner', '.ff-banner')}") == [
        ".ff-banner: a common block"
    ]
    assert css_copies(common_css, f"{source('dashboard.css')}\n.fd-x, .mf-heading b {{ font-size: 15px; }}") == [
        ".mf-heading b { font-size }"
    ]


def test_every_variable_a_sheet_uses_is_defined():
    common = source("common.css")
    defined = set(re.findall(r"(--mf-[\w-]+)\s*:", common))
    for name in MODULES:
        sheet = source(f"{name}.css")
        used = set(re.findall(r"var\((--[\w-]+)", common + sheet)) - set(re.findall(r"--jp-[\w-]+", common))
        assert used <= defined | set(re.findall(r"(--mf-[\w-]+)\s*:", sheet)), name
