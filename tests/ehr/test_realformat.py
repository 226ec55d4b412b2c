"""FHIR R4 as other tools write it (Synthea bundles, HL7's examples) loads and reads right (synthetic data only).

The fixtures are in tests/fixtures/realformat (its README says where they come from).
"""

from __future__ import annotations

import asyncio
import json
import shutil
from datetime import datetime
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from forge_kernel.cli import main
from forge_kernel.ehr import EHRImage, patient_mrn, patient_of, summarize, time_of
from forge_kernel.spec import SpecError, bundle_resources, load_package
from forge_kernel.store import Run
from forge_kernel.tools import TOOLS
from tests.helpers import read_session

REALFORMAT = Path(__file__).resolve().parents[1] / "fixtures" / "realformat"
SYNTHEA = sorted((REALFORMAT / "synthea").glob("*.json"))
HL7 = REALFORMAT / "hl7" / "examples.json"
NOW = "2026-12-05T00:00:00+00:00"
READ_TOOLS = sorted(name for name, spec in TOOLS.items() if spec.kind == "read")


def bundle_resources_of(path: Path) -> list[dict]:
    return [e["resource"] for e in json.loads(path.read_text(encoding="utf-8"))["entry"]]


def patient_ids(path: Path) -> list[str]:
    return [r["id"] for r in bundle_resources_of(path) if r["resourceType"] == "Patient"]


def write_package(
    root: Path, fixtures: list[Path], patient_id: str, now: str = NOW, hidden: dict | None = None
) -> Path:
    """A package over copies of the fixtures (``fixtures/<name>``) whose hidden half asks only for a finish."""
    folder = root / "task_packages" / "realformat" / "RF-UNIT"
    (folder / "fixtures").mkdir(parents=True)
    for path in fixtures:
        shutil.copy(path, folder / "fixtures" / path.name)
    public = {
        "id": "RF-UNIT",
        "version": "1",
        "title": "real-format records",
        "suite": "realformat",
        "category": "information_retrieval",
        "environment": {
            "ehr_image": "realformat",
            "ehr_version": "1",
            "fixtures": [f"fixtures/{p.name}" for p in fixtures],
            "now": now,
            "patient_id": patient_id,
        },
        "task": {"instruction": {"zh": "测试", "en": "test"}, "language": "en"},
        "tools": [*READ_TOOLS, "finish"],
    }
    (folder / "package.yaml").write_text(yaml.safe_dump(public, allow_unicode=True), encoding="utf-8")
    verifiers = root / "verifiers" / "realformat"
    verifiers.mkdir(parents=True)
    hidden = hidden or {
        "verifiers": [{"id": "done", "kind": "trace.events", "category": "trace", "params": {"rules": [finished]}}],
        "gold": {"answer": "done", "calls": [{"tool": "finish", "args": {"summary": "done"}}]},
    }
    (verifiers / "RF-UNIT.yaml").write_text(yaml.safe_dump({"id": "RF-UNIT", "version": "1", **hidden}), "utf-8")
    return folder


finished = {"require": {"tool": "finish"}, "reason": "the task ends with finish"}


@pytest.fixture(scope="module")
def synthea(tmp_path_factory):
    """The three Synthea patients as one package, its image and a view."""
    folder = write_package(tmp_path_factory.mktemp("synthea"), SYNTHEA, patient_ids(SYNTHEA[0])[0])
    package = load_package(folder)
    return package, EHRImage(package.resources, package.public.environment.now)


@pytest.fixture(scope="module")
def hl7(tmp_path_factory):
    folder = write_package(tmp_path_factory.mktemp("hl7"), [HL7], "example")
    package = load_package(folder)
    return package, EHRImage(package.resources, package.public.environment.now)


def references(value) -> list[str]:
    if isinstance(value, dict):
        own = [value["reference"]] if isinstance(value.get("reference"), str) else []
        return own + [r for item in value.values() for r in references(item)]
    if isinstance(value, list):
        return [r for item in value for r in references(item)]
    return []


def call(image: EHRImage, patient: str, tool: str, /, **args) -> dict:
    reply = asyncio.run(read_session(image, patient).call(tool, **args))
    assert reply.get("ok"), reply
    return reply["result"]


# --- loading --------------------------------------------------------------------------------------------------------


def test_synthea_bundles_load_as_one_ehr_each_shared_resource_once(synthea):
    package, _ = synthea
    written = [r for path in SYNTHEA for r in bundle_resources_of(path)]
    keys = [(r["resourceType"], r["id"]) for r in package.resources]
    assert len(keys) == len(set(keys)) == len({(r["resourceType"], r["id"]) for r in written}) < len(written)
    assert {r["resourceType"] for r in package.resources} == {r["resourceType"] for r in written}


