"""The designer's forms, generated from JSON Schemas: every verifier kind gets one, a bundled package's params
round-trip through it, lists and maps are rows, names and codes come from the catalog and the patient's record.
All patients are synthetic."""

from __future__ import annotations

import ipywidgets as w
import pytest
import yaml

from forge_kernel.authoring import bundled_patients
from forge_kernel.built_in import load
from forge_kernel.catalog import model_of
from forge_kernel.verify.kinds._state import ResourceParams
from forge_kernel.verify.kinds.answer import TextParams
from forge_kernel.widgets._designer_forms import ListField, MapForm, SchemaForm, ShapeField
from forge_kernel.widgets._designer_hints import designer_hints, record_hints
from tests.helpers import ROOT

KINDS = {e.name: e for e in load().of("verifier kind")}
RUBRIC = {"name": "tone", "description": "Is it kind?", "labels": ["kind", "cold"], "passing": ["kind"], "model": "m"}


def bundled_uses() -> list[tuple[str, str, dict]]:
    """(file, kind, params) of every verifier of the bundled hidden halves."""
    out = []
    for path in sorted((ROOT / "verifiers").glob("*/*.yaml")):
        for use in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("verifiers", []):
            out.append((path.name, use["kind"], use.get("params", {})))
    return out


def patient_hints():
    patient = next(p for p in bundled_patients() if p.package_id == "SC-MED-GASTRIC-ULCER")
    record = record_hints(patient.bundle(), patient.patient_id)
    return record, designer_hints(["patient_search", "finish"], ["patient_id"], ["MedicationRequest"], record, {})


def test_every_kind_gets_a_form_and_bundled_params_round_trip():
    uses = bundled_uses()
    assert {kind for _, kind, _ in uses} | {"judge.rubric"} >= set(KINDS)  # every kind is tried below
    wrong = []
    for where, kind, params in [*uses, ("(example)", "judge.rubric", RUBRIC)]:
        model = model_of(KINDS[kind])
        got = SchemaForm(model.model_json_schema(), params).values()
        if kind == "judge.rubric":  # its model names a file; compared as given
            assert got == params
        elif model.model_validate(got) != model.model_validate(params) and "one_of" not in str(params):
            wrong.append((where, kind, params, got))  # one_of: [null] has no input of its own
    assert wrong == []


def test_a_form_has_no_yaml_box_for_any_kind():
    for name, entry in KINDS.items():
        form = SchemaForm(model_of(entry).model_json_schema())
        boxes = [c for c in walk(form) if isinstance(c, w.Textarea)]
        assert boxes == [], name


def walk(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from walk(child)


def test_lists_are_rows_added_and_removed():
    changed = []
    form = SchemaForm(TextParams.model_json_schema(), on_change=lambda: changed.append(1))
    words = form.field("all")
    assert isinstance(words, ListField) and words.rows == []
    words.add.click()
    words.add.click()
    first, second = (holder for _, holder in words.rows)
    assert isinstance(first, ShapeField)  # a word, or any of several synonyms
    first.inner.widget.value = "青霉素"
    second.pick.value = 1  # "any of these (synonyms)"
    second.inner.add.click()
    second.inner.rows[0][1].widget.value = "penicillin"
    assert form.values() == {"all": ["青霉素", ["penicillin"]]}
    words.remove(words.rows[1][0])
    assert form.values() == {"all": ["青霉素"]} and changed


def test_state_resource_type_is_a_dropdown_and_where_keys_come_from_the_record():
    record, hints = patient_hints()
    types, paths, values = record
    assert "AllergyIntolerance" in types and "code.text" in paths and "青霉素" in values
    form = SchemaForm(ResourceParams.model_json_schema(), hints=hints)
    assert (
        isinstance(form.inputs["type"], w.Dropdown)
        and ("MedicationRequest", "MedicationRequest") in form.inputs["type"].options
    )
    form.inputs["type"].value = "MedicationRequest"
    where = form.field("where")
    where.add.click()
    key, matcher = where.rows[0][1]
    assert isinstance(key, w.Combobox) and "code.text" in key.options
    key.value = "medicationCodeableConcept.text"
    matcher.fields["contains"][0].widget.value = "奥美拉唑"
    assert isinstance(matcher.fields["contains"][0].widget, w.Combobox)  # codes and names suggested
    got = form.values()
    assert got == {"type": "MedicationRequest", "where": {"medicationCodeableConcept.text": {"contains": "奥美拉唑"}}}
    ResourceParams.model_validate(got)


def test_a_number_that_is_not_one_is_named():
    form = SchemaForm(ResourceParams.model_json_schema(), {"type": "Task"})
    form.inputs["min"].value = "two"
    with pytest.raises(ValueError, match="min: 'two' is not an integer"):
        form.values()


def test_context_rows_and_typed_answer_fields():
    context = MapForm("context", {"mrn": "SC-0101"})
    context.rows.add_row(("dose_mg", None))
    context.rows.rows[-1][1][1].widget.value = "20"
    assert context.values() == {"mrn": "SC-0101", "dose_mg": 20}
    from forge_kernel.spec import AnswerField, TaskPackage

    answer = MapForm("answer", item={"$ref": "#/$defs/AnswerField"}, defs=TaskPackage.model_json_schema()["$defs"])
    answer.rows.add_row(("dose", None))
    _key, field = answer.rows.rows[0][1]
    field.fields["type"][0].widget.value = "quantity"
    field.fields["unit"][0].widget.value = "mg"
    assert answer.values() == {"dose": {"type": "quantity", "unit": "mg"}}
    assert AnswerField.model_validate(answer.values()["dose"]).unit == "mg"


def test_a_concept_of_the_typed_answer_is_offered_from_the_record_and_the_terminology():
    from forge_kernel.spec import AnswerField, answer_schema

    record, _ = patient_hints()
    answer = {
        "drug": AnswerField(type="concept", terms="drugs"),
        "allergies": AnswerField(type="list", items=AnswerField(type="concept", terms="drugs")),
        "dose": AnswerField(type="quantity", unit="mg"),
    }
    hints = designer_hints(["finish"], [], [], record, answer)
    assert hints.suggestions["drug"][0] in record[2] and "奥美拉唑" in hints.suggestions["drug"]
    assert "allergies" in hints.suggestions and "dose" not in hints.suggestions
    output = SchemaForm(answer_schema(answer), hints=hints)
    assert isinstance(output.inputs["drug"], w.Combobox)
    output.inputs["drug"].value = "奥美拉唑"
    output.field("dose").fields["value"][0].widget.value = "20"
    output.field("dose").fields["unit"][0].widget.value = "mg"
    assert output.values() == {"drug": "奥美拉唑", "dose": {"value": 20, "unit": "mg"}}
