"""The workbench notebooks as a person sees them: each opened in the real JupyterLab and run all; the dashboard's
charts drawn, a cell click that filters the failure browser, a failure that opens the player, stepping with no
websocket frame, a verdict that jumps to its step, triage edited in the page; no console error, nothing off the
machine. Screenshots are kept as artefacts."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from forge_kernel.analysis import load_triage
from forge_kernel.widgets import sample_run

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
CHARTS = 4


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    """A sample run made beforehand, so that Run All only reads it."""
    folder = tmp_path_factory.mktemp("notebook-run") / "run"
    sample_run(folder, progress=False).close()
    return folder


@pytest.fixture(scope="module")
def lab(lab_server, run_dir):
    """The session's Lab holding 01, 02 and 04, pointed at the sample run."""
    for name in ("01_quickstart", "02_replay_failures", "04_compare_runs"):
        notebook = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
        (cell,) = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
        cell.source = cell.source.replace('"../runs/notebooks', f'"{run_dir}')
        nbformat.write(notebook, lab_server.root / f"{name}.ipynb")
    return lab_server


def opened(browser, lab, name: str, ready: str, count: int = 1):
    """A page with the notebook run all; the websocket frames it sends, as they happen."""
    page = browser.page()
    page.set_viewport_size({"width": 1440, "height": 1300})
    sent: list = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda frame: sent.append(frame)))
    lab.run_all(page, f"{name}.ipynb", ready, count, workspace=name.split("_")[0])
    return page, sent


@pytest.fixture(scope="module")
def quickstart(browser, lab):
    return opened(browser, lab, "01_quickstart", ".fd-chart svg", CHARTS)


@pytest.fixture(scope="module")
def replay(browser, lab):
    return opened(browser, lab, "02_replay_failures", ".mf-player")


@pytest.fixture(scope="module")
def comparison(browser, lab):
    return opened(browser, lab, "04_compare_runs", ".mf-player.mf-pair")


def test_the_dashboard_draws_its_charts(quickstart, browser):
    page, _ = quickstart
    dashboard = page.locator(".fd-dashboard")
    banner = dashboard.locator(".mf-banner")
    assert "SYNTHETIC DATA" in banner.inner_text() and banner.is_visible()
    assert dashboard.locator(".fd-chart svg.marks").count() == CHARTS
    cells = dashboard.locator('[data-chart="pass_rates"] path[aria-roledescription="rect mark"]')
    assert cells.count() == 6 * 8  # agents x dimensions
    label = cells.first.get_attribute("aria-label")
    assert "Wilson 95% interval" in label and "trials passed" in label
    usage = dashboard.locator(".fd-usage th").all_inner_texts()  # the bundled agents report no model turns
    assert usage[:2] == ["agent", "cost per task"] and not any("token" in column for column in usage)
    banner.scroll_into_view_if_needed()  # the dashboard is taller than the window: its top, as a person sees it
    browser.shot(page, "lab-dashboard")


def test_a_dashboard_cell_filters_the_failure_browser_and_a_failure_opens_the_player(quickstart, browser):
    page, _ = quickstart
    table = page.locator(".ff-browser")
    assert "failed trials" in table.locator(".ff-count").inner_text()
    page.locator('[data-chart="pass_rates"] path[aria-label^="dimension: 用药管理; agent: unsafe-shortcut;"]').click()
    count = table.locator(".ff-count")
    count.filter(has_text="match agent = unsafe-shortcut, dimension = 用药管理").wait_for(timeout=15_000)
    rows = table.locator(".ff-row")
    assert rows.count() == 6 and "unsafe-shortcut" in page.locator(".fd-selection").inner_text()
    assert all("用药管理" in rows.nth(i).inner_text() for i in range(rows.count()))
    task = rows.first.locator(".ff-task").inner_text()
    rows.first.click()
    player = page.locator(".mf-player")
    player.wait_for(timeout=15_000)
    assert (
        task in player.locator(".mf-task").inner_text() and "unsafe-shortcut" in player.locator(".mf-head").inner_text()
    )
    assert "Triage" in table.locator(".ff-triage").inner_text()
    assert banners(page, ".fd-dashboard") == [True, False, False]  # one output: the dashboard's banner, above all
    # each widget brings common.css; the player's copy, added last, leaves the others' own rules as they are
    assert [
        style(page, *probe)
        for probe in [
            (".fd-head", "padding-bottom"),
            (".ff-clear", "font-size"),
            (".ff-sort", "font-size"),
            (".ff-sort", "font-weight"),
        ]
    ] == ["0px", "12px", "12px", "600"]
    table.scroll_into_view_if_needed()
    browser.shot(page, "lab-failures-filtered-and-opened")


