"""The player's static page in Chromium from file://, with every network request aborted: no kernel, no manager."""

from __future__ import annotations

from dataclasses import replace

import pytest

from forge_kernel import open_run
from forge_kernel.spec.compact import CompactResource, CompactTrajectory
from forge_kernel.widgets import write_player_page

TASK = "SC-MED-GASTRIC-ULCER"
LONG = 1000


def long_trajectory(base: CompactTrajectory, n: int = LONG) -> CompactTrajectory:
    """A trial of ``n`` calls: every 10th orders a drug, the 5th after it stops that order, the last deletes one."""
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


def test_the_static_page_steps_with_the_keyboard(browser, pages):
    page, tried = offline_page(browser)
    page.goto(pages["trial"])
    player = page.locator(".mf-player")
    player.wait_for()
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
    page, tried = offline_page(browser)
    page.goto(pages["long"])
    player = page.locator(".mf-player")
    player.wait_for()
    assert player.locator(".mf-row").count() < 60  # the step list is virtualised
    player.focus()
    per_step = page.evaluate("""() => {  // the median time of one step: handling the key, style and layout
        const root = document.querySelector('.mf-player'), times = [];
        for (let i = 0; i < 200; i++) {
            const t0 = performance.now();
            root.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowRight', bubbles: true}));
            root.offsetHeight;
            times.push(performance.now() - t0);
        }
        return times.sort((a, b) => a - b)[100]; }""")
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
