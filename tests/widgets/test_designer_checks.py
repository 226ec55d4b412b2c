"""The designer's status line and its checks: one line that follows the results the sections show, a surviving
mutant's fix applied by one click (the selftest run again), a dry run's trials opened in the player. All patients
are synthetic."""

from __future__ import annotations

import threading

import pytest

from forge_kernel.authoring import _fixes
from forge_kernel.widgets.designer import Designer
from forge_kernel.widgets.player import ReplayPlayer
from tests.helpers import ROOT
from tests.widgets import test_designer as designed

WITHOUT_MRN_RULE = [r for r in designed.EVENTS if r.get("require", {}).get("tool") != "patient_search"]


@pytest.fixture()
def weak(tmp_path, monkeypatch):
    """The allergy package of test_designer, less its rule that the patient is found by MRN first: dropping the
    search then goes unnoticed."""
    monkeypatch.setattr(designed, "EVENTS", WITHOUT_MRN_RULE)
    d = Designer(ROOT / "task_packages", tmp_path)
    designed.fill(d)
    return d


def fix_buttons(d: Designer) -> list:
    return [b for row in d.fixes.children for b in row.children[1:] if b.description.startswith("Fix:")]


def test_a_surviving_mutant_offers_its_fix_and_one_click_kills_it(weak):
    d = weak
    assert "valid so far" in d.status.value and "selftest not run yet" in d.status.value
    d.run_selftest()
    assert "selftest failed" in d.selftest_output.value
    assert "selftest failed: 1 mutant(s) survived" in d.status.value and "valid so far" not in d.status.value
    (fix,) = fix_buttons(d)
    assert fix.description == "Fix: require patient_search before the answer (finish)"
    fix.click()
    rules = next(v for v in d.draft.verifiers if v.id == "events").params["rules"]
    assert rules[-1] == {
        "require": {"tool": "patient_search"},
        "before": {"tool": "finish"},
        "reason": "patient_search before finish",
    }
    assert "selftest passed" in d.selftest_output.value and d.fixes.children == ()
    assert "selftest passed" in d.status.value and "failed" not in d.status.value


def test_a_fix_that_changes_nothing_leaves_the_selftest_failed(weak, monkeypatch):
    monkeypatch.setattr(_fixes, "add_rule", lambda draft, rule: None)  # the fix's rule never reaches the draft
    weak.run_selftest()
    fix_buttons(weak)[0].click()
    assert "selftest failed" in weak.status.value and "selftest failed" in weak.selftest_output.value


def test_a_result_of_an_earlier_draft_is_not_shown_as_the_drafts(weak):
    d = weak
    d.run_selftest()
    d.title.value = "过敏史查询（改）"
    assert "selftest not run yet" in d.status.value and "failed" not in d.status.value
    assert "changed since" in d.selftest_output.value and d.fixes.children == ()


def test_fixes_for_other_operators(weak):
    d = weak

    def fixed(operator: str, target: str) -> str:
        mutant = _fixes.Mutant(operator, target, "", d.draft.gold)
        fix = _fixes.fix_for(d.draft, mutant)
        return fix.label if fix else ""

    assert fixed("read-other-patient", "allergy_list#1") == "keep the agent to this patient"
    assert fixed("repeat-write", "allergy_list#1") == "allow allergy_list at most 1 time(s)"
    assert fixed("drop-call", "medication_request_create#1") == "require a new MedicationRequest in the record"
    assert fixed("drop-call", "finish#1") == "require the agent to finish"  # not "finish before finish"
    assert fixed("cite-sibling", "Observation/x") == ""  # no one check: declared valid or written by hand


def test_a_dry_runs_trial_opens_in_the_player(weak):
    d = weak
    d.run_agents()
    assert "candidate-v2" in d.dry_output.value
    opens = {b.description: b for b in d.dry_rows.children[1:]}
    other = threading.Thread(target=opens["▶ candidate-v2"].click)
    other.start()  # a notebook's kernel may answer a click in a thread other than the dry run's
    other.join()
    player = d.player_box.children[-1]
    assert isinstance(player, ReplayPlayer) and b'"agent":"candidate-v2"' in player.trajectory


def test_a_typed_answer_is_declared_given_and_checked_through_forms(tmp_path):
    d = Designer(ROOT / "task_packages", tmp_path)
    designed.fill(d)
    d.answer_fields.rows.add_row(("allergen", None))
    _, field = d.answer_fields.rows.rows[0][1]
    field.fields["type"][0].widget.value = "concept"
    field.fields["terms"][0].widget.value = "drugs"
    assert d.draft.public.task.answer["allergen"].terms == "drugs"
    assert "奥美拉唑" in d.output_form.inputs["allergen"].options  # offered from the drug table
    d.output_form.inputs["allergen"].value = "青霉素"
    d._use_as_gold()
    assert d.draft.gold.output == {"allergen": "青霉素"}
    d.kind.value = "answer.typed"  # its expect is a form of the typed answer, not a box of YAML
    d.params_form.field("expect").fields["allergen"][0].widget.value = "青霉素"
    d.verifier_id.value, d.verifier_category.value = "typed", "answer"
    d._add_verifier()
    assert d.draft.verifiers[-1].params == {"expect": {"allergen": "青霉素"}}
    d.run_selftest()
    assert "selftest passed" in d.status.value
