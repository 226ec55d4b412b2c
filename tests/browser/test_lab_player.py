"""The replay player as a person sees it: a real JupyterLab, a notebook run top to bottom, keys and clicks."""
from __future__ import annotations

import os
import subprocess
import time
import urllib.request

import nbformat
import pytest

from forge_kernel.widgets.lab import free_port, lab_command, quiet_lab

TASK = "SC-MED-GASTRIC-ULCER"
CELLS = [
    "from forge_kernel import open_run\nrun = open_run({run!r})",
    f"run.trial({TASK!r}, 'unsafe-shortcut', 0).player()",
    f"run.trial({TASK!r}, 'candidate-v2', 0).player(other=('unsafe-shortcut', 0))",
]


@pytest.fixture(scope="module")
def lab(tmp_path_factory, reference_run):
    """JupyterLab on a free loopback port with a token, over a folder holding the test's notebook."""
    root = tmp_path_factory.mktemp("lab")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c.format(run=str(reference_run)))
                                               for c in CELLS])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(notebook, root / "player.ipynb")
    quiet_lab()
    port, token = free_port(18888), os.urandom(12).hex()
    home = {variable: str(root / f".{variable.lower()}") for variable in  # a Lab of its own: no saved layout
            ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "JUPYTERLAB_WORKSPACES_DIR",
             "JUPYTERLAB_SETTINGS_DIR")}
    server = subprocess.Popen(lab_command(root, port, token), env={**os.environ, **home},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    deadline = time.monotonic() + 60
    while True:
        try:
            opener.open(f"{base}/api/status?token={token}", timeout=2).read()
            break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                pytest.fail(f"JupyterLab did not start on {base} (exit {server.poll()})")
            time.sleep(0.3)
    try:
        yield f"{base}/lab/tree/player.ipynb?token={token}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()


@pytest.fixture(scope="module")
def notebook(browser, lab):
    """The notebook opened and run all; the websocket frames the page sends, as they happen."""
    page = browser.page()
    page.set_viewport_size({"width": 1440, "height": 1300})
    sent: list = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda frame: sent.append(frame)))
    page.goto(lab)
    page.get_by_text("| Idle").first.wait_for(timeout=60_000)
    page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current").click()  # fold the file browser away
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
    page.locator(".mf-player").nth(1).wait_for(timeout=60_000)
    page.get_by_text("| Idle").first.wait_for(timeout=30_000)
    page.wait_for_timeout(500)
    return page, sent


def test_the_player_renders_in_lab(notebook, browser):
    page, _ = notebook
    player = page.locator(".mf-player").first
    assert "SYNTHETIC DATA" in player.locator(".mf-banner").inner_text()
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
