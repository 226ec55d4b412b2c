"""Write tools: each creates one FHIR resource in the trial's view, stamped with the frozen clock."""
from __future__ import annotations

import re
from typing import Literal

from pydantic import Field

from .base import Args, ToolContext, tool
from .reads import PatientArgs, require_patient

Route = Literal["oral", "iv", "im", "sc", "inhaled", "topical", "sublingual"]


class WriteArgs(PatientArgs):
    idempotency_key: str | None = Field(None, description="Repeat a write with the same key and nothing new is created.")


def stamp(ctx: ToolContext) -> str:
    return ctx.view.now.isoformat()


class ExaminationRequestArgs(WriteArgs):
    name: str = Field(min_length=1, description="Name of the examination, e.g. 心电图.")
    reason: str | None = None
    priority: Literal["routine", "urgent", "asap", "stat"] = "routine"


@tool("examination_request_create", kind="write", writes="ServiceRequest")
def examination_request_create(ctx: ToolContext, args: ExaminationRequestArgs) -> dict:
    """Request an examination for the patient (creates a ServiceRequest)."""
    require_patient(ctx, args.patient_id)
    resource = {
        "resourceType": "ServiceRequest", "status": "active", "intent": "order", "priority": args.priority,
        "code": {"text": args.name}, "subject": {"reference": f"Patient/{args.patient_id}"},
        "authoredOn": stamp(ctx),
    }
    if args.reason:
        resource["reasonCode"] = [{"text": args.reason}]
    created = ctx.view.create(resource)
    return {"id": created["id"], "resourceType": "ServiceRequest", "status": "active", "name": args.name}


class MedicationRequestArgs(WriteArgs):
    medication: str = Field(min_length=1, description="Drug name.")
    dose: str = Field(description="Dose with unit, e.g. '20 mg'.")
    frequency: str = Field(description="qd, bid, tid, qid, q8h, qn, prn or once.")
    route: Route
    reason: str | None = None


DOSE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([^\d\s].*?)\s*$")


@tool("medication_request_create", kind="write", writes="MedicationRequest")
def medication_request_create(ctx: ToolContext, args: MedicationRequestArgs) -> dict:
    """Prescribe a drug for the patient (creates an active MedicationRequest)."""
    require_patient(ctx, args.patient_id)
    dosage = {"text": f"{args.medication} {args.dose} {args.frequency} {args.route}",
              "timing": {"code": {"text": args.frequency}}, "route": {"text": args.route}}
    parsed = DOSE.match(args.dose)
    if parsed:
        dosage["doseAndRate"] = [{"doseQuantity": {"value": float(parsed[1]), "unit": parsed[2]}}]
    resource = {
        "resourceType": "MedicationRequest", "status": "active", "intent": "order",
        "medicationCodeableConcept": {"text": args.medication}, "subject": {"reference": f"Patient/{args.patient_id}"},
        "authoredOn": stamp(ctx), "dosageInstruction": [dosage],
    }
    if args.reason:
        resource["reasonCode"] = [{"text": args.reason}]
    created = ctx.view.create(resource)
    return {"id": created["id"], "resourceType": "MedicationRequest", "status": "active", "text": dosage["text"]}

