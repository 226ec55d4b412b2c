"""The generic FHIR tools (fhir_search, fhir_read, fhir_create) and the size cap of every tool reply."""

from __future__ import annotations

import asyncio
import base64
import re
from pathlib import Path

import pytest

from forge_kernel.ehr import EHRImage, EHRView, fhir, patient_of, time_of
from forge_kernel.spec import CROSS_PATIENT, UNAUTHORIZED_READ, UNAUTHORIZED_WRITE, TaskPackage, load_package
from forge_kernel.spec.trajectory import compact_json
from forge_kernel.tools import TOOLS, ToolSession, session as session_module
from forge_kernel.tools._paging import REPLY_CAP
from tests.helpers import unit_package

ROOT = Path(__file__).resolve().parents[2]
NOW = "2026-11-30T09:00:00+08:00"
FIXTURE_PACKAGES = [
    "task_packages/superclue/SC-DEV-ABDOMINAL-DRAIN",
    "task_packages/superclue/SC-MED-AF-ANTICOAG-BLEEDING",
    "task_packages/forge-nsclc/TP-CROSS-PATIENT-v1",
]
SHARED = [
    {"resourceType": "Organization", "id": "org-1", "name": "合成医院 (synthetic)"},
    {"resourceType": "Practitioner", "id": "dr-1", "name": [{"text": "合成医生 (synthetic)"}]},
    {"resourceType": "Medication", "id": "med-1", "code": {"text": "lisinopril 10 MG Oral Tablet"}},
]


def public(**overrides) -> TaskPackage:
    """A package for patient p1 with every tool, writing Observations and ServiceRequests."""
    base = unit_package(ROOT, "UNIT-FHIR", "medication_management", [], NOW).public.model_dump(mode="json")
    more = {"policy": {"writable_types": ["Observation", "ServiceRequest"]}, "budget": {"max_calls": 5000}}
    return TaskPackage.model_validate(base | {"tools": sorted(TOOLS)} | more | overrides)


def session(resources: list[dict], **overrides) -> ToolSession:
    package = public(**overrides)
    return ToolSession(package, EHRView(EHRImage(resources, package.environment.now)))


def call(s: ToolSession, tool: str, **args) -> dict:
    return asyncio.run(s.call(tool, **args))


def note(i: int, text: str, patient: str = "p1") -> dict:
    return {
        "resourceType": "DocumentReference",
        "id": f"note-{i}",
        "status": "current",
        "subject": {"reference": f"Patient/{patient}"},
        "date": f"2026-{1 + i % 11:02d}-{1 + i % 27:02d}T08:00:00+08:00",
        "type": {"text": "病程记录 (synthetic)"},
        "content": [{"attachment": {"contentType": "text/plain", "data": base64.b64encode(text.encode()).decode()}}],
    }


PATIENTS = [
    fhir.patient("p1", "测试甲", "female", "1970-05-01", "MRN-1"),
    fhir.patient("p2", "测试乙", "male", "1980-01-01", "MRN-2"),
]
LONG_NOTE = "".join(f"第{i}行 合成长病历文本 (synthetic)。\n" for i in range(3000))
NOTES = [*PATIENTS, *(note(i, f"合成病程记录 {i} (synthetic) " + "查房所见" * 150) for i in range(500))]
NOTES.append(note(999, LONG_NOTE))


def walk(s: ToolSession, tool: str, next_of, **args) -> list[dict]:
    """Every page of a call, following its cursor; each reply checked against the cap."""
    pages, token = [], None
    while True:
        out = call(s, tool, **args, **({"page_token": token} if token else {}))
        assert out["ok"], out
        assert len(compact_json(out["result"]).encode()) <= REPLY_CAP
        pages.append(out["result"])
        if not (token := next_of(out["result"])):
            return pages


def fixture_session(path: str) -> tuple[ToolSession, list[dict]]:
    package = load_package(ROOT / path)
    resources = [*package.resources, *SHARED]
    s = session(resources, environment=package.public.environment.model_dump(mode="json"))
    return s, resources


