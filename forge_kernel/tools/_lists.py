"""Focused read tools: one clinical list each (vitals, labs, allergies, conditions, procedures, ...)."""

from __future__ import annotations

import base64
from datetime import timedelta

from pydantic import Field

from ..ehr import codings_of, concept_text, parse_time, search_hint
from ._reads import PatientArgs, require_patient, shown
from .base import ToolContext, tool

SIMPLE_LISTS = {
    "allergy_list": ("AllergyIntolerance", "The patient's recorded allergies and intolerances."),
    "condition_list": ("Condition", "The patient's diagnoses, with clinical status and onset."),
    "procedure_list": ("Procedure", "The patient's past procedures and operations."),
    "family_history_list": ("FamilyMemberHistory", "Conditions of the patient's relatives."),
    "encounter_list": ("Encounter", "The patient's visits and admissions, with their periods."),
}


def simple_list(rtype: str):
    def run(ctx: ToolContext, args: PatientArgs) -> dict:
        require_patient(ctx, args.patient_id)
        return {"items": [shown(ctx, r) for r in ctx.view.search(args.patient_id, rtype)]}

    return run


for _name, (_rtype, _doc) in SIMPLE_LISTS.items():
    fn = simple_list(_rtype)
    fn.__doc__ = _doc
    tool(_name, kind="read")(fn)


class ObservationArgs(PatientArgs):
    name: str | None = Field(None, description="A code or name, e.g. 收缩压, ANC, 8480-6.")
    last_hours: float | None = Field(None, gt=0, description="Only the last N hours.")
    since_days: float | None = Field(None, gt=0, description="Only the last N days.")


VITAL_SIGNS = {
    "85353-1": "vital signs panel",
    "9279-1": "respiratory rate",
    "8867-4": "heart rate",
    "2708-6": "oxygen saturation",
    "59408-5": "oxygen saturation (pulse oximetry)",
    "8310-5": "body temperature",
    "8302-2": "body height",
    "9843-4": "head circumference",
    "29463-7": "body weight",
    "39156-5": "body mass index",
    "85354-9": "blood pressure panel",
    "8480-6": "systolic blood pressure",
    "8462-4": "diastolic blood pressure",
}
"""The LOINC codes of FHIR R4's vital signs profiles (hl7.org/fhir/R4/observation-vitalsigns.html)."""


def in_category(resource: dict, category: str) -> bool:
    """The Observation's category, by text or code, is ``category`` (e.g. vital-signs, laboratory). One without a
    category is a vital sign when its LOINC code is one of ``VITAL_SIGNS``, else a laboratory result: an
    uncategorised record is shown by one of the two tools, never by neither."""
    categories = [c for c in resource.get("category") or [] if isinstance(c, dict)]
    if not categories:
        vital = any(code in VITAL_SIGNS for system, code in codings_of(resource) if system == "http://loinc.org")
        return category == ("vital-signs" if vital else "laboratory")
    return any(
        c.get("text") == category or any(x.get("code") == category for x in c.get("coding", [])) for c in categories
    )


def observations(ctx: ToolContext, args: ObservationArgs, category: str) -> dict:
    """The patient's Observations of one category, in the tighter of the two windows given, newest 200."""
    require_patient(ctx, args.patient_id)
    windows = [h for h in (args.last_hours, args.since_days and args.since_days * 24) if h]
    since = (ctx.view.now - timedelta(hours=min(windows))).timestamp() if windows else None
    found = [
        r
        for r in ctx.view.search(args.patient_id, "Observation", since=since, code=args.name)
        if in_category(r, category)
    ]
    hint = search_hint(ctx.view.image, args.patient_id, "Observation", args.name) if args.name and not found else {}
    return {"total": len(found), "items": [shown(ctx, r) for r in found[-200:]], **hint}


@tool("vital_signs", kind="read")
def vital_signs(ctx: ToolContext, args: ObservationArgs) -> dict:
    """Vital signs (blood pressure, heart rate, temperature, SpO2, weight, ...), oldest first."""
    return observations(ctx, args, "vital-signs")


@tool("lab_results", kind="read")
def lab_results(ctx: ToolContext, args: ObservationArgs) -> dict:
    """Laboratory results, oldest first, by name or code and time window."""
    return observations(ctx, args, "laboratory")


@tool("device_list", kind="read")
def device_list(ctx: ToolContext, args: PatientArgs) -> dict:
    """Devices in use (catheters, lines, tubes, drains), with insertion time and dwell days at the EHR's now."""
    require_patient(ctx, args.patient_id)
    items = []
    for use in ctx.view.search(args.patient_id, "DeviceUseStatement"):
        device_id = use["device"]["reference"].partition("/")[2]
        device = ctx.view.get("Device", device_id) or {}
        inserted = use.get("timingPeriod", {}).get("start") or use.get("timingDateTime")
        row = {
            "id": device_id,
            "type": concept_text(device.get("type")),
            "status": use.get("status"),
            "inserted": inserted,
            "site": concept_text(use.get("bodySite")),
        }
        if inserted:
            row["dwell_days"] = round((ctx.view.now.timestamp() - parse_time(inserted, ctx.view.image.tz)) / 86400, 1)
        if use.get("note"):
            row["note"] = " ".join(n.get("text", "") for n in use["note"])
        items.append(row)
    return {"items": items}


class NoteArgs(PatientArgs):
    keyword: str | None = Field(None, description="Only notes containing this text.")


def note_text(doc: dict) -> str:
    """The plain text of a DocumentReference (its attachments, base64-decoded)."""
    parts = []
    for content in doc.get("content", []):
        data = content.get("attachment", {}).get("data")
        if data:
            parts.append(base64.b64decode(data).decode("utf-8"))
    return "\n".join(parts)


@tool("note_search", kind="read")
def note_search(ctx: ToolContext, args: NoteArgs) -> dict:
    """Clinical notes, with their text, oldest first."""
    require_patient(ctx, args.patient_id)
    notes = []
    for doc in ctx.view.search(args.patient_id, "DocumentReference"):
        text = note_text(doc)
        if args.keyword and args.keyword.lower() not in text.lower():
            continue
        notes.append({**shown(ctx, doc), "text": text})
    return {"items": notes}
