"""A patient imported into the designer from a FHIR Bundle file (a Synthea one, synthetic), checked by the
project's fixture loader; a bad file is one line naming the file and the field."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from forge_kernel.authoring import _patients
from forge_kernel.widgets.designer import Designer
from tests.helpers import ROOT

SYNTHEA = ROOT / "tests" / "fixtures" / "realformat" / "synthea" / "patient-1.json"


@pytest.fixture(scope="module")
def designer(tmp_path_factory):
    return Designer(ROOT / "task_packages", tmp_path_factory.mktemp("imported"))


def bad_bundle(tmp_path, birth_date: str = "last spring"):
    path = tmp_path / "bad.json"
    patient = {"resourceType": "Patient", "id": "p1", "birthDate": birth_date}
    path.write_text(json.dumps({"resourceType": "Bundle", "type": "collection", "entry": [{"resource": patient}]}))
    return path


def test_a_synthea_bundle_becomes_a_patient_to_design_on(designer):
    d = designer
    d.bundle_path.value = str(SYNTHEA)
    d.import_path()
    assert "imported" in d.import_message.value and d.current.fixture == SYNTHEA
    assert d.current.patient_id == "85c63cf3-278e-454c-b5ba-df5889815eb7" and d.current.name == "Darrell Erdman"
    assert "Encounter" in d.patient_info.value and d.context.values() == {"mrn": d.current.mrn}
    assert "Encounter" in d.hints.choices["type"]  # the patient's own record types come first
    d.tool_boxes["patient_history"].value = True
    d.call_tool.value = "patient_history"
    d._call()
    assert "allowed" in d.last_call.value


def test_an_uploaded_bundle_is_kept_in_the_target_and_imported(designer):
    d = designer
    content = SYNTHEA.read_bytes()
    upload = {"name": "upload.json", "type": "application/json", "size": len(content), "content": memoryview(content)}
    upload["last_modified"] = datetime(2026, 1, 1, tzinfo=UTC)
    d.bundle_upload.value = (upload,)
    assert (d.draft.suite.task_root.parent / "imported" / "upload.json").is_file()
    assert d.current.package_id == "upload.json" and "imported" in d.import_message.value


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("{not json", "bad.json: line 1: Expecting property name"),
        (None, "bad.json: entry.0.resource.birthDate:"),
        ('{"resourceType": "Bundle", "type": "collection", "entry": []}', "bad.json: entry: no Patient resource"),
    ],
)
def test_a_bad_file_is_one_line_naming_file_and_field(designer, tmp_path, content, said):
    path = bad_bundle(tmp_path)
    if content is not None:
        path.write_text(content)
    before = len(designer.patients)
    designer.bundle_path.value = str(path)
    designer.import_path()
    message = designer.import_message.value
    assert said in message and message.count("mf-problem") == 1 and "\n" not in message
    assert len(designer.patients) == before


def test_without_the_loaders_fhir_check_a_bad_field_gets_in(designer, tmp_path, monkeypatch):
    monkeypatch.setattr(_patients, "validate_fixture", lambda path: None)
    designer.bundle_path.value = str(bad_bundle(tmp_path))
    designer.import_path()
    assert "imported" in designer.import_message.value