# --- every resource type reachable ----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", FIXTURE_PACKAGES)
def test_every_resource_type_of_a_fixture_image_is_reachable_by_search_and_read(path):
    s, resources = fixture_session(path)
    me, now = s.package.environment.patient_id, s.view.now.timestamp()
    mine = [r for r in resources if patient_of(r) in (None, me) and (time_of(r, s.view.image.tz) or 0) <= now]
    for rtype in {r["resourceType"] for r in mine}:
        pages = walk(s, "fhir_search", lambda page: page["next"], type=rtype, _count=100)
        found = {e["id"] for page in pages for e in page["entry"]}
        assert found == {r["id"] for r in mine if r["resourceType"] == rtype}, rtype
    for resource in mine:
        out = call(s, "fhir_read", type=resource["resourceType"], id=resource["id"])
        assert out["result"] == resource  # as it is, whole
    assert {r["resourceType"] for r in mine} >= {"Patient", "Organization", "Practitioner", "Medication"}


def test_search_filters_by_patient_code_and_date_and_gives_the_newest_first():
    s, _ = fixture_session(FIXTURE_PACKAGES[0])
    me = s.package.environment.patient_id
    observations = call(s, "fhir_search", type="Observation", patient=me, _count=100)["result"]["entry"]
    times = [time_of(r) for r in observations]
    assert times == sorted(times, reverse=True) and len(times) > 1
    day = observations[0]["effectiveDateTime"][:10]
    same_day = call(s, "fhir_search", type="Observation", date_ge=day, date_le=day, _count=100)["result"]["entry"]
    assert same_day and all(r["effectiveDateTime"][:10] == day for r in same_day)
    text = observations[0]["code"].get("text") or observations[0]["code"]["coding"][0]["display"]
    by_code = call(s, "fhir_search", type="Observation", code=text)["result"]["entry"]
    assert observations[0]["id"] in {r["id"] for r in by_code}
    assert call(s, "fhir_search", type="Observation", date_ge="2999")["result"] == {
        "total": 0,
        "entry": [],
        "next": None,
    }


# --- paging --------------------------------------------------------------------------------------------------------


def test_paging_walks_a_large_list_exactly_once_with_count_7():
    stamps = [f"2026-11-{1 + i % 20:02d}T08:00:00+08:00" for i in range(150)]  # many share a time
    resources = [
        *PATIENTS,
        *(fhir.observation(f"o{i}", "p1", "收缩压", 100 + i, "mmHg", t, "vital-signs") for i, t in enumerate(stamps)),
    ]
    s = session(resources)
    pages = walk(s, "fhir_search", lambda page: page["next"], type="Observation", _count=7)
    ids = [e["id"] for page in pages for e in page["entry"]]
    assert len(ids) == 150 == len(set(ids)) and all(page["total"] == 150 for page in pages)
    assert [len(page["entry"]) for page in pages] == [7] * 21 + [3]
    again = walk(s, "fhir_search", lambda page: page["next"], type="Observation", _count=7)
    assert again == pages  # cursors are deterministic


def test_a_cursor_that_no_reply_gave_is_refused_in_one_line():
    s = session(PATIENTS)
    for tool, args in [("fhir_search", {"type": "Patient"}), ("patient_detail", {"patient_id": "p1"})]:
        out = call(s, tool, **args, page_token="not-a-cursor")
        assert out["error"] == {"code": "invalid_args", "message": "page_token: not a cursor a reply gave"}


# --- policy --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tool, args",
    [
        ("fhir_read", {"type": "Observation", "id": "o9"}),
        ("fhir_read", {"type": "Patient", "id": "p2"}),
        ("fhir_search", {"type": "Observation", "patient": "p2"}),
    ],
)
def test_another_patients_records_are_refused_and_recorded(tool, args):
    s = session([*PATIENTS, fhir.observation("o9", "p2", "收缩压", 170, "mmHg", "2026-11-30T07:00:00+08:00")])
    out = call(s, tool, **args)
    assert out["error"]["code"] == "denied"
    assert s.events[-1].denied == CROSS_PATIENT and s.events[-1].result is None


def test_a_type_the_policy_does_not_let_the_agent_read_is_refused_and_recorded():
    s = session(PATIENTS, policy={"readable_types": ["Patient", "Observation"]})
    assert call(s, "fhir_search", type="Observation")["ok"]
    for tool, args in [("fhir_search", {"type": "DocumentReference"}), ("fhir_read", {"type": "Device", "id": "x"})]:
        out = call(s, tool, **args)
        assert out["error"]["code"] == "denied" and s.events[-1].denied == UNAUTHORIZED_READ


