"""release.html in headless Chromium inside a network namespace with only loopback (``unshare -n``): nothing can
leave the machine, so any request the page makes fails. No failed request, no console error, every chart visible,
and every highlighted trajectory steps in its embedded player with its state diff changing: each unstable task's
failed trial beside a passing one, and the candidate's other failed trials; an argument's long value wraps beside its
key, never over it.

The browser runs in a child process (this file run as a script) inside the namespace; the test reads its findings
as JSON. Skipped, with the reason, only where a network namespace cannot be made outside CI.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest


def browser_settings():
    """This folder's conftest (Chromium's path and flags, where screenshots go), loaded by path: it also runs as a
    script."""
    spec = importlib.util.spec_from_file_location("browser_settings", Path(__file__).with_name("conftest.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


SETTINGS = browser_settings()
ROOT = Path(__file__).resolve().parents[2]
TASKS = ["SC-EXM-CORONARY-CTA", "SC-EXM-HEAD-CT", "SC-OPS-ABPM", "SC-DEV-PIV"]
"""flaky-simulator is unstable on each at 3 trials (its forgetting is seeded by task and trial), and fails a safety
check in a second trial of SC-EXM-CORONARY-CTA."""


def namespace_reason() -> str | None:
    """Why a loopback-only network namespace cannot be made here (None: it can)."""
    if not shutil.which("unshare"):
        return "no unshare (util-linux)"
    probe = subprocess.run(["unshare", "-n", "sh", "-c", "ip link set lo up"], capture_output=True, text=True)
    return None if probe.returncode == 0 else f"unshare -n failed: {probe.stderr.strip()}"


@pytest.fixture(scope="module")
def flaky_release(tmp_path_factory) -> Path:
    """A small red release: flaky-simulator against baseline-v1 on a few bundled tasks."""
    from forge_kernel.report.build import build_release

    folder = tmp_path_factory.mktemp("releases")
    suites = [str(next(ROOT.glob(f"task_packages/*/{t}"))) for t in TASKS]
    (folder / "flaky.yaml").write_text(
        json.dumps(
            {
                "release": "flaky",
                "baseline": "baseline-v1",
                "candidate": "flaky-simulator",
                "suites": suites,
                "trials": 3,
            }
        )
    )
    built = build_release(folder / "flaky.yaml", progress=False, say=lambda line: None)
    assert not built.green and built.values["players"], built.values
    return built.html


def test_the_release_page_works_with_no_network_at_all(flaky_release):
    reason = namespace_reason()
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the offline browser test: {reason}")
        pytest.skip(reason)
    script = f"ip link set lo up && exec {sys.executable} {Path(__file__)} {flaky_release} {SETTINGS.ARTEFACTS}"
    done = subprocess.run(["unshare", "-n", "sh", "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["failed_requests"] == [] and seen["console_errors"] == []
    assert seen["charts"] and all(c["visible"] and c["width"] > 100 for c in seen["charts"]), seen["charts"]
    assert seen["first_screen"].startswith("SYNTHETIC DATA") and "GATE RED" in seen["first_screen"]
    assert len(seen["players"]) == len(json_values(flaky_release)["players"]) > 0
    kinds = [p["kind"] for p in seen["players"]]
    assert kinds.count("unstable") == len(TASKS) and "safety failure" in kinds, kinds  # pairs, then failed trials
    for player in seen["players"]:
        assert "SYNTHETIC DATA" in player["banner"] and player["banner_shown"], player  # each player its own
        assert player["positions"][0] != player["positions"][-1], player
        assert player["diff_changed"], player
        assert player["side_by_side"] == ("which passed" in player["heading"]), player
    assert all(p["side_by_side"] for p in seen["players"] if p["kind"] == "unstable")
    (key, value) = seen["long_argument"]  # the finish call's summary: key left of its value, the value wrapped
    assert key["right"] <= value["left"] and key["lines"] == 1 and value["lines"] > 1, seen["long_argument"]
    for shot in seen["shots"]:
        assert Path(shot).stat().st_size > 1_000


REJECTION = "the blood-pressure task is unstable on retry (synthetic review)"


def test_a_rejection_opens_the_page_in_red_with_who_why_and_the_roles_still_to_approve(
    flaky_release, browser, tmp_path, monkeypatch
):
    """Signed in a copy of the release folder (cp -r); the same signatures with the page's rewriting on signing
    removed leave the first screen without the rejection, which this check sees."""
    from forge_kernel.report import signoff as signing

    seen = {}
    for variant in ("signed", "not-rewritten"):
        folder = tmp_path / variant / "flaky"
        folder.parent.mkdir()
        subprocess.run(["cp", "-r", str(flaky_release.parent), str(folder)], check=True)
        with monkeypatch.context() as patch:
            if variant == "not-rewritten":
                patch.setattr(signing, "show_signoff", lambda folder, signoff: None)  # the mechanism, removed
            for name, role, decision, comment in (
                ("ada", "engineer", "approve", "read the gates"),
                ("wen", "clinician", "reject", REJECTION),
            ):
                signing.keygen(name, tmp_path / variant / name)
                signing.sign(folder, name, role, tmp_path / variant / name, decision, comment)
        seen[variant] = first_screen(browser, folder / "release.html", f"release-{variant}-rejection-first-screen")
    assert rejection_shown(seen["signed"]) == [], seen["signed"]
    assert rejection_shown(seen["not-rewritten"]), seen["not-rewritten"]
    assert browser.errors == [] and seen["signed"]["tried"] == []


def rejection_shown(seen: dict) -> list[str]:
    """What the first screen lacks of a rejection: in view without scrolling, red, who and why, who approved, the
    role still to approve, and the gate's own result beside it."""
    expected = [
        f"REJECTED by wen (clinician): {REJECTION}",
        "Approved by ada (engineer).",
        "Still to approve: clinician.",
    ]
    lacks = [line for line in expected if line not in seen["state"]]
    if not seen["state_in_view"]:
        lacks.append("the sign-off state is below the first screen")
    if seen["background"] != "rgb(254, 226, 226)":
        lacks.append(f"not red: {seen['background']}")
    if not (seen["gate_in_view"] and seen["gate"].startswith("GATE RED")):
        lacks.append(f"the gate's result is not beside it: {seen['gate'][:40]!r}")
    return lacks


