"""Compact, freshly built views of FHIR resources: what read tools hand to an agent."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .image import DATE_FIELDS, PERIOD_FIELDS


def concept_text(concept: Any) -> str | None:
    """The text of a CodeableConcept (its text, else its first display or code); a plain code is its own text."""
    if isinstance(concept, str):
        return concept or None
    if isinstance(concept, list):
        concept = concept[0] if concept else None
    if not isinstance(concept, dict):
        return None
    if concept.get("text"):
        return concept["text"]
    for coding in concept.get("coding", []):
        if coding.get("display") or coding.get("code"):
            return coding.get("display") or coding.get("code")
    return None


def when(resource: dict) -> str | None:
    """The resource's clinical date as written in the record."""
    for field in DATE_FIELDS:
        if isinstance(resource.get(field), str):
            return resource[field]
    for field in PERIOD_FIELDS:
        period = resource.get(field)
        if isinstance(period, dict) and period.get("start"):
            return period["start"]
    return None


def value_of(resource: dict) -> Any:
    """An Observation-like value: number with unit, text, or concept text."""
    if "valueQuantity" in resource:
        quantity = resource["valueQuantity"]
        return {"value": quantity.get("value"), "unit": quantity.get("unit")}
    for field in ("valueString", "valueBoolean", "valueInteger"):
        if field in resource:
            return resource[field]
    if "valueCodeableConcept" in resource:
        return concept_text(resource["valueCodeableConcept"])
    return None


def reference_range(resource: dict) -> dict | None:
    """An Observation's first reference range as ``{low, high, unit, text}`` (the parts it gives), or None."""
    ranges = resource.get("referenceRange")
    if not isinstance(ranges, list) or not ranges or not isinstance(ranges[0], dict):
        return None
    given = ranges[0]
    ends = {end: given[end] for end in ("low", "high") if isinstance(given.get(end), dict)}
    out: dict[str, Any] = {end: quantity.get("value") for end, quantity in ends.items()}
    unit = next((q.get("unit") for q in ends.values() if q.get("unit")), None)
    out |= {"unit": unit} if unit else {}
    out |= {"text": given["text"]} if given.get("text") else {}
    return out or None


def age_at(birth_date: str | None, now: datetime) -> int | None:
    if not birth_date:
        return None
    born = datetime.fromisoformat(birth_date[:10]).date()
    today = now.date()
    return today.year - born.year - ((today.month, today.day) < (born.month, born.day))


def summarize(resource: dict) -> dict:
    """One resource as a small dict: id, type, name, time, value, status and the fields its type needs."""
    out: dict[str, Any] = {"id": resource["id"], "type": resource["resourceType"]}
    name = concept_text(
        resource.get("code")
        or resource.get("medicationCodeableConcept")
        or resource.get("vaccineCode")
        or resource.get("type")
    )
    if name:
        out["name"] = name
    time = when(resource)
    if time:
        out["time"] = time
    value = value_of(resource)
    if value is not None:
        out["value"] = value
    reference = reference_range(resource)
    if reference:
        out["range"] = reference
    status = resource.get("status") or concept_text(resource.get("clinicalStatus"))
    if status:
        out["status"] = status
    end = next((p["end"] for p in map(resource.get, PERIOD_FIELDS) if isinstance(p, dict) and p.get("end")), None)
    if end:
        out["end"] = end
    if isinstance(resource.get("class"), dict):
        out["class"] = resource["class"].get("display") or resource["class"].get("code")
    for field in ("interpretation", "category", "reasonCode", "relationship", "criticality"):
        text = concept_text(resource.get(field))
        if text:
            out[field] = text
    if resource.get("reaction"):
        out["reaction"] = [concept_text(m) for r in resource["reaction"] for m in r.get("manifestation", [])]
    if resource.get("condition"):
        out["conditions"] = [concept_text(c.get("code")) for c in resource["condition"]]
    if resource.get("dosageInstruction") or resource.get("dosage"):
        out["dosage"] = [d.get("text") for d in resource.get("dosageInstruction") or resource["dosage"]]
    if resource.get("note"):
        out["note"] = " ".join(n.get("text", "") for n in resource["note"])
    if resource.get("conclusion"):
        out["conclusion"] = resource["conclusion"]
    if resource.get("description"):
        out["description"] = resource["description"]
    return out
