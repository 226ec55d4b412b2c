"""Compact, freshly built views of FHIR resources: what read tools hand to an agent."""

from __future__ import annotations

from collections.abc import Callable
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


def quantity(value: dict) -> dict:
    """A Quantity as ``{value, unit}``."""
    return {"value": value.get("value"), "unit": value.get("unit") or value.get("code")}


def value_of(resource: dict) -> Any:
    """An Observation-like value[x] of any kind: a number with its unit, a text, a concept's text, a yes/no, a
    range ``{low, high}``, a ratio ``{numerator, denominator}``, a period ``{start, end}`` or a date and time."""
    for field, value in resource.items():
        if not field.startswith("value") or field == "value":
            continue
        kind = field[5:]
        if kind in ("Quantity", "Age", "Duration", "Count", "Distance", "Money") and isinstance(value, dict):
            return quantity(value)
        if kind == "CodeableConcept":
            return concept_text(value)
        if kind == "Range" and isinstance(value, dict):
            return {end: quantity(value[end]) for end in ("low", "high") if isinstance(value.get(end), dict)}
        if kind == "Ratio" and isinstance(value, dict):
            return {p: quantity(value[p]) for p in ("numerator", "denominator") if isinstance(value.get(p), dict)}
        if kind == "Period" and isinstance(value, dict):
            return {end: value[end] for end in ("start", "end") if end in value}
        if isinstance(value, (str, bool, int, float)):
            return value
    return None


def measured(resource: dict) -> dict:
    """What an Observation or one of its components measured: its value, or why it has none, and how it reads."""
    out: dict[str, Any] = {}
    value = value_of(resource)
    if value is not None:
        out["value"] = value
    absent = concept_text(resource.get("dataAbsentReason"))
    if absent:
        out["absent"] = absent
    interpretation = concept_text(resource.get("interpretation"))
    if interpretation:
        out["interpretation"] = interpretation
    return out


def components(resource: dict) -> list[dict]:
    """An Observation's components (a blood pressure panel's systolic and diastolic): name, codes and value."""
    rows = []
    for component in resource.get("component") or []:
        if not isinstance(component, dict):
            continue
        code = component.get("code") or {}
        codes = [c["code"] for c in code.get("coding", []) if isinstance(c, dict) and c.get("code")]
        rows.append({"name": concept_text(code), "codes": codes, **measured(component)})
    return rows


Lookup = Callable[[str, str], dict | None]
"""Finds a resource by type and id (``EHRView.get``)."""


def medication_of(resource: dict, lookup: Lookup | None) -> dict | None:
    """The Medication a ``medicationReference`` names: contained in the resource (``#med1``) or, through ``lookup``,
    a resource of its own (``Medication/med1``); None when there is none or it is not found."""
    reference = resource.get("medicationReference")
    written = reference.get("reference") if isinstance(reference, dict) else None
    if not isinstance(written, str):
        return None
    if written.startswith("#"):
        contained = (r for r in resource.get("contained") or [] if isinstance(r, dict))
        return next((r for r in contained if r.get("id") == written[1:]), None)
    rtype, _, rid = written.partition("/")
    return lookup(rtype, rid) if lookup and rtype == "Medication" else None


def medication_name(resource: dict, lookup: Lookup | None) -> dict:
    """``{name, codes}`` of the drug a ``medicationReference`` names (codes as ``system|code``), or ``{}``."""
    reference = resource.get("medicationReference")
    medication = medication_of(resource, lookup)
    code = (medication or {}).get("code") or {}
    name = concept_text(code) or (reference.get("display") if isinstance(reference, dict) else None)
    codes = [f"{c.get('system', '')}|{c['code']}" for c in code.get("coding", []) if c.get("code")]
    return {"name": name, **({"codes": codes} if codes else {})} if name else {}


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


def age_at(birth_date: str | None, now: datetime, died: str | None = None) -> int | None:
    """Age in whole years at ``now``, or at the date of death when the patient died before ``now``."""
    if not birth_date:
        return None
    born = datetime.fromisoformat(birth_date[:10]).date()
    today = now.date()
    if died and len(died) >= 10 and died[:10] < today.isoformat():
        today = datetime.fromisoformat(died[:10]).date()
    return today.year - born.year - ((today.month, today.day) < (born.month, born.day))


def summarize(resource: dict, lookup: Lookup | None = None) -> dict:
    """One resource as a small dict: id, type, name, time, value, status and the fields its type needs; ``lookup``
    finds the Medication a ``medicationReference`` names."""
    out: dict[str, Any] = {"id": resource["id"], "type": resource["resourceType"]}
    name = concept_text(
        resource.get("code")
        or resource.get("medicationCodeableConcept")
        or resource.get("vaccineCode")
        or resource.get("type")
    )
    if name:
        out["name"] = name
    elif "medicationReference" in resource:
        out |= medication_name(resource, lookup)
    time = when(resource)
    if time:
        out["time"] = time
    out |= {k: v for k, v in measured(resource).items() if k != "interpretation"}
    parts = components(resource)
    if parts:
        out["components"] = parts
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
    dosages = resource.get("dosageInstruction") or resource.get("dosage")
    if dosages:
        out["dosage"] = [d.get("text") for d in (dosages if isinstance(dosages, list) else [dosages])]
    if resource.get("note"):
        out["note"] = " ".join(n.get("text", "") for n in resource["note"])
    if resource.get("conclusion"):
        out["conclusion"] = resource["conclusion"]
    description = concept_text(resource.get("description"))
    if description:
        out["description"] = description
    return out
