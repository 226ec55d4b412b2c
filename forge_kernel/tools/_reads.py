"""Read tools over the trial's EHR view. Patient scope is enforced by the policy engine, not here."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Literal, overload

from pydantic import Field, model_validator

from ..ehr import age_at, parse_time, patient_mrn, patient_name, search_hint, summarize
from .base import ID_MAX, Args, Refers, ToolContext, ToolError, tool

SEARCHABLE = Literal[
    "Observation",
    "Condition",
    "Encounter",
    "Procedure",
    "AllergyIntolerance",
    "FamilyMemberHistory",
    "DiagnosticReport",
    "DocumentReference",
    "MedicationRequest",
    "MedicationStatement",
    "ServiceRequest",
    "Device",
    "Immunization",
    "Task",
]


class PatientArgs(Args):
    patient_id: Annotated[str, Refers("Patient")] = Field(
        max_length=ID_MAX, description="The patient's id, as patient_search returns it."
    )


def shown(ctx: ToolContext, resource: dict) -> dict:
    """A resource as read tools show it (``summarize``), the Medication a ``medicationReference`` names looked up."""
    return summarize(resource, ctx.view.get)


def require_patient(ctx: ToolContext, patient_id: str) -> dict:
    patient = ctx.view.get("Patient", patient_id)
    if patient is None:
        raise ToolError("not_found", f"no patient {patient_id}")
    return patient


class PatientSearchArgs(Args):
    name: str | None = Field(None, description="Part of the patient's name.")
    mrn: str | None = Field(None, max_length=ID_MAX, description="Medical record number, exactly.")

    @model_validator(mode="after")
    def one_criterion(self):
        if not (self.name or self.mrn):
            raise ValueError("give name or mrn")
        return self


@tool("patient_search", kind="read")
def patient_search(ctx: ToolContext, args: PatientSearchArgs) -> dict:
    """Find patients by name or medical record number; returns ids and demographics only."""
    matches = []
    for rid in ctx.view.image.patient_ids:
        patient = ctx.view.get("Patient", rid)
        assert patient is not None  # one of the image's patients
        if args.mrn and patient_mrn(patient) != args.mrn:
            continue
        if args.name and args.name.lower() not in patient_name(patient).lower():
            continue
        matches.append(
            {
                "patient_id": rid,
                "name": patient_name(patient),
                "mrn": patient_mrn(patient),
                "gender": patient.get("gender"),
                "birth_date": patient.get("birthDate"),
            }
        )
    return {"patients": matches}


@tool("patient_detail", kind="read")
def patient_detail(ctx: ToolContext, args: PatientArgs) -> dict:
    """Demographics of one patient, with age at the EHR's current time and the latest encounter."""
    patient = require_patient(ctx, args.patient_id)
    encounters = ctx.view.search(args.patient_id, "Encounter")
    died = death_date(ctx, patient)
    return {
        "patient_id": patient["id"],
        "name": patient_name(patient),
        "mrn": patient_mrn(patient),
        "gender": patient.get("gender"),
        "birth_date": patient.get("birthDate"),
        "age": age_at(patient.get("birthDate"), ctx.view.now, died),
        **({"deceased": died} if died else {"deceased": True} if patient.get("deceasedBoolean") is True else {}),
        "latest_encounter": shown(ctx, encounters[-1]) if encounters else None,
    }


def death_date(ctx: ToolContext, patient: dict) -> str | None:
    """The patient's date of death as recorded (``deceasedDateTime``), unless it is after the EHR's now."""
    died = patient.get("deceasedDateTime")
    if not isinstance(died, str) or parse_time(died, ctx.view.image.tz) > ctx.view.now.timestamp():
        return None
    return died


@tool("patient_history", kind="read")
def patient_history(ctx: ToolContext, args: PatientArgs) -> dict:
    """A patient's history: conditions, allergies, past procedures and family history."""
    require_patient(ctx, args.patient_id)
    sections = {
        "conditions": "Condition",
        "allergies": "AllergyIntolerance",
        "procedures": "Procedure",
        "family_history": "FamilyMemberHistory",
    }
    return {name: [shown(ctx, r) for r in ctx.view.search(args.patient_id, rtype)] for name, rtype in sections.items()}


class RecordSearchArgs(PatientArgs):
    type: SEARCHABLE = Field("Observation", description="FHIR resource type to search.")
    code: str | None = Field(None, description="A code or name of the concept, e.g. a LOINC code or '收缩压'.")
    last_hours: float | None = Field(None, gt=0, description="Only records from the last N hours.")
    since: datetime | None = None
    until: datetime | None = None
    limit: int = Field(50, ge=1, le=500, description="At most this many records, newest last.")


@tool("record_search", kind="read")
def record_search(ctx: ToolContext, args: RecordSearchArgs) -> dict:
    """Search a patient's clinical records by type, code and time window."""
    require_patient(ctx, args.patient_id)
    since = stamp(args.since, ctx)
    if args.last_hours is not None:
        recent = stamp(ctx.view.now - timedelta(hours=args.last_hours), ctx)
        since = recent if since is None else max(since, recent)
    found = ctx.view.search(args.patient_id, args.type, since=since, until=stamp(args.until, ctx), code=args.code)
    hint = search_hint(ctx.view.image, args.patient_id, args.type, args.code) if args.code and not found else {}
    return {"total": len(found), "records": [shown(ctx, r) for r in found[-args.limit :]], **hint}


@overload
def stamp(moment: datetime, ctx: ToolContext) -> float: ...
@overload
def stamp(moment: datetime | None, ctx: ToolContext) -> float | None: ...
def stamp(moment: datetime | None, ctx: ToolContext) -> float | None:
    if moment is None:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=ctx.view.image.tz)).timestamp()


class ExaminationSearchArgs(PatientArgs):
    name: str | None = Field(None, description="Part of the examination's name.")


@tool("examination_search", kind="read")
def examination_search(ctx: ToolContext, args: ExaminationSearchArgs) -> dict:
    """A patient's examination reports and the examinations already requested."""
    require_patient(ctx, args.patient_id)

    def matching(rtype: str) -> list[dict]:
        rows = [shown(ctx, r) for r in ctx.view.search(args.patient_id, rtype)]
        return [r for r in rows if not args.name or args.name.lower() in r.get("name", "").lower()]

    return {"reports": matching("DiagnosticReport"), "requests": matching("ServiceRequest")}


class MedicationSearchArgs(PatientArgs):
    status: str | None = Field(None, description="Only this status, e.g. active, stopped, completed.")


@tool("medication_search", kind="read")
def medication_search(ctx: ToolContext, args: MedicationSearchArgs) -> dict:
    """A patient's medication orders and statements."""
    require_patient(ctx, args.patient_id)
    rows = [
        shown(ctx, r)
        for rtype in ("MedicationRequest", "MedicationStatement")
        for r in ctx.view.search(args.patient_id, rtype)
    ]
    return {"medications": [r for r in rows if not args.status or r.get("status") == args.status]}