def test_an_unstable_task_opens_its_failed_trial_beside_a_passing_one(quickstart, browser):
    page, _ = quickstart
    cell = page.locator(".fd-tasks .fd-unstable .fd-task-cell").first  # the dashboard's "k of n" per task and agent
    task, agent = cell.get_attribute("data-task"), cell.get_attribute("data-agent")
    passed = cell.inner_text().split(" unstable")[0]
    cell.click()
    table = page.locator(".ff-browser")
    table.locator(".ff-count").filter(has_text=f"task_id = {task}").wait_for(timeout=15_000)
    pair = page.locator(".mf-player.mf-pair")
    pair.wait_for(timeout=15_000)
    heads = pair.locator(".mf-head").all_inner_texts()
    assert len(heads) == 2 and "FAIL" in heads[0] and "PASS" in heads[1] and all(agent in h for h in heads)
    assert task in pair.locator(".mf-task").first.inner_text()
    assert table.locator(".ff-row.ff-selected .ff-passes").inner_text().startswith(passed)
    assert f"passed {passed} trials" in table.locator(".ff-pair").inner_text()
    table.locator(".ff-beside").click()  # "show the failed trial alone"
    pair.wait_for(state="detached", timeout=15_000)
    alone = page.locator(".mf-player")
    assert alone.count() == 1 and "FAIL" in alone.locator(".mf-head").inner_text()
    # a row of the failure browser, filtered to unstable tasks, opens the pair too
    table.locator(".ff-clear").click()
    table.locator('select[data-filter="stability"]').select_option("unstable")
    page.wait_for_function(  # the kernel's rows, not those painted before it answered
        """() => { const rows = [...document.querySelectorAll(".ff-browser .ff-row")];
                   return rows.length > 1 && rows.every((row) => row.querySelector(".ff-unstable")); }""",
        timeout=15_000,
    )
    trial_id = table.locator(".ff-row:not(.ff-selected)").first.get_attribute("data-trial-id")
    row = table.locator(f'.ff-row[data-trial-id="{trial_id}"]')
    assert "unstable" in row.locator(".ff-passes").inner_text()
    row.click()
    table.locator(".ff-pair").filter(has_text="which passed (right)").wait_for(timeout=15_000)
    pair.locator(".mf-task").filter(has_text=row.locator(".ff-task").inner_text()).wait_for(timeout=15_000)
    table.scroll_into_view_if_needed()
    browser.shot(page, "lab-unstable-row-opens-the-pair")
    page.locator(".fd-tasks").scroll_into_view_if_needed()
    browser.shot(page, "lab-dashboard-k-of-n", locator=page.locator(".fd-tasks"))


def banners(page, first: str) -> list[bool]:
    """Whether each synthetic-data banner is shown, in page order, in the output holding ``first``."""
    output = page.locator(".jp-OutputArea-output").filter(has=page.locator(first))
    return [banner.is_visible() for banner in output.locator(".mf-banner").all()]


def style(page, selector: str, name: str) -> str:
    """The computed value of a style property of the first element matching ``selector``."""
    return page.locator(selector).first.evaluate("(node, name) => getComputedStyle(node).getPropertyValue(name)", name)


def first_write(page) -> int:
    """The step number of the first call that changed the record, as the player lists it."""
    return int(page.locator(".mf-row:has(.mf-chip-write) .mf-no").first.inner_text())


