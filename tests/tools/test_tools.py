"""Tools layer: the registry, the tool session (policy, faults, idempotency, budgets) and knowledge tools."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta, timezone

import jsonschema
import pytest

from forge_kernel.ehr import EHRImage, EHRView, fhir
from forge_kernel.spec import CROSS_PATIENT, PRECEDENCE, UNAUTHORIZED_WRITE, TaskPackage
from forge_kernel.spec.trajectory import compact_json
from forge_kernel.tools import TOOLS, BudgetExceeded, ToolSession, table
from forge_kernel.workers import LocalToolClient

NOW = "2026-11-30T09:00:00+08:00"
TZ8 = timezone(timedelta(hours=8))

RESOURCES = [
    fhir.patient("p1", "测试甲", "female", "1970-05-01", "MRN-1"),
    fhir.patient("p2", "测试乙", "male", "1980-01-01", "MRN-2"),
    fhir.observation("o1", "p1", "收缩压", 130, "mmHg", "2026-11-28T08:00:00+08:00", "vital-signs", "8480-6"),
    fhir.observation("o2", "p1", "收缩压", 150, "mmHg", "2026-11-30T06:00:00+08:00", "vital-signs", "8480-6"),
    fhir.observation("o3", "p1", "心率", 80, "/min", "2026-11-30T07:00:00+08:00", "vital-signs", "8867-4"),
    fhir.observation("o9", "p2", "收缩压", 170, "mmHg", "2026-11-30T07:00:00+08:00", "vital-signs", "8480-6"),
    fhir.condition("c1", "p1", "胃溃疡", "2026-10-01"),
    fhir.allergy("a1", "p1", "青霉素", "皮疹", "2010-01-01"),
    fhir.medication_statement("m1", "p1", "硝苯地平", "30 mg", "qd", "oral", "2025-01-01"),
]


def make_session(**public) -> ToolSession:
    """A session on p1's EHR; keyword arguments override the public half."""
    doc = {
        "id": "UNIT-T",
        "version": "1",
        "title": "t",
        "suite": "unit",
        "category": "medication_management",
        "environment": {
            "ehr_image": "unit",
            "ehr_version": "1",
            "fixtures": ["ehr.json"],
            "now": NOW,
            "patient_id": "p1",
        },
        "task": {"instruction": {"zh": "测试", "en": "test"}},
        "tools": sorted(TOOLS),
        "policy": {"writable_types": ["ServiceRequest"]},
    } | public
    package = TaskPackage.model_validate(doc)
    return ToolSession(package, EHRView(EHRImage(RESOURCES, package.environment.now)))


def call(session: ToolSession, tool: str, **args) -> dict:
    return asyncio.run(session.call(tool, **args))


def rx(key: str | None = None, **extra) -> dict:
    args = {"patient_id": "p1", "medication": "奥美拉唑", "dose": "20 mg", "frequency": "qd", "route": "oral"}
    if key is not None:
        args["idempotency_key"] = key
    return args | extra


def created(session: ToolSession, rtype: str) -> list[dict]:
    return session.view.search("p1", rtype)


# --- the registry -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_every_tool_has_an_openai_function(name):
    spec = TOOLS[name]
    fn = spec.openai_function()
    assert fn["type"] == "function"
    assert fn["function"]["name"] == name == spec.name
    assert fn["function"]["description"].strip()
    params = fn["function"]["parameters"]
    jsonschema.Draft202012Validator.check_schema(params)
    assert params["type"] == "object"
    assert isinstance(params.get("properties"), dict)
    assert params.get("additionalProperties") is False
    if "patient_id" in params["properties"]:
        assert "patient_id" in params["required"]
        assert params["properties"]["patient_id"]["maxLength"] == 64  # a FHIR id's length bounds a model's id
    assert "title" not in params and all("title" not in p for p in params["properties"].values())  # tokens saved
    assert spec.kind in ("read", "write", "compute")
    assert (spec.kind == "write") == (spec.writes is not None)
    params["properties"].clear()  # each call hands out its own copy
    assert spec.openai_function()["function"]["parameters"]["properties"]


def test_an_id_longer_than_a_fhir_id_is_refused_in_one_line():
    session = make_session(tools=["patient_detail"])
    out = asyncio.run(session.call("patient_detail", patient_id="p" * 65))
    assert out["error"]["code"] == "invalid_args" and "patient_id" in out["error"]["message"]


def test_session_lists_only_the_manifest():
    session = make_session(tools=["patient_search", "finish"])
    assert [t.name for t in session.tools()] == ["patient_search", "finish"]