def test_every_reference_is_rewritten_to_type_and_id_and_keeps_what_was_written(synthea):
    package, image = synthea
    found = [ref for r in package.resources for ref in references(r)]
    assert found and not [ref for ref in found if ref.startswith("urn:")]
    assert all((ref.split("/")[0], ref.split("/")[1]) in image.resources for ref in found)
    subject = next(r["subject"] for r in package.resources if r["resourceType"] == "Observation")
    assert subject["extension"] == [
        {"url": "urn:forge:original-reference", "valueUri": f"urn:uuid:{subject['reference'][8:]}"}
    ]


def test_every_clinical_record_is_linked_to_its_patient(synthea):
    package, image = synthea
    owned = [r for r in package.resources if any(f in r for f in ("subject", "patient", "beneficiary"))]
    assert owned and all(patient_of(r) in image.patient_ids for r in owned)
    for pid in image.patient_ids:
        for rtype in ("Observation", "Condition", "Encounter", "Procedure", "Immunization", "DocumentReference"):
            assert list(image.keys_for(pid, rtype)), (pid, rtype)


def test_the_same_resource_with_other_content_in_two_files_is_refused_naming_both(tmp_path):
    first, second = SYNTHEA[0], tmp_path / "other.json"
    bundle = json.loads(first.read_text(encoding="utf-8"))
    shared = next(e["resource"] for e in bundle["entry"] if e["resource"]["resourceType"] == "Organization")
    shared["name"] = "another name"
    second.write_text(json.dumps(bundle), encoding="utf-8")
    with pytest.raises(SpecError) as raised:
        load_package(write_package(tmp_path, [first, second], patient_ids(first)[0]))
    message = str(raised.value)
    assert "\n" not in message and f"Organization/{shared['id']}" in message
    assert "other.json" in message and first.name in message


def test_the_same_content_in_another_key_order_is_one_resource(tmp_path):
    first, second = SYNTHEA[0], tmp_path / "reordered.json"
    bundle = json.loads(first.read_text(encoding="utf-8"))
    bundle["entry"] = [
        {"fullUrl": e["fullUrl"], "resource": dict(reversed(e["resource"].items()))} for e in bundle["entry"]
    ]
    second.write_text(json.dumps(bundle), encoding="utf-8")
    package = load_package(write_package(tmp_path, [first, second], patient_ids(first)[0]))
    assert len(package.resources) == len(bundle["entry"])


# --- reading ------------------------------------------------------------------------------------------------------


def test_the_mrn_is_the_identifier_typed_mr_not_the_first(synthea, hl7):
    _, image = synthea
    patient = image.resources[("Patient", image.patient_ids[0])]
    typed = next(
        i["value"] for i in patient["identifier"] if i.get("type", {}).get("coding", [{}])[0].get("code") == "MR"
    )
    assert patient_mrn(patient) == typed != patient["identifier"][0]["value"]
    found = call(image, patient["id"], "patient_search", mrn=typed)["patients"]
    assert [p["patient_id"] for p in found] == [patient["id"]]
    assert call(image, patient["id"], "patient_search", mrn=patient["identifier"][0]["value"])["patients"] == []
    assert call(hl7[1], "example", "patient_detail", patient_id="example")["mrn"] == "12345"


def test_summarize_never_raises_on_any_real_format_resource(synthea, hl7):
    for _, image in (synthea, hl7):
        for resource in image.resources.values():
            summary = summarize(resource, lambda t, i, image=image: image.resources.get((t, i)))
            assert summary["type"] == resource["resourceType"]
    administration = next(r for r in synthea[0].resources if r["resourceType"] == "MedicationAdministration")
    assert summarize(administration)["name"]


def test_every_read_tool_reads_every_synthea_patient_and_nothing_after_the_clock(tmp_path):
    now = "2026-06-01T00:00:00+00:00"
    package = load_package(write_package(tmp_path, SYNTHEA, patient_ids(SYNTHEA[0])[0], now))
    image = EHRImage(package.resources, package.public.environment.now)
    assert image.future  # the generator dated records up to the day it ran
    edge = image.now.timestamp()
    shown: list[dict] = []
    whole: list[dict] = []
    for pid in image.patient_ids:
        for tool in READ_TOOLS:
            args = {"mrn": patient_mrn(image.resources[("Patient", pid)])} if tool == "patient_search" else {}
            args = {"keyword": "x"} if tool == "protocol_search" else args
            if tool in ("protocol_get", "protocol_text", "fhir_read"):
                continue  # no patient's record (the protocol table); one record by its id (below, by search)
            if tool == "fhir_search":
                for rtype in sorted({key[0] for key in image.resources}):
                    whole += call(image, pid, tool, **{"type": rtype, "patient": pid, "_count": 100})["entry"]
                continue
            result = call(image, pid, tool, **(args or {"patient_id": pid}))
            shown += [
                row for rows in result.values() if isinstance(rows, list) for row in rows if isinstance(row, dict)
            ]
    times = [row["time"] for row in shown if isinstance(row.get("time"), str)]
    assert times and all(time_of({"date": t}, image.tz) <= edge for t in times)
    dated = [when for r in whole if (when := time_of(r, image.tz)) is not None]
    assert dated and max(dated) <= edge
    assert {row["type"] for row in shown if "type" in row} >= {"Observation", "Condition", "Encounter", "Procedure"}


