"""Constructors of the FHIR R4 resources the EHR holds: used by write tools and by fixture builders."""

from __future__ import annotations

import base64
import re
from typing import Any

DOSE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([^\d\s.,;，；][^\s,;，；]*)?\s*")
"""A dose as one amount: a number and the unit written after it, with or without a space ("20mg", "2 吸")."""

MRN_SYSTEM = "urn:forge:mrn"
"""The identifier system of the MRNs forge's own fixtures give."""
IDENTIFIER_TYPES = "http://terminology.hl7.org/CodeSystem/v2-0203"
"""HL7 v2 table 0203, the identifier types: ``MR`` is a medical record number."""


def ref(patient_id: str) -> dict:
    return {"reference": f"Patient/{patient_id}"}


def concept(text: str, code: str | None = None, system: str | None = None) -> dict:
    out: dict[str, Any] = {"text": text}
    if code:
        out["coding"] = [
            {"system": system, "code": code, "display": text} if system else {"code": code, "display": text}
        ]
    return out


def patient(pid: str, name: str, gender: str, birth_date: str, mrn: str) -> dict:
    return {
        "resourceType": "Patient",
        "id": pid,
        "identifier": [{"system": MRN_SYSTEM, "value": mrn}],
        "name": [{"text": name}],
        "gender": gender,
        "birthDate": birth_date,
    }


def observation(
    oid: str,
    pid: str,
    name: str,
    value: float | str,
    unit: str | None,
    time: str,
    category: str = "laboratory",
    code: str | None = None,
    interpretation: str | None = None,
) -> dict:
    obs: dict[str, Any] = {
        "resourceType": "Observation",
        "id": oid,
        "status": "final",
        "category": [
            {
                "coding": [{"system": "http://terminology.hl7.org/CodeSystem/observation-category", "code": category}],
                "text": category,
            }
        ],
        "code": concept(name, code, "http://loinc.org" if code else None),
        "subject": ref(pid),
        "effectiveDateTime": time,
    }
    if isinstance(value, str):
        obs["valueString"] = value
    else:
        obs["valueQuantity"] = {"value": value, "unit": unit}
    if interpretation:
        obs["interpretation"] = [{"text": interpretation}]
    return obs


def condition(cid: str, pid: str, name: str, onset: str, status: str = "active") -> dict:
    return {
        "resourceType": "Condition",
        "id": cid,
        "subject": ref(pid),
        "code": concept(name),
        "clinicalStatus": {
            "coding": [{"system": "http://terminology.hl7.org/CodeSystem/condition-clinical", "code": status}],
            "text": status,
        },
        "onsetDateTime": onset,
    }


def allergy(aid: str, pid: str, substance: str, reaction: str, recorded: str, criticality: str = "high") -> dict:
    return {
        "resourceType": "AllergyIntolerance",
        "id": aid,
        "patient": ref(pid),
        "code": concept(substance),
        "criticality": criticality,
        "recordedDate": recorded,
        "reaction": [{"manifestation": [concept(reaction)]}],
    }


def dosage(medication: str, dose: str, frequency: str, route: str) -> dict:
    """A Dosage with its parts; a dose that is one amount ('20 mg', '20mg', '0.5 g') also becomes a doseQuantity."""
    out: dict[str, Any] = {
        "text": f"{medication} {dose} {frequency} {route}",
        "timing": {"code": {"text": frequency}},
        "route": {"text": route},
    }
    amount = DOSE.fullmatch(dose)
    if amount:
        out["doseAndRate"] = [{"doseQuantity": {"value": float(amount[1]), "unit": amount[2] or ""}}]
    return out


def medication_request(
    mid: str | None,
    pid: str,
    medication: str,
    dose: str,
    frequency: str,
    route: str,
    authored: str,
    status: str = "active",
    reason: str | None = None,
) -> dict:
    out: dict[str, Any] = {
        "resourceType": "MedicationRequest",
        "status": status,
        "intent": "order",
        "medicationCodeableConcept": concept(medication),
        "subject": ref(pid),
        "authoredOn": authored,
        "dosageInstruction": [dosage(medication, dose, frequency, route)],
    }
    if mid:
        out["id"] = mid
    if reason:
        out["reasonCode"] = [concept(reason)]
    return out


def service_request(
    sid: str | None,
    pid: str,
    name: str,
    authored: str,
    status: str = "active",
    priority: str = "routine",
    reason: str | None = None,
    category: str = "examination",
    about: str | None = None,
) -> dict:
    """A request for a service; ``category`` is examination, referral, immunization, device or nursing."""
    out: dict[str, Any] = {
        "resourceType": "ServiceRequest",
        "status": status,
        "intent": "order",
        "category": [concept(category)],
        "priority": priority,
        "code": concept(name),
        "subject": ref(pid),
        "authoredOn": authored,
    }
    if sid:
        out["id"] = sid
    if reason:
        out["reasonCode"] = [concept(reason)]
    if about:
        out["supportingInfo"] = [{"reference": about}]
    return out


def encounter(eid: str, pid: str, kind: str, start: str, end: str | None = None, reason: str | None = None) -> dict:
    out: dict[str, Any] = {
        "resourceType": "Encounter",
        "id": eid,
        "status": "finished" if end else "in-progress",
        "class": {
            "system": "http://terminology.hl7.org/CodeSystem/v3-ActCode",
            "code": {"inpatient": "IMP", "emergency": "EMER"}.get(kind, "AMB"),
            "display": kind,
        },
        "subject": ref(pid),
        "period": {"start": start, **({"end": end} if end else {})},
    }
    if reason:
        out["reasonCode"] = [concept(reason)]
    return out


