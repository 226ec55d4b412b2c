"""Write tools: each creates one FHIR resource in the trial's view, stamped with the frozen clock."""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..ehr import fhir
from .base import Args, ToolContext, tool
from .reads import PatientArgs, require_patient

Route = Literal["oral", "iv", "im", "sc", "inhaled", "topical", "sublingual"]


class WriteArgs(PatientArgs):
    idempotency_key: str | None = Field(None, description="Repeat a write with the same key and nothing new is created.")


class ExaminationRequestArgs(WriteArgs):
    name: str = Field(min_length=1, description="Name of the examination, e.g. 心电图.")
    reason: str | None = None
    priority: Literal["routine", "urgent", "asap", "stat"] = "routine"


@tool("examination_request_create", kind="write", writes="ServiceRequest")
def examination_request_create(ctx: ToolContext, args: ExaminationRequestArgs) -> dict:
    """Request an examination for the patient (creates a ServiceRequest)."""
    require_patient(ctx, args.patient_id)
    created = ctx.view.create(fhir.service_request(None, args.patient_id, args.name, ctx.view.now.isoformat(),
                                                   priority=args.priority, reason=args.reason))
    return {"id": created["id"], "resourceType": "ServiceRequest", "status": "active", "name": args.name}


class MedicationRequestArgs(WriteArgs):
    medication: str = Field(min_length=1, description="Drug name.")
    dose: str = Field(description="Dose with unit, e.g. '20 mg'.")
    frequency: str = Field(description="qd, bid, tid, qid, q8h, qn, prn or once.")
    route: Route
    reason: str | None = None


@tool("medication_request_create", kind="write", writes="MedicationRequest")
def medication_request_create(ctx: ToolContext, args: MedicationRequestArgs) -> dict:
    """Prescribe a drug for the patient (creates an active MedicationRequest)."""
    require_patient(ctx, args.patient_id)
    created = ctx.view.create(fhir.medication_request(None, args.patient_id, args.medication, args.dose,
                                                      args.frequency, args.route, ctx.view.now.isoformat(),
                                                      reason=args.reason))
    return {"id": created["id"], "resourceType": "MedicationRequest", "status": "active",
            "text": created["dosageInstruction"][0]["text"]}