def test_a_blood_pressure_panel_is_found_by_its_systolic_code_with_the_components(hl7):
    _, image = hl7
    for tool, args in [("vital_signs", {"name": "8480-6"}), ("record_search", {"code": "8480-6"})]:
        result = call(image, "example", tool, patient_id="example", **args)
        rows = result.get("items") or result["records"]
        assert [r["id"] for r in rows] == ["blood-pressure", "blood-pressure-dar"]
        systolic = rows[0]["components"][0]
        assert systolic["value"] == {"value": 107, "unit": "mmHg"} and "8480-6" in systolic["codes"]
        assert rows[1]["components"][1] == {
            "name": "Diastolic blood pressure",
            "codes": ["8462-4"],
            "absent": "Not Performed",
        }


def test_an_observation_without_category_is_a_laboratory_result_unless_a_known_vital_sign(hl7):
    _, image = hl7
    labs = call(image, "example", "lab_results", patient_id="example")["items"]
    vitals = call(image, "example", "vital_signs", patient_id="example")["items"]
    assert [r["id"] for r in labs] == ["f001"] and "f001" not in {r["id"] for r in vitals}
    assert labs[0]["value"] == {"value": 6.3, "unit": "mmol/l"}
    heart_rate = {
        **image.resources[("Observation", "f001")],
        "id": "hr",
        "code": {"coding": [{"system": "http://loinc.org", "code": "8867-4"}]},
    }
    both = EHRImage([*image.resources.values(), heart_rate], image.now)
    assert "hr" in {r["id"] for r in call(both, "example", "vital_signs", patient_id="example")["items"]}
    assert "hr" not in {r["id"] for r in call(both, "example", "lab_results", patient_id="example")["items"]}


def test_a_medication_reference_shows_the_drug_name_and_codes_contained_or_separate(hl7):
    _, image = hl7
    rows = {r["id"]: r for r in call(image, "example", "medication_search", patient_id="example")["medications"]}
    assert rows["medrx0302"]["name"] == "Tylenol PM"
    assert rows["medrx0302"]["codes"] == ["http://hl7.org/fhir/sid/ndc|50580-506-02"]
    assert rows["medrx0310"]["name"] == "Vancomycin Hydrochloride (VANCOMYCIN HYDROCHLORIDE)"
    assert (
        image.resources[("MedicationRequest", "medrx0310")]["medicationReference"]["reference"] == "Medication/med0310"
    )


def test_a_deceased_patient_is_shown_so_and_aged_to_the_date_of_death(hl7):
    detail = call(hl7[1], "example", "patient_detail", patient_id="example")
    assert detail["deceased"] == "2015-02-14T13:42:00+10:00" and detail["age"] == 40


@pytest.mark.parametrize(
    ("field", "value", "shown"),
    [
        ("valueQuantity", {"value": 7.2, "unit": "mmol/L"}, {"value": 7.2, "unit": "mmol/L"}),
        ("valueCodeableConcept", {"text": "Positive"}, "Positive"),
        ("valueString", "clear", "clear"),
        ("valueBoolean", False, False),
        ("valueInteger", 3, 3),
        (
            "valueRange",
            {"low": {"value": 1, "unit": "g"}, "high": {"value": 2, "unit": "g"}},
            {"low": {"value": 1, "unit": "g"}, "high": {"value": 2, "unit": "g"}},
        ),
        (
            "valueRatio",
            {"numerator": {"value": 1}, "denominator": {"value": 128}},
            {"numerator": {"value": 1, "unit": None}, "denominator": {"value": 128, "unit": None}},
        ),
        ("valuePeriod", {"start": "2026-01-01", "end": "2026-01-02"}, {"start": "2026-01-01", "end": "2026-01-02"}),
        ("valueDateTime", "2026-01-01T08:00:00Z", "2026-01-01T08:00:00Z"),
    ],
)
def test_every_kind_of_value_is_shown(field, value, shown):
    observation = {"resourceType": "Observation", "id": "o", "status": "final", "code": {"text": "x"}, field: value}
    assert summarize(observation)["value"] == shown


