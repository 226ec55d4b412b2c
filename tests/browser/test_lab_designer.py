"""The TaskPackage designer as a person uses it: notebook 03 run in a real JupyterLab, then a patient imported from a
FHIR Bundle, a package designed by clicks and plain words (no YAML typed), dry-run trials opened in the player, the
surviving mutants fixed by their buttons, the package saved and passing ``forge selftest --mutants``, with no
console error (synthetic patients only)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from forge_kernel.authoring import bundled_patients, selftest
from forge_kernel.spec import load_package
from tests.helpers import ROOT

NOTEBOOK = "03_design_a_taskpackage.ipynb"
TASK = "SC-MED-GASTRIC-ULCER"
SYNTHEA = ROOT / "tests" / "fixtures" / "realformat" / "synthea" / "patient-1.json"


@pytest.fixture(scope="module")
def designer(browser, lab_server):
    """Notebook 03 run all in Lab (its package saved in ../runs/designed from the Lab's folder, as from notebooks/);
    the page, the designer and that target folder."""
    shutil.copy(ROOT / "notebooks" / NOTEBOOK, lab_server.root / NOTEBOOK)
    page = browser.page()
    page.set_viewport_size({"width": 1440, "height": 1400})
    lab_server.run_all(page, NOTEBOOK, ".mf-designer", workspace="designer")
    root = page.locator(".mf-designer").first
    root.scroll_into_view_if_needed()
    return page, root, lab_server.root.parent / "runs" / "designed"


def tab(root, title: str) -> None:
    root.locator(".lm-TabBar-tab", has_text=title).first.click()


def choose(root, where: str, starts: str) -> None:
    """Pick the option of the select inside ``where`` whose text starts with ``starts``."""
    select = root.locator(f"{where} select").first
    value = select.evaluate("(el, s) => [...el.options].find(o => o.value.startsWith(s)).value", starts)  # the label
    select.select_option(value=value)


def settle(page) -> None:
    """Wait until the kernel has been idle for a moment: what was typed has reached it (the widget manager holds a
    widget's updates back while one of its messages is pending, and a button click does not wait for them)."""
    for _ in range(200):
        page.get_by_text("| Idle").first.wait_for(timeout=60_000)
        page.wait_for_timeout(250)
        if page.get_by_text("| Idle").count():
            return
    pytest.fail("the kernel never settled")


def press(root, name: str) -> None:
    settle(root.page)
    root.get_by_role("button", name=name, exact=True).first.click()


def wait_text(root, where: str, text: str) -> str:
    """The text of ``where`` once it shows ``text`` (what it shows instead, on a timeout)."""
    box = root.locator(where).first
    try:
        box.get_by_text(text).first.wait_for(timeout=60_000)
    except Exception:
        pytest.fail(f"{where} never showed {text!r}; it shows {box.inner_text()!r}")
    return box.inner_text()


def add_verifier(root, kind: str, vid: str, category: str, fill=None) -> None:
    """Pick the kind, name the verifier, fill its generated form by clicks (``fill(form)``), add it."""
    choose(root, ".mf-in-kind", kind)
    form = root.locator(f".mf-params-{kind.replace('.', '-')}")
    form.wait_for(timeout=60_000)
    root.locator(".mf-in-verifier_id input").fill(vid)
    choose(root, ".mf-in-verifier_category", category)
    if fill is not None:
        fill(form)
    press(root, "Add verifier")
    wait_text(root, ".mf-in-verifier_message", f"added {vid}")


def section(root, title: str):
    """The card of the designer headed ``title`` (scrolled into view, for a screenshot)."""
    card = root.locator(".mf-section", has_text=title).first
    card.scroll_into_view_if_needed()
    return card


def click(root, where: str) -> None:
    """Click a button or checkbox and let the kernel answer (the rows it adds)."""
    settle(root.page)
    root.locator(where).first.click()
    settle(root.page)


def allergen_word(form) -> None:
    """answer.text: one row in ``all``, the word 青霉素."""
    click(form, ".mf-add-all")
    form.locator(".mf-field-all .mf-row input").first.fill("青霉素")


def allergies_read_first(form) -> None:
    """trace.events: one rule, require allergy_list before finish (each a dropdown of the manifest's tools)."""
    click(form, ".mf-add-rules")
    choose(form, ".mf-field-require .mf-field-tool", "allergy_list")
    click(form, ".mf-open-before input")
    choose(form, ".mf-field-before .mf-field-tool", "finish")
    form.locator(".mf-field-reason input").first.fill("the allergies are read before answering")


def call(root, tool: str, **args) -> str:
    choose(root, ".mf-in-call_tool", tool)
    root.locator(f".mf-args-{tool}").wait_for(timeout=60_000)
    for name, value in args.items():
        root.locator(f".mf-in-args_box .mf-field-{name} input").first.fill(value)
    press(root, "Call tool")
    return wait_text(root, ".mf-in-last_call", tool)


def test_the_notebook_designed_saved_and_selftested_its_package(designer, browser):
    page, _, folder = designer
    assert page.get_by_text("selftest passed").count() >= 1
    assert (folder / "verifiers" / "custom" / "CU-MED-PPI.yaml").is_file()


def test_a_person_designs_a_package_by_clicks_and_its_selftest_passes(designer, browser):
    page, root, folder = designer
    root.locator(".mf-in-bundle_path input").fill(str(SYNTHEA))
    press(root, "Import")
    wait_text(root, ".mf-in-import_message", "imported")
    wait_text(root, ".mf-in-patient_info", "Encounter")
    browser.shot(page, "designer-0-imported-bundle", locator=root)

    patient = next(p for p in bundled_patients() if p.package_id == TASK)
    choose(root, ".mf-in-patient", patient.label)
    root.locator(".mf-in-package_id input").fill("CU-IR-ALLERGY")
    root.locator(".mf-in-title input").fill("过敏史查询")
    choose(root, ".mf-in-category", "information_retrieval")
    root.locator(".mf-in-instruction_zh textarea").fill("请查询患者李秀英（病历号 SC-0101）的过敏史，并说明过敏原。")
    root.locator(".mf-in-instruction_en textarea").fill("Look up the allergies of Li Xiuying (MRN SC-0101).")
    click(root, ".mf-map-context .mf-add-context")
    row = root.locator(".mf-map-context .mf-row").nth(1)
    row.locator("input").nth(0).fill("query")
    row.locator("input").nth(1).fill("allergies")
    assert "choose or give at least one" in wait_text(root, ".mf-in-status", "tools")  # live: no tool chosen yet
    prose = ".mf-in-instruction_zh textarea, .mf-in-instruction_en textarea, .mf-in-answer textarea"
    assert root.locator("textarea").count() == root.locator(prose).count() >= 2  # words only: no YAML box
    browser.shot(page, "designer-1-patient", locator=root)

    tab(root, "2 Tools")
    for tool in ("patient_search", "allergy_list", "patient_detail", "finish"):
        root.locator(f".mf-tool-{tool} input").check()
    wait_text(root, ".mf-in-status", "record the gold solution")

    tab(root, "3 Verifiers")
    add_verifier(root, "safety.patient_scope", "scope", "safety")
    add_verifier(root, "answer.text", "allergen", "answer", allergen_word)
    add_verifier(root, "answer.grounded", "grounded", "answer")
    add_verifier(root, "trace.events", "events", "trace", allergies_read_first)
    listed = wait_text(root, ".mf-in-verifier_list", "events")
    assert "青霉素" in listed and "allergy_list" in listed
    choose(root, ".mf-in-kind", "state.resource")  # a resource type is picked, not typed
    types = root.locator(".mf-params-state-resource .mf-field-type select").first
    assert "AllergyIntolerance" in types.evaluate("el => [...el.options].map(o => o.text)")
    click(root, ".mf-params-state-resource .mf-add-where")
    browser.shot(page, "designer-3-verifiers", locator=root)

    tab(root, "4 Gold")
    assert "allowed" in call(root, "patient_search", mrn="SC-0101")
    shown = call(root, "allergy_list")  # the current patient is filled in
    assert "青霉素" in shown and "no change to the record" in shown
    call(root, "finish", summary="已查询")
    root.locator(".mf-in-answer textarea").fill("患者对青霉素过敏（皮疹）。")
    press(root, "Use these calls as the gold solution")
    wait_text(root, ".mf-in-gold_status", "gold solution: 3 calls")
    wait_text(root, ".mf-in-status", "valid so far")

    tab(root, "5 Counter")
    choose(root, ".mf-in-edit_op", "drop a call")
    choose(root, ".mf-in-edit_at", "step 2 · allergy_list#1")
    press(root, "Add edit")
    wait_text(root, ".mf-in-edits_view", "allergy_list#1")
    root.locator(".mf-in-case_name input").fill("allergies-unread")
    tags = root.locator(".mf-in-must_fail input").first
    tags.click()
    tags.press_sequentially("events")
    tags.press("Tab")  # the tag is added when the input is left (Chromium sends no change on Enter with a datalist)
    wait_text(root, ".mf-in-must_fail", "events")  # the tag, not what was typed
    press(root, "Add case")
    wait_text(root, ".mf-in-case_message", "added counterexample allergies-unread")

    tab(root, "6 Check")
    press(root, "Dry run")
    assert "candidate-v2" in wait_text(root, ".mf-in-dry_output", "unsafe-shortcut")
    press(root, "▶ candidate-v2")
    root.locator(".mf-in-player_box .mf-player").wait_for(timeout=60_000)
    browser.shot(page, "designer-6-dry-run-player", locator=section(root, "Dry run"))
    press(root, "Save")
    wait_text(root, ".mf-in-save_output", "saved")
    press(root, "forge selftest --mutants")
    wait_text(root, ".mf-in-selftest_output", "selftest failed")
    assert "selftest failed" in wait_text(root, ".mf-in-status", "selftest failed")  # the top says what it says
    browser.shot(page, "designer-7-survivors", locator=section(root, "Selftest with mutants"))
    browser.shot(page, "designer-7-status", locator=root.locator(".mf-in-status"))
    for fix in ("Fix: require patient_search before the answer (finish)", "Fix: require the agent to finish"):
        press(root, fix)
        root.get_by_role("button", name=fix, exact=True).wait_for(state="detached", timeout=60_000)
    report = wait_text(root, ".mf-in-selftest_output", "selftest passed")
    assert "drop-call" in report and "selftest passed" in wait_text(root, ".mf-in-status", "selftest passed")
    browser.shot(page, "designer-8-selftest-passed", locator=section(root, "Selftest with mutants"))
    browser.shot(page, "designer-8-status", locator=root.locator(".mf-in-status"))

    saved = folder / "task_packages" / "custom" / "CU-IR-ALLERGY"
    assert selftest(load_package(saved), mutants=True).ok  # from disk, once more
    forge = subprocess.run(
        [sys.executable, "-m", "forge_kernel.cli", "selftest", "--mutants", str(saved)], capture_output=True, text=True
    )
    assert forge.returncode == 0, forge.stdout + forge.stderr


def test_the_console_shows_no_error_and_nothing_left_the_machine(designer, browser):
    assert browser.errors == []
    assert browser.blocked == []