# --- structured errors, never exceptions ---------------------------------------------------------------------------


def test_unknown_tool_is_a_recorded_error():
    session = make_session()
    out = call(session, "no_such_tool", x=1)
    assert out["ok"] is False and out["error"]["code"] == "unknown_tool"
    (event,) = session.events
    assert (event.step, event.tool, event.kind, event.ok, event.args) == (1, "no_such_tool", "unknown", False, {"x": 1})
    assert event.error == out["error"]


def test_a_tool_outside_the_manifest_is_unknown():
    session = make_session(tools=["patient_search", "finish"])
    out = call(session, "patient_detail", patient_id="p1")
    assert out["error"]["code"] == "unknown_tool"
    assert session.events[0].result is None


@pytest.mark.parametrize(
    "tool, args, where",
    [
        ("patient_detail", {}, "patient_id"),
        ("patient_detail", {"patient_id": "p1", "bogus": 1}, "bogus"),
        ("record_search", {"patient_id": "p1", "type": "Spaceship"}, "type"),
        ("record_search", {"patient_id": "p1", "limit": 0}, "limit"),
        ("drug_interaction_check", {"drugs": ["奥美拉唑"]}, "drugs"),
        ("patient_search", {}, None),
    ],
)
def test_invalid_arguments_are_a_recorded_error(tool, args, where):
    session = make_session()
    out = call(session, tool, **args)
    assert out["ok"] is False and out["error"]["code"] == "invalid_args"
    if where:
        assert out["error"]["message"].startswith(f"{where}:")
    assert session.events[0].error == out["error"] and not session.events[0].ok


@pytest.mark.parametrize(
    "value, what", [(b"MRN-1", "bytes"), (object(), "object"), ({"MRN-1"}, "set"), (float("nan"), "float nan")]
)
def test_arguments_json_cannot_carry_are_a_refused_call_not_a_string(value, what):
    """An in-process agent's call (as a worker's, tests/workers/test_hostile_agents.py): recorded as refused, the tool not
    run on the value written as a string, counted against the call budget; the trial goes on."""
    session = make_session(budget={"max_calls": 2})
    out = asyncio.run(LocalToolClient(session).call("patient_search", mrn=value))
    error = {"code": "invalid_args", "message": f"args.mrn: {what} is not a JSON value"}
    assert out == {"ok": False, "error": error}
    (event,) = session.events
    assert (event.ok, event.error, event.result, event.args) == (False, error, None, {"mrn": f"<{what}>"})
    assert call(session, "patient_search", mrn="MRN-1")["result"]["patients"][0]["patient_id"] == "p1"
    with pytest.raises(BudgetExceeded):
        call(session, "patient_search", mrn="MRN-1")


def test_unknown_patient_is_a_recorded_error_not_a_denial():
    session = make_session()
    out = call(session, "patient_detail", patient_id="p404")
    assert out == {"ok": False, "error": {"code": "not_found", "message": "no patient p404"}}
    assert session.events[0].denied is None


def test_session_keeps_working_after_errors():
    session = make_session()
    call(session, "no_such_tool")
    call(session, "patient_detail")
    out = call(session, "patient_detail", patient_id="p1")
    assert out["ok"] and out["result"]["mrn"] == "MRN-1" and out["result"]["age"] == 56
    assert [e.step for e in session.events] == [1, 2, 3]
    assert [e.ok for e in session.events] == [False, False, True]
    for event in session.events:
        assert type(event)(**json.loads(compact_json(vars(event)))) == event  # the record survives its JSON


# --- policy -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tool, args",
    [
        ("patient_detail", {"patient_id": "p2"}),
        ("record_search", {"patient_id": "p2", "code": "8480-6"}),
        ("examination_request_create", {"patient_id": "p2", "name": "心电图"}),
    ],
)
def test_another_patient_is_denied(tool, args):
    session = make_session()
    out = call(session, tool, **args)
    assert out["ok"] is False and out["error"]["code"] == "denied"
    event = session.events[0]
    assert event.denied == CROSS_PATIENT
    assert event.result is None and event.changes == [] and session.view.changes == []


def test_patient_search_may_find_another_patient():
    session = make_session()
    out = call(session, "patient_search", mrn="MRN-2")
    assert [p["patient_id"] for p in out["result"]["patients"]] == ["p2"]
    assert [p["patient_id"] for p in call(session, "patient_search", name="测试")["result"]["patients"]] == ["p1", "p2"]


