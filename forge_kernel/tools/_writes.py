"""Write tools: each creates one FHIR resource in the trial's view, stamped with the frozen clock."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator, Field

from ..ehr import assessment, medication_request, observation, service_request, task
from ._reads import PatientArgs, require_patient
from .base import ID_MAX, Args, Refers, ToolContext, ToolError, tool
from .knowledge import dose_code


def as_code(kind: str) -> BeforeValidator:
    """A validator that stores a route or frequency as its code when the dose-terms table knows the wording."""

    def coded(term: object) -> object:
        return (dose_code(kind, term) or term) if isinstance(term, str) else term

    return BeforeValidator(coded)


Route = Annotated[Literal["oral", "iv", "im", "sc", "inhaled", "topical", "sublingual"], as_code("route")]
"""A route code; other usual wordings (po, 口服, intravenous, 静脉, ...) are accepted and stored as the code."""
Frequency = Annotated[str, as_code("frequency")]


class WriteArgs(PatientArgs):
    idempotency_key: str | None = Field(
        None, max_length=ID_MAX, description="Repeat a write with the same key and nothing new is created."
    )


class ExaminationRequestArgs(WriteArgs):
    name: str = Field(min_length=1, description="Name of the examination, e.g. 心电图.")
    reason: str | None = None
    priority: Literal["routine", "urgent", "asap", "stat"] = "routine"


@tool("examination_request_create", kind="write", writes="ServiceRequest")
def examination_request_create(ctx: ToolContext, args: ExaminationRequestArgs) -> dict:
    """Request an examination for the patient (creates a ServiceRequest)."""
    require_patient(ctx, args.patient_id)
    created = ctx.view.create(
        service_request(
            None, args.patient_id, args.name, ctx.view.now.isoformat(), priority=args.priority, reason=args.reason
        )
    )
    return {"id": created["id"], "resourceType": "ServiceRequest", "status": "active", "name": args.name}


class MedicationRequestArgs(WriteArgs):
    medication: str = Field(min_length=1, description="Drug name.")
    dose: str = Field(description="Dose with unit, e.g. '20 mg'.")
    frequency: Frequency = Field(
        description="qd, bid, tid, qid, qn, qw, prn or once; usual other wordings "
        "(twice daily, 每日两次, q12h, ...) are stored as these codes."
    )
    route: Route = Field(description="Route code; usual other wordings (po, 口服, intravenous, ...) are accepted.")
    reason: str | None = None


@tool("medication_request_create", kind="write", writes="MedicationRequest")
def medication_request_create(ctx: ToolContext, args: MedicationRequestArgs) -> dict:
    """Prescribe a drug for the patient (creates an active MedicationRequest)."""
    require_patient(ctx, args.patient_id)
    created = ctx.view.create(
        medication_request(
            None,
            args.patient_id,
            args.medication,
            args.dose,
            args.frequency,
            args.route,
            ctx.view.now.isoformat(),
            reason=args.reason,
        )
    )
    return {
        "id": created["id"],
        "resourceType": "MedicationRequest",
        "status": "active",
        "text": created["dosageInstruction"][0]["text"],
    }


class VitalSignArgs(WriteArgs):
    name: str = Field(min_length=1, description="e.g. 体温, 收缩压, 心率.")
    value: float
    unit: str
    code: str | None = Field(None, description="LOINC code, if known.")


@tool("vital_sign_create", kind="write", writes="Observation")
def vital_sign_create(ctx: ToolContext, args: VitalSignArgs) -> dict:
    """Record one vital sign for the patient, measured now (creates an Observation)."""
    require_patient(ctx, args.patient_id)
    created = ctx.view.create(
        observation(
            ctx.view.next_id("Observation"),
            args.patient_id,
            args.name,
            args.value,
            args.unit,
            ctx.view.now.isoformat(),
            "vital-signs",
            args.code,
        )
    )
    return {"id": created["id"], "resourceType": "Observation", "name": args.name}


class ServiceArgs(WriteArgs):
    name: str = Field(min_length=1)
    reason: str | None = None
    priority: Literal["routine", "urgent", "asap", "stat"] = "routine"


class DeviceOrderArgs(ServiceArgs):
    device_id: Annotated[str, Refers("Device")] = Field(
        max_length=ID_MAX, description="The device, as device_list returns it."
    )
    action: Literal["replace", "remove", "maintain"]


def service_tool(name: str, category: str, doc: str, params: type[ServiceArgs] = ServiceArgs) -> None:
    """Register a write tool that creates a ServiceRequest of one category."""

    def run(ctx: ToolContext, args: ServiceArgs) -> dict:
        require_patient(ctx, args.patient_id)
        about, title = None, args.name
        if isinstance(args, DeviceOrderArgs):
            if ctx.view.get("Device", args.device_id) is None:
                raise ToolError("not_found", f"no device {args.device_id}")
            about, title = f"Device/{args.device_id}", f"{args.action}: {args.name}"
        created = ctx.view.create(
            service_request(
                None,
                args.patient_id,
                title,
                ctx.view.now.isoformat(),
                priority=args.priority,
                reason=args.reason,
                category=category,
                about=about,
            )
        )
        return {"id": created["id"], "resourceType": "ServiceRequest", "category": category, "name": title}

    run.__doc__ = doc
    run.__annotations__ = {"ctx": ToolContext, "args": params, "return": dict}
    tool(name, kind="write", writes="ServiceRequest")(run)


service_tool("referral_create", "referral", "Refer the patient to a specialty clinic; name is the specialty.")
service_tool("immunization_request_create", "immunization", "Request a vaccination; name is the vaccine.")
service_tool(
    "nursing_request_create",
    "nursing",
    "Request a nursing service, e.g. wound dressing change or pressure-injury assessment.",
)
service_tool(
    "device_order_create",
    "device",
    "Order a device to be replaced, removed or maintained; name is the device type.",
    DeviceOrderArgs,
)


class TaskArgs(WriteArgs):
    description: str = Field(min_length=1, description="What needs doing, e.g. 'repeat ANC within 7 days'.")
    reason: str | None = Field(None, description="Why, e.g. missing_lab.")


@tool("task_create", kind="write", writes="Task")
def task_create(ctx: ToolContext, args: TaskArgs) -> dict:
    """Create a follow-up Task for the care team (e.g. to obtain a missing result)."""
    require_patient(ctx, args.patient_id)
    created = ctx.view.create(
        task(None, args.patient_id, "follow-up", args.description, ctx.view.now.isoformat(), args.reason)
    )
    return {"id": created["id"], "resourceType": "Task", "kind": "follow-up"}


class EscalationArgs(WriteArgs):
    reason: str = Field(min_length=1, description="Why a human must decide.")


@tool("escalate_to_human", kind="write", writes="Task")
def escalate_to_human(ctx: ToolContext, args: EscalationArgs) -> dict:
    """Hand the decision to a clinician (creates an urgent escalation Task)."""
    require_patient(ctx, args.patient_id)
    created = ctx.view.create(
        task(None, args.patient_id, "escalation", args.reason, ctx.view.now.isoformat(), args.reason, priority="urgent")
    )
    return {"id": created["id"], "resourceType": "Task", "kind": "escalation"}


class CriterionAssessment(Args):
    criterion_id: str
    status: Literal["met", "not_met", "unknown", "conflict"]
    evidence: Annotated[list[str], Refers()] = Field(
        default_factory=list, description="References of this patient's resources, e.g. Observation/o1."
    )
    reason: str | None = Field(None, description="e.g. missing_lab, out_of_window, sources_disagree.")


class AssessmentArgs(WriteArgs):
    protocol_id: str
    protocol_version: str
    eligibility: Literal["eligible", "ineligible", "undetermined"]
    criteria: list[CriterionAssessment] = Field(min_length=1)


@tool("criterion_assessment_submit", kind="write", writes="Observation")
def criterion_assessment_submit(ctx: ToolContext, args: AssessmentArgs) -> dict:
    """Submit the eligibility assessment of one trial protocol: each criterion met / not_met / unknown / conflict."""
    require_patient(ctx, args.patient_id)
    created = ctx.view.create(
        assessment(
            None,
            args.patient_id,
            args.protocol_id,
            args.protocol_version,
            args.eligibility,
            ctx.view.now.isoformat(),
            [c.model_dump() for c in args.criteria],
        )
    )
    return {"id": created["id"], "resourceType": "Observation", "eligibility": args.eligibility}