def test_the_first_failure_of_unsafe_shortcut_steps_without_a_websocket_frame(replay, browser):
    page, sent = replay
    table, player = page.locator(".ff-browser"), page.locator(".mf-player")
    assert "match agent = unsafe-shortcut" in table.locator(".ff-count").inner_text()
    assert table.locator(".ff-row").first.get_attribute("aria-selected") == "true"
    assert "FAIL" in player.locator(".mf-head").inner_text()
    assert banners(page, ".ff-browser") == [True, False]  # the table's, above the player of the same output
    diff = player.locator(".mf-col-diff")
    assert "none" in diff.inner_text()
    write = first_write(page)
    player.focus()
    before = len(sent)
    for _ in range(write - 1):
        page.keyboard.press("ArrowRight")
    page.wait_for_timeout(300)
    assert player.locator(".mf-position").inner_text().startswith(f"step {write} of ")
    assert "added" in diff.inner_text().lower()
    assert len(sent) == before, f"stepping sent {len(sent) - before} websocket frame(s)"
    player.evaluate("el => el.scrollIntoView({block: 'start'})")
    browser.shot(page, "lab-replay-first-failure")


def test_the_failing_safety_verdict_is_one_click_from_its_step(replay, browser):
    page, _ = replay
    player = page.locator(".mf-player")
    player.focus()
    page.keyboard.press("End")
    safety = player.locator(".mf-group-failed").filter(has_text="Safety").locator(".mf-verdict.mf-fail").first
    link = safety.locator(".mf-steplink").first
    step = int(link.get_attribute("data-step"))
    link.click()
    assert player.locator(".mf-position").inner_text().startswith(f"step {step} of ")
    assert player.locator(".mf-row.mf-current .mf-no").inner_text() == str(step)
    safety.scroll_into_view_if_needed()
    browser.shot(page, "lab-replay-safety-verdict")


def test_triage_is_edited_in_the_page_and_a_bad_edit_shows_why(replay, browser, run_dir):
    page, _ = replay
    triage = run_dir / "triage.yaml"
    verdict = page.locator(".ff-triage .ff-verdict").first
    verifier = verdict.get_attribute("data-verifier")
    verdict.locator(".ff-decision").select_option("confirmed")
    verdict.locator(".ff-save").click()
    error = verdict.locator(".ff-message.ff-error")
    error.wait_for(timeout=15_000)
    assert error.inner_text() == f"{verifier} confirmed: comment: write why: a triage decision is kept with it"
    assert not triage.exists()
    assert verdict.locator(".ff-decision").input_value() == "confirmed"  # what was typed is kept
    verdict.locator(".ff-comment").fill("orders before any check; nobody asked for them")
    verdict.locator(".ff-save").click()
    verdict.locator(".ff-message.ff-saved").wait_for(timeout=15_000)
    (decision,) = load_triage(triage).decisions
    assert (decision.verifier_id, decision.decision, decision.agent) == (verifier, "confirmed", "unsafe-shortcut")
    page.locator(".ff-triage").scroll_into_view_if_needed()
    browser.shot(page, "lab-replay-triage")


def test_the_comparison_notebook_shows_the_gate_and_a_pair(comparison, browser):
    page, _ = comparison
    gate = page.locator(".fd-gate")
    assert "GREEN" in gate.locator(".fd-gate-head").inner_text()
    assert "candidate-v2 vs baseline-v1" in gate.inner_text()
    assert gate.locator(".fd-check").count() >= 5 and page.locator(".fd-chart svg.marks").count() == CHARTS
    pair = page.locator(".mf-player.mf-pair")
    assert banners(page, ".fd-dashboard") == [True] and banners(page, ".mf-pair") == [True]  # alone: each its own
    assert pair.locator(".mf-head").count() == 2
    heads = pair.locator(".mf-heads").inner_text()
    assert "candidate-v2" in heads and "candidate-v2-no-conflict" in heads
    browser.shot(page, "lab-compare-gate", locator=gate)
    pair.evaluate("el => el.scrollIntoView({block: 'start'})")
    browser.shot(page, "lab-compare-side-by-side")


def test_no_console_error_and_nothing_left_the_machine(quickstart, replay, comparison, browser):
    assert browser.errors == []
    assert browser.blocked == []