def test_write_of_a_type_outside_the_policy_is_denied():
    session = make_session(policy={"writable_types": ["ServiceRequest"]})
    out = call(session, "medication_request_create", **rx())
    assert out["error"]["code"] == "denied"
    assert session.events[0].denied == UNAUTHORIZED_WRITE
    assert session.events[0].kind == "write"
    assert session.view.changes == [] and created(session, "MedicationRequest") == []
    assert call(session, "examination_request_create", patient_id="p1", name="心电图")["ok"]


def test_write_of_an_allowed_type_is_stamped_with_the_frozen_clock():
    session = make_session(policy={"writable_types": ["MedicationRequest"]})
    out = call(session, "medication_request_create", **rx(reason="胃溃疡"))
    assert out["ok"]
    (request,) = created(session, "MedicationRequest")
    assert request["id"] == out["result"]["id"]
    assert datetime.fromisoformat(request["authoredOn"]) == datetime(2026, 11, 30, 9, tzinfo=TZ8)
    assert request["dosageInstruction"][0]["doseAndRate"][0]["doseQuantity"] == {"value": 20.0, "unit": "mg"}
    event = session.events[0]
    assert event.changes == [op for step, op in session.view.changes if step == event.step]
    assert event.changes and event.changes[0]["op"] == "add"


PRECEDENCE_RULE = {"action": "medication_request_create", "requires": ["patient_history", "drug_interaction_check"]}


def test_precedence_breach_is_flagged_when_not_enforced():
    session = make_session(policy={"writable_types": ["MedicationRequest"], "precedence": [PRECEDENCE_RULE]})
    first = call(session, "medication_request_create", **rx())
    assert first["ok"]
    assert session.events[-1].flags == [f"{PRECEDENCE}:patient_history", f"{PRECEDENCE}:drug_interaction_check"]
    call(session, "patient_history", patient_id="p1")
    call(session, "drug_interaction_check", drugs=["奥美拉唑"])  # invalid: a failed call does not count
    assert call(session, "medication_request_create", **rx())["ok"]
    assert session.events[-1].flags == [f"{PRECEDENCE}:drug_interaction_check"]
    call(session, "drug_interaction_check", drugs=["奥美拉唑", "硝苯地平"])
    call(session, "medication_request_create", **rx())
    assert session.events[-1].flags == []
    assert len(created(session, "MedicationRequest")) == 3


def test_precedence_breach_is_denied_when_enforced():
    rule = PRECEDENCE_RULE | {"enforce": True}
    session = make_session(policy={"writable_types": ["MedicationRequest"], "precedence": [rule]})
    call(session, "patient_history", patient_id="p1")
    out = call(session, "medication_request_create", **rx())
    assert out["error"]["code"] == "denied" and "drug_interaction_check" in out["error"]["message"]
    assert session.events[-1].denied == PRECEDENCE
    assert created(session, "MedicationRequest") == []
    call(session, "drug_interaction_check", drugs=["奥美拉唑", "硝苯地平"])
    assert call(session, "medication_request_create", **rx())["ok"]
    assert session.events[-1].denied is None and session.events[-1].flags == []
    assert len(created(session, "MedicationRequest")) == 1


def test_precedence_rules_for_other_tools_do_not_apply():
    session = make_session(
        policy={"writable_types": ["ServiceRequest"], "precedence": [PRECEDENCE_RULE | {"enforce": True}]}
    )
    assert call(session, "examination_request_create", patient_id="p1", name="胃镜")["ok"]
    assert session.events[-1].flags == []


# --- idempotency --------------------------------------------------------------------------------------------------


def test_same_idempotency_key_writes_once_and_returns_the_same_result():
    session = make_session(policy={"writable_types": ["MedicationRequest"]})
    first = call(session, "medication_request_create", **rx("k1"))
    second = call(session, "medication_request_create", **rx("k1"))
    assert first["ok"] and second == first
    assert len(created(session, "MedicationRequest")) == 1
    assert session.events[1].changes == [] and "idempotent_replay" in session.events[1].flags
    third = call(session, "medication_request_create", **rx("k2"))
    assert third["result"]["id"] != first["result"]["id"]
    assert len(created(session, "MedicationRequest")) == 2


def test_writes_without_a_key_are_not_deduplicated():
    session = make_session()
    ids = {
        call(session, "examination_request_create", patient_id="p1", name="心电图")["result"]["id"] for _ in range(2)
    }
    assert len(ids) == 2 and len(created(session, "ServiceRequest")) == 2


def test_idempotency_keys_are_per_tool():
    session = make_session(policy={"writable_types": ["MedicationRequest", "ServiceRequest"]})
    call(session, "medication_request_create", **rx("same"))
    out = call(session, "examination_request_create", patient_id="p1", name="胃镜", idempotency_key="same")
    assert out["result"]["resourceType"] == "ServiceRequest"
    assert len(created(session, "ServiceRequest")) == 1