def procedure(prid: str, pid: str, name: str, performed: str) -> dict:
    return {
        "resourceType": "Procedure",
        "id": prid,
        "status": "completed",
        "subject": ref(pid),
        "code": concept(name),
        "performedDateTime": performed,
    }


def family_history(fid: str, pid: str, relation: str, condition_name: str) -> dict:
    return {
        "resourceType": "FamilyMemberHistory",
        "id": fid,
        "status": "completed",
        "patient": ref(pid),
        "relationship": concept(relation),
        "condition": [{"code": concept(condition_name)}],
    }


def medication_statement(
    msid: str, pid: str, medication: str, dose: str, frequency: str, route: str, since: str, status: str = "active"
) -> dict:
    return {
        "resourceType": "MedicationStatement",
        "id": msid,
        "status": status,
        "medicationCodeableConcept": concept(medication),
        "subject": ref(pid),
        "effectiveDateTime": since,
        "dosage": [dosage(medication, dose, frequency, route)],
    }


def diagnostic_report(did: str, pid: str, name: str, issued: str, conclusion: str) -> dict:
    return {
        "resourceType": "DiagnosticReport",
        "id": did,
        "status": "final",
        "code": concept(name),
        "subject": ref(pid),
        "issued": issued,
        "conclusion": conclusion,
    }


def device(did: str, pid: str, kind: str) -> dict:
    return {"resourceType": "Device", "id": did, "status": "active", "type": concept(kind), "patient": ref(pid)}


def device_use(
    uid: str, pid: str, device_id: str, inserted: str, site: str | None = None, note: str | None = None
) -> dict:
    """A DeviceUseStatement: the device is in use since ``inserted``."""
    out: dict[str, Any] = {
        "resourceType": "DeviceUseStatement",
        "id": uid,
        "status": "active",
        "subject": ref(pid),
        "device": {"reference": f"Device/{device_id}"},
        "timingPeriod": {"start": inserted},
    }
    if site:
        out["bodySite"] = concept(site)
    if note:
        out["note"] = [{"text": note}]
    return out


def note(nid: str, pid: str, title: str, text: str, date: str) -> dict:
    """A clinical note: a DocumentReference with the text as a base64 attachment."""
    return {
        "resourceType": "DocumentReference",
        "id": nid,
        "status": "current",
        "subject": ref(pid),
        "type": concept(title),
        "date": date,
        "description": title,
        "content": [
            {
                "attachment": {
                    "contentType": "text/plain; charset=utf-8",
                    "data": base64.b64encode(text.encode()).decode(),
                }
            }
        ],
    }


def task(
    tid: str | None,
    pid: str,
    kind: str,
    description: str,
    authored: str,
    reason: str | None = None,
    priority: str = "routine",
) -> dict:
    """A Task: a follow-up or an escalation to a human (``kind`` is its code text)."""
    out: dict[str, Any] = {
        "resourceType": "Task",
        "status": "requested",
        "intent": "order",
        "priority": priority,
        "code": concept(kind),
        "description": description,
        "for": ref(pid),
        "authoredOn": authored,
    }
    if tid:
        out["id"] = tid
    if reason:
        out["reasonCode"] = concept(reason)
    return out


def assessment(
    aid: str | None, pid: str, protocol: str, version: str, eligibility: str, authored: str, criteria: list[dict]
) -> dict:
    """A trial-eligibility assessment: one component per criterion, evidence in derivedFrom."""
    out: dict[str, Any] = {
        "resourceType": "Observation",
        "status": "final",
        "code": concept("trial eligibility assessment"),
        "category": [concept("survey")],
        "subject": ref(pid),
        "effectiveDateTime": authored,
        "focus": [{"reference": f"ResearchStudy/{protocol}", "display": f"{protocol} v{version}"}],
        "valueCodeableConcept": concept(eligibility, eligibility),
        "component": [
            {
                "code": concept(c["criterion_id"]),
                "valueCodeableConcept": concept(c["status"], c["status"]),
                **({"interpretation": [concept(c["reason"])]} if c.get("reason") else {}),
            }
            for c in criteria
        ],
    }
    evidence = [{"reference": ref_, "display": c["criterion_id"]} for c in criteria for ref_ in c.get("evidence", [])]
    if evidence:
        out["derivedFrom"] = evidence
    if aid:
        out["id"] = aid
    return out


def patient_name(patient: dict) -> str:
    """The display name of a Patient."""
    name = (patient.get("name") or [{}])[0]
    return name.get("text") or " ".join([*name.get("given", []), name.get("family", "")]).strip()


def is_mrn(identifier: dict) -> bool:
    """Whether an identifier is a medical record number: typed MR (v2-0203) or of forge's MRN system."""
    if identifier.get("system") == MRN_SYSTEM:
        return True
    codings = (identifier.get("type") or {}).get("coding") or []
    return any(c.get("code") == "MR" and c.get("system") in (IDENTIFIER_TYPES, None) for c in codings)


def patient_mrn(patient: dict) -> str | None:
    """The medical record number of a Patient: the value of its first identifier that is one (``is_mrn``), not of
    its first identifier (Synthea's first is its own id), or None."""
    for identifier in patient.get("identifier", []):
        if isinstance(identifier, dict) and identifier.get("value") and is_mrn(identifier):
            return str(identifier["value"])
    return None


def bundle(resources: list[dict]) -> dict:
    """A collection Bundle of the resources (a fixture file)."""
    return {"resourceType": "Bundle", "type": "collection", "entry": [{"resource": r} for r in resources]}