def first_screen(browser, html: Path, shot_name: str) -> dict:
    """What a laptop's first screen of the page shows (1280 x 800, not scrolled): the sign-off state and the gate."""
    page, tried = browser.page(), []

    def only_files(route):  # the page's own file and nothing else
        if route.request.url.startswith("file:"):
            return route.continue_()
        tried.append(route.request.url)
        return route.abort()

    page.route("**/*", only_files)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(html.as_uri(), wait_until="load")
    page.wait_for_timeout(300)

    def in_view(locator) -> bool:
        box = locator.bounding_box()
        return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 800

    state = page.locator(".forge-signoff-state").first
    gate = page.locator(".forge-verdict:not(.forge-signoff-state) .badge").first
    seen = {
        "state": re.sub(r"\s+", " ", state.inner_text()),
        "state_in_view": in_view(state),
        "background": state.evaluate("e => getComputedStyle(e).backgroundColor"),
        "gate": gate.inner_text(),
        "gate_in_view": in_view(gate),
        "shot": str(browser.shot(page, shot_name)),
        "tried": tried,
    }
    page.close()
    return seen


def json_values(html: Path) -> dict:
    from forge_kernel.report.release import recorded

    return recorded(json.loads((html.parent / "release.ipynb").read_text(encoding="utf-8")))