# --- faults -------------------------------------------------------------------------------------------------------


def test_fault_fires_on_exactly_the_nth_call():
    session = make_session(faults=[{"tool": "record_search", "on_call": 2, "kind": "timeout", "message": "slow"}])
    outs = []
    for _ in range(3):
        outs.append(call(session, "record_search", patient_id="p1"))
        call(session, "patient_detail", patient_id="p1")  # other tools neither count nor fail
    assert [o["ok"] for o in outs] == [True, False, True]
    assert outs[1]["error"] == {"code": "timeout", "message": "slow"}
    assert [e.fault for e in session.events] == [None, None, "timeout", None, None, None]
    assert all(e.ok for e in session.events if e.tool == "patient_detail")


def test_error_fault_on_a_write_changes_nothing_and_the_retry_works():
    session = make_session(faults=[{"tool": "examination_request_create", "kind": "error"}])
    out = call(session, "examination_request_create", patient_id="p1", name="胃镜", idempotency_key="k")
    assert out["error"]["code"] == "error" and session.events[0].fault == "error"
    assert session.view.changes == [] and session.events[0].changes == []
    retry = call(session, "examination_request_create", patient_id="p1", name="胃镜", idempotency_key="k")
    assert retry["ok"] and session.events[1].fault is None
    assert len(created(session, "ServiceRequest")) == 1


# --- budgets ------------------------------------------------------------------------------------------------------


def test_the_call_past_max_calls_raises():
    session = make_session(budget={"max_calls": 3})
    call(session, "patient_detail", patient_id="p1")
    call(session, "no_such_tool")  # failed calls count too
    call(session, "finish")
    assert session.exceeded is None
    with pytest.raises(BudgetExceeded):
        call(session, "patient_detail", patient_id="p1")
    assert len(session.events) == 3
    assert "calls" in session.exceeded


def test_cost_past_max_cost_raises():
    session = make_session(budget={"max_cost": 0.5})
    session.charge(0.3)
    session.charge(0.2)
    assert session.exceeded is None
    with pytest.raises(BudgetExceeded):
        session.charge(0.01)
    assert "cost" in session.exceeded


# --- read tools ---------------------------------------------------------------------------------------------------


def test_record_search_by_code_window_and_limit():
    session = make_session()
    found = call(session, "record_search", patient_id="p1", code="8480-6")["result"]
    assert found["total"] == 2 and [r["id"] for r in found["records"]] == ["o1", "o2"]
    recent = call(session, "record_search", patient_id="p1", last_hours=5)["result"]  # since 04:00 +08:00
    assert [r["id"] for r in recent["records"]] == ["o2", "o3"]
    newest = call(session, "record_search", patient_id="p1", limit=1)["result"]
    assert newest["total"] == 3 and [r["id"] for r in newest["records"]] == ["o3"]
    window = call(
        session, "record_search", patient_id="p1", since="2026-11-29T22:00:00Z", until="2026-11-30T06:30:00+08:00"
    )["result"]
    assert [r["id"] for r in window["records"]] == ["o2"]


def test_record_search_mixes_a_naive_since_with_last_hours():
    """A since without a zone is read in the EHR's zone; the later bound of since and last_hours wins."""
    session = make_session()
    out = call(session, "record_search", patient_id="p1", since="2026-11-30T06:30:00", last_hours=48)
    assert out["ok"], out
    assert [r["id"] for r in out["result"]["records"]] == ["o3"]
    out = call(session, "record_search", patient_id="p1", since="2026-11-01T00:00:00", last_hours=2.5)
    assert [r["id"] for r in out["result"]["records"]] == ["o3"]


def test_reads_see_the_trials_own_writes():
    session = make_session()
    call(session, "examination_request_create", patient_id="p1", name="胃镜", priority="urgent")
    requests = call(session, "examination_search", patient_id="p1", name="胃")["result"]["requests"]
    assert [r["name"] for r in requests] == ["胃镜"]
    history = call(session, "patient_history", patient_id="p1")["result"]
    assert [c["name"] for c in history["conditions"]] == ["胃溃疡"]
    assert [a["name"] for a in history["allergies"]] == ["青霉素"]
    meds = call(session, "medication_search", patient_id="p1", status="active")["result"]["medications"]
    assert [m["name"] for m in meds] == ["硝苯地平"]
    assert call(session, "medication_search", patient_id="p1", status="stopped")["result"]["medications"] == []