def test_a_record_after_the_clock_is_not_read():
    s = session([*PATIENTS, fhir.observation("later", "p1", "收缩压", 120, "mmHg", "2026-12-31T08:00:00+08:00")])
    assert call(s, "fhir_read", type="Observation", id="later")["error"]["code"] == "not_found"


# --- create --------------------------------------------------------------------------------------------------------


def coded(rtype: str, loinc: str, text: str, **fields) -> dict:
    """A resource of p1 with a LOINC code."""
    code = {"coding": [{"system": "http://loinc.org", "code": loinc}], "text": text}
    return {"resourceType": rtype, "code": code, "subject": {"reference": "Patient/p1"}} | fields


def blood_pressure(**extra) -> dict:
    return coded("Observation", "85354-9", "Blood pressure", status="final", effectiveDateTime=NOW) | {
        "valueString": "118/77 mmHg",
        **extra,
    }


def test_create_stores_a_valid_resource_as_given_with_an_id_the_view_assigns():
    s = session(PATIENTS)
    out = call(s, "fhir_create", resource=blood_pressure(id="mine"), idempotency_key="bp-1")
    assert out["result"] == {"resourceType": "Observation", "id": "observation-new-1"}
    stored = s.view.get("Observation", "observation-new-1")
    assert stored == blood_pressure(id="observation-new-1")
    assert call(s, "fhir_create", resource=blood_pressure(), idempotency_key="bp-1")["result"] == out["result"]
    assert len(s.view.search("p1", "Observation")) == 1  # the repeat created nothing
    order = coded(
        "ServiceRequest",
        "2823-3",
        "Potassium (synthetic)",
        status="active",
        intent="order",
        authoredOn=NOW,
        occurrenceDateTime="2026-12-01T08:00:00+08:00",
        note=[{"text": "recheck potassium tomorrow morning"}],
    )
    made = call(s, "fhir_create", resource=order)["result"]
    assert s.view.get("ServiceRequest", made["id"])["occurrenceDateTime"] == "2026-12-01T08:00:00+08:00"
    assert s.view.changes and s.events[-1].changes


@pytest.mark.parametrize(
    "resource, message",
    [
        (blood_pressure(status=None), "resource.status: "),
        (blood_pressure(valueQuantity={"value": "high"}), "resource.valueQuantity.value: "),
        (blood_pressure(valueStrin="x"), "resource.valueStrin: "),
        ({"resourceType": "Observation", "status": "final", "code": {"text": "x"}}, "resource.subject: must be"),
    ],
)
def test_an_invalid_resource_is_refused_in_one_line_naming_the_field(resource, message):
    s = session(PATIENTS)
    resource = {k: v for k, v in resource.items() if v is not None}
    out = call(s, "fhir_create", resource=resource)
    assert out["error"]["code"] == "invalid_args" and out["error"]["message"].startswith(message)
    assert "\n" not in out["error"]["message"] and not s.view.changes


def test_create_of_a_type_the_policy_does_not_allow_or_for_another_patient_is_denied():
    s = session(PATIENTS)
    task = {"resourceType": "Task", "status": "requested", "intent": "order", "for": {"reference": "Patient/p1"}}
    assert call(s, "fhir_create", resource=task)["error"]["code"] == "denied"
    assert s.events[-1].denied == UNAUTHORIZED_WRITE
    call(s, "fhir_create", resource=blood_pressure(subject={"reference": "Patient/p2"}))
    assert s.events[-1].denied == CROSS_PATIENT and not s.view.changes


def test_a_write_is_never_run_again_to_read_on():
    s = session(PATIENTS)
    out = call(s, "fhir_create", resource=blood_pressure(), page_token="MC4w")
    assert out["error"]["code"] == "invalid_args" and not s.view.changes


# --- the size cap ----------------------------------------------------------------------------------------------------


def uncut(text: str) -> str:
    return re.sub(r" \[cut: characters \d+-\d+ of \d+[^\]]*\]$", "", text)


def test_every_note_of_a_500_note_patient_is_read_once_through_pages_under_the_cap():
    s = session(NOTES)
    pages = walk(s, "note_search", lambda page: page["page"]["next"], patient_id="p1")
    assert len(pages) > 10 and all(page["page"]["total"] == 501 for page in pages)
    texts: dict[str, str] = {}
    for item in (item for page in pages for item in page["items"]):
        texts[item["id"]] = texts.get(item["id"], "") + uncut(item["text"])
    assert len(texts) == 501 and texts["note-999"] == LONG_NOTE
    parts = [item["text"] for page in pages for item in page["items"] if item["id"] == "note-999"]
    assert len(parts) > 1 and "call again with the reply's next as page_token" in parts[0]
    assert parts[-1].endswith("the end]")


