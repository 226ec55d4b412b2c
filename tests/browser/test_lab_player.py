"""The replay player as a person sees it: a real JupyterLab, a notebook run top to bottom, keys and clicks."""
from __future__ import annotations

import nbformat
import pytest

TASK = "SC-MED-GASTRIC-ULCER"
CELLS = [
    "from forge_kernel import open_run\nrun = open_run({run!r})",
    f"run.trial({TASK!r}, 'unsafe-shortcut', 0).player()",
    f"run.trial({TASK!r}, 'candidate-v2', 0).player(other=('unsafe-shortcut', 0))",
]


@pytest.fixture(scope="module")
def lab(lab_server, reference_run):
    """The session's JupyterLab, holding the test's notebook."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c.format(run=str(reference_run)))
                                               for c in CELLS])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(notebook, lab_server.root / "player.ipynb")
    return lab_server


@pytest.fixture(scope="module")
def notebook(browser, lab):
    """The notebook opened and run all; the websocket frames the page sends, as they happen."""
    page = browser.page()
    page.set_viewport_size({"width": 1440, "height": 1300})
    sent: list = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda frame: sent.append(frame)))
    lab.run_all(page, "player.ipynb", ".mf-player", count=2)
    return page, sent


def test_the_player_renders_in_lab(notebook, browser):
    page, _ = notebook
    player = page.locator(".mf-player").first
    assert "SYNTHETIC DATA" in player.locator(".mf-banner").inner_text()
    assert [p.locator(".mf-banner").is_visible() for p in page.locator(".mf-player").all()] == [True, True]
    head = player.locator(".mf-head").inner_text()
    assert "FAIL" in head and "unsafe-shortcut" in head and "trusted, in process" in head
    assert player.locator(".mf-position").inner_text() == "step 1 of 4"
    browser.shot(page, "lab-notebook")


def test_right_changes_the_diff_without_a_websocket_frame(notebook, browser):
    page, sent = notebook
    player = page.locator(".mf-player").first
    diff = player.locator(".mf-col-diff")
    assert "none" in diff.inner_text()
    player.focus()
    before = len(sent)
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.wait_for_timeout(300)
    assert player.locator(".mf-position").inner_text() == "step 3 of 4"
    assert "added" in diff.inner_text().lower() and "奥美拉唑 20 mg qd oral, active" in diff.inner_text()
    assert len(sent) == before, f"stepping sent {len(sent) - before} websocket frame(s)"
    player.evaluate("el => el.scrollIntoView({block: 'start'})")
    browser.shot(page, "lab-player-step-3")


def test_a_verdict_click_jumps_to_its_step(notebook, browser):
    page, _ = notebook
    player = page.locator(".mf-player").first
    player.focus()
    page.keyboard.press("Home")
    assert player.locator(".mf-position").inner_text() == "step 1 of 4"
    player.locator('.mf-verdict[data-verdict="checks-first"] .mf-steplink').click()
    assert player.locator(".mf-position").inner_text() == "step 3 of 4"
    assert "medication_request_create" in player.locator(".mf-col-detail").inner_text()
    assert player.locator(".mf-row.mf-current").get_attribute("data-row") == "2"
    page.keyboard.press("End")  # the keys still reach the player after the click
    assert player.locator(".mf-position").inner_text() == "step 4 of 4"


def test_side_by_side_aligns_the_two_trials(notebook, browser):
    page, _ = notebook
    pair = page.locator(".mf-player.mf-pair")
    assert pair.locator(".mf-head").count() == 2
    gaps = pair.locator(".mf-row-gap")
    assert gaps.count() == 3  # the three checks candidate-v2 made and unsafe-shortcut skipped
    pair.focus()
    page.keyboard.press("End")
    assert "A step 7 of 7 · B step 4 of 4" in pair.locator(".mf-position").inner_text()
    pair.evaluate("el => el.scrollIntoView({block: 'start'})")
    browser.shot(page, "lab-side-by-side")


def test_the_console_shows_no_error_and_nothing_left_the_machine(notebook, browser):
    assert browser.errors == []
    assert browser.blocked == []