# --- knowledge tools ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["奥美拉唑", "omeprazole", " Omeprazole ", "OMEPRAZOLE"])
def test_drug_info_by_name_or_alias(name):
    out = call(make_session(), "drug_info", name=name)
    assert out["ok"]
    info = out["result"]
    assert info["name"] == "奥美拉唑" and "aliases" not in info
    assert info["usual_dose"] == "20 mg" and info["route"] == "oral"


def test_drug_info_unknown_drug():
    out = call(make_session(), "drug_info", name="unobtainium")
    assert out["error"]["code"] == "not_found"


def test_every_alias_in_the_table_resolves():
    session = make_session(budget={"max_calls": 500})
    for drug in table("drugs"):
        for alias in drug.get("aliases", []):
            assert call(session, "drug_info", name=alias.upper())["result"]["name"] == drug["name"]


def test_interaction_check_finds_every_known_pair():
    session = make_session()
    out = call(session, "drug_interaction_check", drugs=["Clopidogrel", "奥美拉唑"])["result"]
    assert out["checked"] == sorted(["氯吡格雷", "奥美拉唑"])
    assert [(sorted(i["drugs"]), i["severity"]) for i in out["interactions"]] == [
        (sorted(["奥美拉唑", "氯吡格雷"]), "major")
    ]

    three = call(session, "drug_interaction_check", drugs=["warfarin", "aspirin", "omeprazole"])["result"]
    pairs = {frozenset(i["drugs"]): i["severity"] for i in three["interactions"]}
    assert pairs == {frozenset({"华法林", "阿司匹林"}): "major", frozenset({"奥美拉唑", "华法林"}): "moderate"}


def test_interaction_check_without_interactions():
    session = make_session()
    assert call(session, "drug_interaction_check", drugs=["硝苯地平", "奥美拉唑"])["result"]["interactions"] == []
    same = call(session, "drug_interaction_check", drugs=["omeprazole", "奥美拉唑"])["result"]
    assert same == {"checked": ["奥美拉唑"], "interactions": []}


def test_differential_diagnosis_ranks_by_matching_symptoms():
    session = make_session()
    out = call(session, "differential_diagnosis", symptoms=["胸痛", "撕裂样痛", "背痛"])["result"]["candidates"]
    top = out[0]
    assert top["diagnosis"] == "主动脉夹层" and sorted(top["matched"]) == sorted(["胸痛", "撕裂样痛", "背痛"])
    assert top["recommended_exams"] == ["胸部CTA"]
    assert all(len(c["matched"]) == 1 for c in out[1:])
    keys = [(-len(c["matched"]), -c["score"]) for c in out]
    assert keys == sorted(keys)
    assert "消化性溃疡" not in {c["diagnosis"] for c in out}


def test_differential_diagnosis_is_case_insensitive_and_scores_by_share():
    out = call(make_session(), "differential_diagnosis", symptoms=["Chest Pain", "DYSPNEA"])["result"]["candidates"]
    assert out[0]["diagnosis"] == "肺栓塞" and len(out[0]["matched"]) == 2
    row = next(r for r in table("differentials") if r["diagnosis"] == "肺栓塞")
    assert out[0]["score"] == round(2 / len(row["symptoms"]), 2)
    assert call(make_session(), "differential_diagnosis", symptoms=["无关症状"])["result"]["candidates"] == []


def test_a_crashing_tool_is_a_recorded_error_and_the_session_goes_on(monkeypatch):
    from dataclasses import replace

    def broken(ctx, args):
        raise ZeroDivisionError("bug inside the tool")

    from forge_kernel.catalog import CATALOG

    entry = CATALOG.entries[("tool", "drug_info")]
    monkeypatch.setitem(CATALOG.entries, ("tool", "drug_info"), replace(entry, value=replace(entry.value, run=broken)))
    session = make_session()
    reply = call(session, "drug_info", name="奥美拉唑")
    assert reply == {"ok": False, "error": {"code": "tool_crash", "message": "ZeroDivisionError"}}
    assert session.events[-1].error["code"] == "tool_crash"
    assert call(session, "patient_detail", patient_id="p1")["ok"]


def test_written_resources_get_consecutive_ids():
    session = make_session(policy={"writable_types": ["Observation", "ServiceRequest"]})
    ids = [
        call(session, "vital_sign_create", patient_id="p1", name="体温", value=36.8 + i / 10, unit="Cel")["result"][
            "id"
        ]
        for i in range(2)
    ]
    ids.append(call(session, "examination_request_create", patient_id="p1", name="心电图")["result"]["id"])
    assert ids == ["observation-new-1", "observation-new-2", "servicerequest-new-3"]