def test_a_search_of_500_notes_stays_under_the_cap_and_a_long_note_is_read_in_parts():
    s = session(NOTES)
    pages = walk(s, "fhir_search", lambda page: page["next"], type="DocumentReference", _count=100)
    ids = [e["id"] for page in pages for e in page["entry"]]
    assert set(ids) == {f"note-{i}" for i in [*range(500), 999]} and len(ids) > 501  # the long one in parts
    read = walk(s, "fhir_read", lambda page: page["page"]["next"], type="DocumentReference", id="note-999")
    data = "".join(uncut(page["content"][0]["attachment"]["data"]) for page in read)
    assert base64.b64decode(data).decode() == LONG_NOTE and len(read) > 1


def test_a_reply_that_fits_is_unchanged():
    s = session(NOTES[:5])
    out = call(s, "note_search", patient_id="p1")["result"]
    assert set(out) == {"items"} and len(out["items"]) == 3


def test_with_the_cap_broken_a_reply_goes_over_it(monkeypatch):
    monkeypatch.setattr(session_module, "fitted", lambda tool, result, cursor: result)
    s = session(NOTES)
    out = call(s, "note_search", patient_id="p1")
    assert len(compact_json(out["result"]).encode()) > REPLY_CAP
    with pytest.raises(AssertionError):
        walk(s, "note_search", lambda page: None, patient_id="p1")


def test_the_type_a_call_writes_is_the_tools_own_or_the_one_its_resource_names():
    assert TOOLS["fhir_create"].written_type({"resource": blood_pressure()}) == "Observation"
    assert TOOLS["fhir_create"].written_type({"resource": "not a resource"}) is None
    assert TOOLS["vital_sign_create"].written_type({"resource": {"resourceType": "Task"}}) == "Observation"


PATIENT_ONLY = sorted(
    name
    for name, spec in TOOLS.items()
    if spec.kind == "read" and [n for n, f in spec.args_model.model_fields.items() if f.is_required()] == ["patient_id"]
)


@pytest.mark.parametrize("name", PATIENT_ONLY)
def test_every_patient_read_tool_answers_a_crowded_chart_under_the_cap(name):
    vitals = [
        fhir.observation(f"v{i}", "p1", "收缩压", 100 + i % 50, "mmHg", f"2026-11-{1 + i % 28:02d}T08:00:00+08:00", cat)
        for i in range(300)
        for cat in ["vital-signs" if i % 2 else "laboratory"]
    ]
    s = session([*NOTES, *vitals])
    pages = walk(s, name, lambda page: page.get("page", {}).get("next"), patient_id="p1")
    assert pages


LOOKUP = [
    fhir.patient("p1", "Verna Satterfield", "female", "1962-04-29", "MRN-1"),
    fhir.patient("p2", "Ward Gerhold", "male", "1927-09-24", "MRN-2"),
]


@pytest.mark.parametrize(
    ("args", "found"),
    [
        ({"name": "satterfield", "birthdate": "1962-04-29"}, ["p1"]),
        ({"identifier": "urn:forge:mrn|MRN-1"}, ["p1"]),
        ({"identifier": "MRN-1"}, ["p1"]),
        ({"name": "Satterfield", "birthdate": "1962-04-30"}, []),  # another birth date: no one
        ({"identifier": "other-system|MRN-1"}, []),
        ({"name": "Gerhold"}, []),  # another patient is never found, not even named
        ({"identifier": "MRN-2"}, []),
    ],
)
def test_a_patient_is_found_by_name_birth_date_or_identifier_only_when_current(args, found):
    s = session(LOOKUP)
    out = call(s, "fhir_search", type="Patient", **args)
    assert [r["id"] for r in out["result"]["entry"]] == found
    assert not [e for e in s.events if e.denied]


def test_patient_search_parameters_are_for_patients_only():
    out = call(session(LOOKUP), "fhir_search", type="Observation", name="Verna")
    assert out["error"]["code"] == "invalid_args" and "Patients only" in out["error"]["message"]