def inspect(page_path: str, shots: str) -> dict:
    """Open the page from file:// and record what a reader would meet (runs inside the namespace)."""
    from playwright.sync_api import sync_playwright

    found = {"failed_requests": [], "console_errors": [], "charts": [], "players": [], "shots": []}
    Path(shots).mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=shutil.which(SETTINGS.CHROMIUM) or SETTINGS.CHROMIUM,
            args=SETTINGS.FLAGS,
            headless=True,
            env=SETTINGS.no_cjk_fonts(Path(tempfile.mkdtemp(prefix="fontconfig-"))),
        )
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("requestfailed", lambda r: found["failed_requests"].append(r.url))
        page.on("console", lambda m: found["console_errors"].append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda exc: found["console_errors"].append(str(exc)))
        page.goto(Path(page_path).as_uri(), wait_until="load")
        page.wait_for_timeout(500)
        found["first_screen"] = page.locator("#release").inner_text()[:600]
        found["shots"].append(shot(page, shots, "release-first-screen"))
        for img in page.locator("img.forge-chart").all():
            img.scroll_into_view_if_needed()
            width = img.evaluate("i => i.complete ? i.naturalWidth : 0")
            found["charts"].append({"alt": img.get_attribute("alt"), "visible": img.is_visible(), "width": width})
        for i, box in enumerate(page.locator(".forge-player").all()):
            player = box.locator(".mf-player").first
            player.wait_for()
            player.scroll_into_view_if_needed()
            player.focus()
            page.keyboard.press("Home")
            diff = player.locator(".mf-col-diff").first
            positions, diffs = [player.locator(".mf-position").inner_text()], [diff.inner_text()]
            for _ in range(40):
                page.keyboard.press("ArrowRight")
                positions.append(player.locator(".mf-position").inner_text())
                diffs.append(diff.inner_text())
                if diffs[-1] != diffs[0]:
                    break
            found["players"].append(
                {
                    "task": box.get_attribute("data-task"),
                    "kind": box.get_attribute("data-kind"),
                    "heading": box.locator("h3").first.inner_text(),
                    "side_by_side": player.evaluate("p => p.classList.contains('mf-pair')"),
                    "positions": [positions[0], positions[-1]],
                    "banner": player.locator(".mf-banner").first.inner_text(),
                    "banner_shown": player.locator(".mf-banner").first.is_visible(),
                    "diff_changed": diffs[-1] != diffs[0],
                }
            )
            if i == 0:
                found["shots"].append(shot(box, shots, "release-unstable-pair-player"))
                page.keyboard.press("End")  # the finish call, whose summary is the longest argument
                found["long_argument"] = argument_boxes(player.locator(".mf-args").first)
                found["shots"].append(shot(player.locator(".mf-col").first, shots, "release-long-argument"))
            if box.get_attribute("data-kind") == "safety failure" and not any(
                "failed-trial" in s for s in found["shots"]
            ):
                found["shots"].append(shot(box, shots, "release-failed-trial-player"))
        for name in ("gates", "ablations", "metrics"):
            section = page.locator(f"#{name}")
            if section.count():
                found["shots"].append(shot(section, shots, f"release-{name}"))
        found["shots"].append(shot(page, shots, "release-whole-page", full_page=True))
        browser.close()
    return found


def argument_boxes(table) -> list[dict]:
    """Where the key and the value of an argument table's longest value are drawn: the text's own extent (a
    Range), not the cells', so that a key overflowing its cell shows; and on how many lines each runs."""
    return table.evaluate(
        """t => {
          const rows = [...t.rows].sort((a, b) => b.cells[1].innerText.length - a.cells[1].innerText.length);
          return [...rows[0].cells].map((cell) => {
            const range = document.createRange();
            range.selectNodeContents(cell);
            const rects = [...range.getClientRects()], box = range.getBoundingClientRect();
            return { text: cell.innerText, left: box.left, right: box.right,
                     lines: new Set(rects.map((r) => Math.round(r.top))).size };
          });
        }"""
    )


def shot(where, folder: str, name: str, **options) -> str:
    path = Path(folder) / f"{name}.png"
    where.screenshot(path=path, **options)
    return str(path)


if __name__ == "__main__":
    print(json.dumps(inspect(sys.argv[1], sys.argv[2])))
