"""The player's static page in Chromium from file://, with every network request aborted: no kernel, no manager."""

from __future__ import annotations

from dataclasses import replace

import pytest

from forge_kernel import open_run
from forge_kernel.spec.compact import CompactResource, CompactTrajectory
from forge_kernel.widgets import write_player_page

TASK = "SC-MED-GASTRIC-ULCER"
LONG = 1000


FAULTS = (333, 777)


def long_trajectory(base: CompactTrajectory, n: int = LONG) -> CompactTrajectory:
    """A trial of ``n`` calls: every 10th orders a drug, the 5th after it stops that order, the last deletes one; a
    fault is injected at the steps ``FAULTS``; the verdicts that point at a step point at the middle one."""
    order = next(s for s in base.steps if s.changes)
    template = order.changes[0]["value"]
    steps, resources = [], {}
    for i in range(1, n + 1):
        step = replace(base.steps[0], step=i, changes=[])
        key = f"MedicationRequest/mr-{i - i % 10}"
        if i % 10 == 0:
            doc = {**template, "id": key.split("/")[1]}
            step = replace(order, step=i, changes=[{"op": "add", "path": f"/{key}", "value": doc}])
            resources[key] = CompactResource(initial=None, versions=[(i, doc)])
        elif i % 10 == 5 and i > 10:
            key = f"MedicationRequest/mr-{i - 5}"
            stopped = {**resources[key].versions[-1][1], "status": "stopped"}
            step = replace(
                order,
                step=i,
                tool="medication_request_update",
                changes=[{"op": "replace", "path": f"/{key}/status", "value": "stopped", "replaced": "active"}],
            )
            resources[key].versions.append((i, stopped))
        if i in FAULTS:
            step = replace(
                step, ok=False, result=None, fault="timeout", error={"code": "timeout", "message": "no answer"}
            )
        steps.append(step)
    resources["MedicationRequest/mr-10"].versions.append((n, None))
    steps[-1] = replace(
        steps[-1],
        changes=[
            {
                "op": "remove",
                "path": "/MedicationRequest/mr-10",
                "replaced": resources["MedicationRequest/mr-10"].versions[0][1],
            }
        ],
    )
    verdicts = [v.model_copy(update={"steps": [n // 2]}) if v.steps else v for v in base.verdicts]
    return base.model_copy(update={"steps": steps, "resources": resources, "verdicts": verdicts})


@pytest.fixture(scope="module")
def pages(reference_run, tmp_path_factory):
    """file:// URLs of the failing unsafe-shortcut trial's page and of a 1,000-call trial's page."""
    folder = tmp_path_factory.mktemp("pages")
    with open_run(reference_run) as run:
        trial = run.trial(TASK, "unsafe-shortcut", 0)
        again = trial.compact().model_copy(update={"attempts": 2})
        return {
            "trial": write_player_page(folder / "trial.html", trial).as_uri(),
            "long": write_player_page(folder / "long.html", long_trajectory(trial.compact())).as_uri(),
            "again": write_player_page(folder / "again.html", again).as_uri(),
        }


def offline_page(browser):
    """A page on which every request but for its own file is aborted, and those it tried are kept."""
    page = browser.page()
    tried: list[str] = []

    def only_files(route):
        if route.request.url.startswith("file:"):
            return route.continue_()
        tried.append(route.request.url)
        return route.abort()

    page.route("**/*", only_files)
    return page, tried


def open_player(browser, url: str):
    """The page (offline, see ``offline_page``) at ``url`` with its player drawn, the requests it tried, the player."""
    page, tried = offline_page(browser)
    page.goto(url)
    player = page.locator(".mf-player")
    player.wait_for()
    return page, tried, player


def median_key_ms(page, key: str, presses: int) -> float:
    """The median time, in ms, of one of ``presses`` presses of ``key`` on the player: handling it, style and layout."""
    return page.evaluate(
        """([key, presses]) => {
        const root = document.querySelector('.mf-player'), times = [];
        for (let i = 0; i < presses; i++) {
            const t0 = performance.now();
            root.dispatchEvent(new KeyboardEvent('keydown', {key, bubbles: true}));
            root.offsetHeight;
            times.push(performance.now() - t0);
        }
        return times.sort((a, b) => a - b)[presses >> 1]; }""",
        [key, presses],
    )


def test_the_static_page_steps_with_the_keyboard(browser, pages):
    page, tried, player = open_player(browser, pages["trial"])
    assert "SYNTHETIC DATA" in player.locator(".mf-banner").inner_text() and player.locator(".mf-banner").is_visible()
    player.focus()
    page.keyboard.press("End")
    assert player.locator(".mf-position").inner_text() == "step 4 of 4"
    page.keyboard.press("ArrowLeft")
    diff = player.locator(".mf-col-diff")
    assert "奥美拉唑 20 mg qd oral, active" in diff.inner_text()
    player.locator('.mf-toggle[data-mode="step"]').click()
    assert "made by step 3" in diff.inner_text()
    page.keyboard.press("Home")
    assert "did not change the patient record" in diff.inner_text()
    browser.shot(page, "static-page", full_page=True)
    assert tried == [] and browser.errors == []


def test_a_thousand_calls_step_smoothly_from_a_short_list(browser, pages):
    page, tried, player = open_player(browser, pages["long"])
    assert player.locator(".mf-row").count() < 60  # the step list is virtualised
    player.focus()
    per_step = median_key_ms(page, "ArrowRight", 200)
    assert player.locator(".mf-position").inner_text() == f"step 201 of {LONG}"
    assert per_step < 50, f"{per_step:.1f} ms per step"  # 3 frames at 60 Hz: room for a loaded CI machine
    page.keyboard.press("End")
    assert player.locator(".mf-position").inner_text() == f"step {LONG} of {LONG}"
    diff = player.locator(".mf-col-diff")
    assert "added" in diff.inner_text().lower() and "stopped" in diff.inner_text()
    player.locator('.mf-toggle[data-mode="step"]').click()
    assert "removed" in diff.inner_text().lower()
    player.focus()
    for _ in range(5):
        page.keyboard.press("ArrowLeft")
    assert "changed" in diff.inner_text().lower() and 'status: "active" → "stopped"' in diff.inner_text()
    player.locator(".mf-steplink").first.click()
    assert player.locator(".mf-position").inner_text() == f"step {LONG // 2} of {LONG}"
    assert player.locator(f'.mf-row.mf-current[data-row="{LONG // 2 - 1}"]').count() == 1
    browser.shot(page, "static-page-1000-steps")
    assert tried == [] and browser.errors == []


def test_a_trial_run_again_says_so_in_its_header(browser, pages):
    """A trial whose agent was run again after a stall of its shared worker says so beside its calls and time;
    a trial run once says nothing of it."""
    for name, shown in (("trial", 0), ("again", 1)):
        page, tried = offline_page(browser)
        page.goto(pages[name])
        facts = page.locator(".mf-facts").first
        facts.wait_for()
        assert not tried and facts.locator(".mf-again").count() == shown
    again = facts.locator(".mf-again")
    assert again.inner_text() == "run 2 times" and "the last attempt's" in again.get_attribute("title")
    browser.shot(page, "player-run-again", locator=page.locator(".mf-head").first)


def test_a_long_trial_jumps_to_its_faults_verdicts_and_changes(browser, pages):
    """The keys and the buttons jump to the next or previous fault, verdict or change, quickly on 1,000 calls."""
    page, tried, player = open_player(browser, pages["long"])
    position = player.locator(".mf-position")
    player.focus()
    page.keyboard.press("f")
    assert position.inner_text() == f"step {FAULTS[0]} of {LONG}"
    assert "injected fault" in player.locator(".mf-col-detail").inner_text()
    player.locator('.mf-jump-btn[data-jump="fault"][data-dir="1"]').click()
    assert position.inner_text() == f"step {FAULTS[1]} of {LONG}"
    assert player.locator('.mf-jump-btn[data-jump="fault"][data-dir="1"]').is_disabled()  # no fault after the last
    page.keyboard.press("Shift+F")
    assert position.inner_text() == f"step {FAULTS[0]} of {LONG}"
    page.keyboard.press("v")
    assert position.inner_text() == f"step {LONG // 2} of {LONG}"
    page.keyboard.press("c")
    assert position.inner_text() == f"step {LONG // 2 + 5} of {LONG}"  # the stop of the order made at step 500
    assert "changed" in player.locator(".mf-col-diff").inner_text()
    page.keyboard.press("Shift+C")
    assert position.inner_text() == f"step {LONG // 2} of {LONG}"
    assert player.locator(f'.mf-row.mf-current[data-row="{LONG // 2 - 1}"]').count() == 1  # the list follows
    assert player.locator('.mf-jump[data-kind="fault"] .mf-jump-count').inner_text() == str(len(FAULTS))
    page.keyboard.press("Home")
    per_jump = median_key_ms(page, "c", 150)
    changes = [i for i in range(1, LONG + 1) if i % 10 == 0 or (i % 10 == 5 and i > 10)]
    assert position.inner_text() == f"step {changes[149]} of {LONG}"
    assert per_jump < 50, f"{per_jump:.1f} ms per jump"
    player.locator(".mf-keys summary").click()
    browser.shot(page, "static-page-jumps-and-keys")
    assert tried == [] and browser.errors == []


def test_a_filter_narrows_the_step_list_and_the_keys_step_within_it(browser, pages):
    page, tried, player = open_player(browser, pages["long"])
    showing, position = player.locator(".mf-showing"), player.locator(".mf-position")
    assert showing.inner_text() == f"showing all {LONG} steps" and player.locator(".mf-clear").is_hidden()
    player.locator(".mf-filter-tool").select_option("medication_request_update")
    stops = [i for i in range(1, LONG + 1) if i % 10 == 5 and i > 10]
    assert showing.inner_text() == f"showing {len(stops)} of {LONG} steps"
    assert position.inner_text() == f"step {stops[0]} of {LONG}"  # on to the first step shown
    names = player.locator(".mf-row .mf-name").all_inner_texts()
    assert names and set(names) == {"medication_request_update"}
    player.focus()
    page.keyboard.press("ArrowRight")
    assert position.inner_text() == f"step {stops[1]} of {LONG}"
    page.keyboard.press("End")
    assert position.inner_text() == f"step {stops[-1]} of {LONG}"
    browser.shot(page, "static-page-filtered-by-tool")
    player.locator(".mf-why .mf-steplink").first.click()  # a link to a step the filter hides: the filter goes
    assert (
        position.inner_text() == f"step {LONG // 2} of {LONG}" and showing.inner_text() == f"showing all {LONG} steps"
    )
    player.locator(".mf-filter-tool").select_option("")
    player.locator(".mf-filter-verdict").select_option("failed")
    assert showing.inner_text() == f"showing 1 of {LONG} steps"  # the one step the failing verdicts point at
    assert position.inner_text() == f"step {LONG // 2} of {LONG}"
    player.locator(".mf-clear").click()
    assert showing.inner_text() == f"showing all {LONG} steps" and player.locator(".mf-clear").is_hidden()
    assert tried == [] and browser.errors == []


def test_an_answer_verdict_links_to_the_answer(browser, pages):
    page, tried, player = open_player(browser, pages["trial"])
    typed = player.locator('.mf-verdict[data-verdict="typed"]')
    assert typed.locator(".mf-answerlink").inner_text() == "the answer →"
    assert player.locator('.mf-verdict[data-verdict="budget"] .mf-whole').count() == 1  # judged the trial as a whole
    typed.locator(".mf-answerlink").click()
    assert player.locator(".mf-position").inner_text() == "step 4 of 4"  # the finish call
    answer = player.locator(".mf-col-detail .mf-answer")
    assert "The agent's final answer" in answer.inner_text() and "奥美拉唑" in answer.inner_text()
    assert answer.is_visible() and "mf-flash" in answer.get_attribute("class")
    assert "typed" in player.locator(".mf-col-detail .mf-pointing").inner_text()  # the verdict is shown at the call
    browser.shot(page, "static-page-answer-verdict", full_page=True)
    assert tried == [] and browser.errors == []
