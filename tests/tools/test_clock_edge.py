"""The package clock is the edge of the world: no read tool returns a record dated after ``environment.now``.

Every read tool of the catalog is called (a new one is covered as soon as it is registered) over a chart that has,
of every type, one record at now, which must show, and one a minute after, which must not (synthetic data only).
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime

import pytest

from forge_kernel.ehr import EHRImage, fhir
from forge_kernel.tools import TOOLS, ToolSession
from tests.helpers import read_session

NOW = "2026-11-30T09:00:00+08:00"
LATE = "2026-11-30T09:01:00+08:00"


def records(suffix: str, time: str) -> list[dict]:
    """One record of every type the read tools show, dated ``time``; ids end in ``suffix``."""
    device = fhir.device(f"dev-{suffix}", "p1", "留置导尿管")  # undated itself; its use is dated
    history = fhir.family_history(f"fh-{suffix}", "p1", "母亲", "高血压") | {"date": time}
    return [
        fhir.observation(f"vs-{suffix}", "p1", "收缩压", 130, "mmHg", time, "vital-signs", "8480-6"),
        fhir.observation(f"lab-{suffix}", "p1", "血红蛋白", 120, "g/L", time, "laboratory", "718-7"),
        fhir.condition(f"cond-{suffix}", "p1", "高血压", time),
        fhir.allergy(f"alg-{suffix}", "p1", "青霉素", "皮疹", time),
        fhir.procedure(f"proc-{suffix}", "p1", "阑尾切除术", time),
        history,
        fhir.encounter(f"enc-{suffix}", "p1", "outpatient", time),
        fhir.diagnostic_report(f"dr-{suffix}", "p1", "胸部 CT", time, "未见异常"),
        fhir.note(f"note-{suffix}", "p1", "病程记录", "患者一般情况可", time),
        fhir.medication_request(f"mr-{suffix}", "p1", "氨氯地平", "5 mg", "qd", "oral", time),
        fhir.medication_statement(f"ms-{suffix}", "p1", "二甲双胍", "0.5 g", "bid", "oral", time),
        fhir.service_request(f"sr-{suffix}", "p1", "血常规", time),
        fhir.task(f"task-{suffix}", "p1", "随访", "复查血压", time),
        {**fhir.procedure(f"imm-{suffix}", "p1", "流感疫苗", time), "resourceType": "Immunization"}
        | {"vaccineCode": fhir.concept("流感疫苗"), "occurrenceDateTime": time},
        device,
        fhir.device_use(f"use-{suffix}", "p1", device["id"], time),
    ]


RESOURCES = [
    fhir.patient("p1", "测试甲", "female", "1970-05-01", "MRN-1"),
    *records("now", NOW),
    *records("late", LATE),
]
CALLS: dict[str, list[dict]] = {
    "patient_search": [{"mrn": "MRN-1"}],
    "protocol_search": [{"keyword": "NSCLC"}],
    "protocol_get": [{"protocol_id": "LUNG-IO-301"}],
    "protocol_text": [{"protocol_id": "LUNG-IO-301"}],
    "vital_signs": [{"patient_id": "p1"}, {"patient_id": "p1", "last_hours": 24}],
    "lab_results": [{"patient_id": "p1"}, {"patient_id": "p1", "since_days": 1}],
    "record_search": [
        {"patient_id": "p1", "type": rtype}
        for rtype in TOOLS["record_search"].args_model.model_fields["type"].annotation.__args__
        if rtype != "Device"  # a Device has no date of its own: device_list shows it by its dated use
    ],
    "fhir_search": [
        {"type": rtype, "patient": "p1"}
        for rtype in sorted({r["resourceType"] for r in RESOURCES} - {"Device"})  # undated: shown whole, as it is
    ],
    "fhir_read": [{"type": r["resourceType"], "id": r["id"]} for r in records("now", NOW)],
}
"""Arguments for the read tools that need more than the patient; any other is called with ``patient_id`` only."""
NO_RECORDS = {"patient_search", "protocol_search", "protocol_get", "protocol_text"}
"""Read tools that show no dated clinical record (patients, the protocol table): nothing at now to find."""

READ_TOOLS = sorted(name for name, spec in TOOLS.items() if spec.kind == "read")


def session(resources: list[dict] = RESOURCES) -> ToolSession:
    return read_session(EHRImage(resources, datetime.fromisoformat(NOW)))


def replies(name: str, tools: ToolSession) -> str:
    """Every reply of one tool to its calls, as one JSON text."""
    calls = CALLS.get(name, [{"patient_id": "p1"}])
    out = [asyncio.run(tools.call(name, **args)) for args in calls]
    for reply in out:
        assert "error" not in reply, (name, reply)
    return json.dumps(out, ensure_ascii=False)


def test_every_read_tool_is_called():
    assert {"vital_signs", "lab_results", "record_search", "patient_detail", "note_search"} <= set(READ_TOOLS)
    assert len(READ_TOOLS) >= 15


@pytest.mark.parametrize("name", READ_TOOLS)
def test_no_read_tool_shows_a_record_after_now_and_each_shows_one_at_now(name):
    shown = replies(name, session())
    assert "-late" not in shown
    if name not in NO_RECORDS:
        assert "-now" in shown


def test_a_record_the_trial_wrote_after_now_is_not_shown_either():
    tools = session()
    tools.view.create(fhir.observation("vs-written-late", "p1", "心率", 80, "/min", LATE, "vital-signs", "8867-4"))
    tools.view.create(fhir.observation("vs-written-now", "p1", "心率", 80, "/min", NOW, "vital-signs", "8867-4"))
    shown = replies("vital_signs", tools)
    assert "vs-written-now" in shown and "vs-written-late" not in shown


def test_the_24_hour_vitals_window_ends_at_now_not_a_year_later():
    later = fhir.observation("vs-next-year", "p1", "收缩压", 180, "mmHg", "2027-06-01T09:00:00+08:00", "vital-signs")
    reply = asyncio.run(session([*RESOURCES, later]).call("vital_signs", patient_id="p1", last_hours=24))
    assert [r["id"] for r in reply["result"]["items"]] == ["vs-now"]


def test_a_death_after_now_is_not_shown():
    patient = fhir.patient("p1", "测试甲", "female", "1970-05-01", "MRN-1") | {"deceasedDateTime": LATE}
    reply = asyncio.run(session([patient]).call("patient_detail", patient_id="p1"))["result"]
    assert "deceased" not in reply and reply["age"] == 56


def test_a_death_without_a_date_is_shown():
    patient = fhir.patient("p1", "测试甲", "female", "1970-05-01", "MRN-1") | {"deceasedBoolean": True}
    assert asyncio.run(session([patient]).call("patient_detail", patient_id="p1"))["result"]["deceased"] is True


def test_breaking_the_clip_lets_a_future_record_through(monkeypatch):
    """The test above fails when the image forgets where its clock stands (the edge its searches clip at)."""
    tools = session()
    monkeypatch.setattr(tools.view.image, "edge", float("inf"))
    assert "-late" in replies("vital_signs", tools)


def test_a_record_after_now_read_by_its_id_is_not_found():
    reply = asyncio.run(session().call("fhir_read", type="Observation", id="vs-late"))
    assert reply["error"]["code"] == "not_found"
