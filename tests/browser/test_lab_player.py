"""The replay player as a person sees it: a real JupyterLab, a notebook run top to bottom, keys and clicks; an llm
trial's model turns between the calls they led to."""

from __future__ import annotations

import nbformat
import pytest

from forge_kernel.store import open_run

TASK = "SC-MED-GASTRIC-ULCER"
CELLS = [
    "from forge_kernel import open_run\nfrom forge_kernel.widgets import play\nrun = open_run({run!r})",
    f"play(run.trial({TASK!r}, 'unsafe-shortcut', 0))",
    f"play(run.trial({TASK!r}, 'candidate-v2', 0), other=('unsafe-shortcut', 0))",
    f"llm = open_run({{llm!r}})\nplay(llm.trial({TASK!r}, 'narrated', 0))",
]


@pytest.fixture(scope="module")
def lab(lab_server, reference_run, llm_run):
    """The session's JupyterLab, holding the test's notebook."""
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(c.format(run=str(reference_run), llm=str(llm_run))) for c in CELLS]
    )
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
    lab.run_all(page, "player.ipynb", ".mf-player", count=3)
    return page, sent


def test_the_player_renders_in_lab(notebook, browser):
    page, _ = notebook
    player = page.locator(".mf-player").first
    assert "SYNTHETIC DATA" in player.locator(".mf-banner").inner_text()
    assert [p.locator(".mf-banner").is_visible() for p in page.locator(".mf-player").all()] == [True, True, True]
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


def test_the_pair_jumps_and_filters_by_letters_lab_leaves_to_it(notebook, browser):
    """C, V and W jump on both trials' rows without a websocket frame, and Lab's own letter shortcuts (C copies a
    cell, V pastes one) do not fire; a filter by verdict keeps the rows a failed verdict judged."""
    page, sent = notebook
    pair = page.locator(".mf-player.mf-pair")
    position = pair.locator(".mf-position")
    cells = page.locator(".jp-Notebook .jp-Cell").count()
    pair.focus()
    page.keyboard.press("Home")
    before = len(sent)
    page.keyboard.press("c")
    assert "A step 6 of 7 · B step 3 of 4" in position.inner_text()  # the order both wrote
    page.keyboard.press("v")
    assert "A step 7 of 7 · B step 4 of 4" in position.inner_text()  # the finish calls: the answer verdicts
    page.keyboard.press("Shift+W")
    assert "A step 6 of 7 · B step 3 of 4" in position.inner_text()
    page.wait_for_timeout(300)
    assert len(sent) == before and page.locator(".jp-Notebook .jp-Cell").count() == cells
    pair.locator(".mf-filter-verdict").select_option("failed")
    assert pair.locator(".mf-showing").inner_text() == "showing 2 of 7 rows"  # B's checks-first and events
    assert pair.locator(".mf-row").count() == 2
    pair.evaluate("el => el.scrollIntoView({block: 'start'})")
    browser.shot(page, "lab-side-by-side-filtered")
    pair.locator(".mf-clear").click()
    assert pair.locator(".mf-showing").inner_text() == "showing all 7 rows"


def test_an_llm_trial_shows_its_model_turns_as_the_agents_own_account(notebook, browser, llm_run):
    page, sent = notebook
    with open_run(llm_run) as run:
        trial = run.trial(TASK, "narrated", 0)
    player = page.locator(".mf-player").nth(2)
    head = player.locator(".mf-head").inner_text()
    assert f"model (reported by the agent): {len(trial.turns)} turns · 27,900 in / 540 out / 8,192 cached" in head
    assert f"cost ${trial.cost:.4f}" in head
    assert player.locator(".mf-chip-model").count() == 7  # every call was led by a turn
    detail = player.locator(".mf-col-detail")
    first, second = detail.locator(".mf-turn").all()
    assert "Before this call, the model said" in detail.inner_text() and "reported by the agent" in first.inner_text()
    said = first.inner_text()
    assert "Plan: confirm the patient" in said and "more characters (in the run store)" in said
    assert "never reached the tools" in first.locator(".mf-asked").inner_text()
    assert "step 1 →" in second.locator(".mf-asked").inner_text()
    player.evaluate("el => el.scrollIntoView({block: 'start'})")
    browser.shot(page, "lab-player-llm-step-1")
    player.focus()
    before = len(sent)
    page.keyboard.press("End")
    assert player.locator(".mf-position").inner_text() == "step 7 of 7" and len(sent) == before
    assert "After this call, the model said" in detail.inner_text()
    assert "已开具奥美拉唑 20 mg qd 口服" in detail.locator(".mf-turn").last.inner_text()  # the answer, a tree
    detail.locator(".mf-turn .mf-steplink").first.click()  # the call a turn asked for opens its step
    assert player.locator(".mf-position").inner_text() == "step 7 of 7"
    page.keyboard.press("End")
    player.evaluate("el => el.scrollIntoView({block: 'start'})")
    browser.shot(page, "lab-player-llm-end")


def test_the_console_shows_no_error_and_nothing_left_the_machine(notebook, browser):
    assert browser.errors == []
    assert browser.blocked == []