# --- the reference agent and validate -------------------------------------------------------------------------------


def test_validate_and_the_reference_agent_run_green_on_a_synthea_package(tmp_path):
    pid = patient_ids(SYNTHEA[2])[0]
    patient = next(r for r in bundle_resources_of(SYNTHEA[2]) if r["resourceType"] == "Patient")
    born = datetime.fromisoformat(patient["birthDate"]).date()
    age = 2026 - born.year - ((born.month, born.day) > (12, 5))
    hidden = {
        "expected_tools": ["patient_search", "patient_detail", "finish"],
        "verifiers": [
            {"id": "done", "kind": "trace.events", "category": "trace", "params": {"rules": [finished]}},
            {
                "id": "typed",
                "kind": "answer.typed",
                "category": "answer",
                "params": {
                    "expect": {
                        "sex": patient["gender"],
                        "age": age,
                        "birth_date": patient["birthDate"],
                    }
                },
            },
            {
                "id": "identity",
                "kind": "answer.text",
                "category": "answer",
                "params": {"all": [patient_mrn(patient)], "any": [], "none": []},
            },
        ],
        "gold": {
            "answer": "see output",
            "calls": [
                {"tool": "patient_search", "args": {"mrn": patient_mrn(patient)}},
                {"tool": "patient_detail", "args": {"patient_id": pid}},
                {"tool": "finish", "args": {"summary": "see answer"}},
            ],
            "output": {
                "sex": patient["gender"],
                "age": {"value": age, "unit": "year"},
                "birth_date": patient["birthDate"],
                "mrn": patient_mrn(patient),
            },
        },
    }
    folder = write_package(tmp_path, SYNTHEA, pid, hidden=hidden)
    manifest = yaml.safe_load((folder / "package.yaml").read_text(encoding="utf-8"))
    manifest["task"]["context"] = {"mrn": patient_mrn(patient), "query": "demographics"}
    manifest["task"]["answer"] = {
        "sex": {"type": "status", "options": ["female", "male", "other", "unknown"]},
        "age": {"type": "quantity", "unit": "year"},
        "birth_date": {"type": "date"},
        "mrn": {"type": "text"},
    }
    (folder / "package.yaml").write_text(yaml.safe_dump(manifest, allow_unicode=True), encoding="utf-8")
    runner = CliRunner()
    validated = runner.invoke(main, ["validate", str(folder)])
    assert validated.exit_code == 0, validated.output
    out = tmp_path / "run"
    ran = runner.invoke(
        main, ["run", "--suite", str(folder), "--agent", "scripted", "--trials", "1", "--out", str(out)]
    )
    assert ran.exit_code == 0, ran.output
    with Run(out) as run:
        trials = run.trials
        assert len(trials) == 1 and trials.passed.all(), trials.T
        assert run.trial("RF-UNIT", "scripted").result.output["mrn"] == patient_mrn(patient)


def test_without_reference_resolution_a_synthea_chart_comes_up_empty(tmp_path, monkeypatch):
    """The linkage test above rests on the rewrite: with it broken, no record reaches its patient."""
    monkeypatch.setattr("forge_kernel.spec._references.Resolver.target", lambda self, written: None)
    package = load_package(write_package(tmp_path, SYNTHEA[:1], patient_ids(SYNTHEA[0])[0]))
    image = EHRImage(package.resources, package.public.environment.now)
    assert not list(image.keys_for(image.patient_ids[0], "Observation"))


def test_conditional_contained_and_unknown_references():
    """A conditional reference is resolved by identifier; a contained one and one to nothing loaded stay."""
    practitioner = {
        "resourceType": "Practitioner",
        "id": "dr-1",
        "identifier": [{"system": "http://hl7.org/fhir/sid/us-npi", "value": "9999"}],
    }
    encounter = {
        "resourceType": "Encounter",
        "id": "e1",
        "participant": [{"individual": {"reference": "Practitioner?identifier=http://hl7.org/fhir/sid/us-npi|9999"}}],
        "serviceProvider": {"reference": "http://elsewhere.org/fhir/Organization/o9"},
        "reasonReference": [{"reference": "#c1"}],
    }
    _, rewritten = bundle_resources(
        {"resourceType": "Bundle", "entry": [{"resource": practitioner}, {"resource": encounter}]}, Path("b.json")
    )
    assert rewritten["participant"][0]["individual"]["reference"] == "Practitioner/dr-1"
    assert rewritten["serviceProvider"] == encounter["serviceProvider"]
    assert rewritten["reasonReference"] == [{"reference": "#c1"}]
    assert "extension" not in encounter["participant"][0]["individual"]  # what was read is not changed in place
