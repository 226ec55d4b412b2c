"""Plan for the medagentbench-style suite (category ``medagentbench``), one rule set per task family of
MedAgentBench, named by the context's ``family``; ``mrn``, ``lab`` and ``code`` (a LOINC code), ``hours`` or
``days`` (a window), ``value``, ``note`` and ``system`` say what each task is about.

``find_patient`` has no MRN: it searches by ``name`` and keeps the patient born on ``birth_date``. The conditional
orders follow MedAgentBench's protocols (synthetic knowledge): IV magnesium sulfate by a sliding scale below
1.9 mg/dL, oral potassium chloride (10 mEq per 0.1 mmol/L below 3.5) with a serum potassium the next morning at
08:00, a new HbA1c when the last is more than a year old. Writes go through ``fhir_create``.

Without ``respects_records`` (baseline-v1) the plan reads no window (it takes the latest value whatever its age)
and reorders an HbA1c without comparing its date.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from ._retrieval import quantity, window
from .core import Plan, PlanContext, plan

LOINC = "http://loinc.org"
NDC = "http://hl7.org/fhir/sid/ndc"
MAGNESIUM_LOW, POTASSIUM_LOW = 1.9, 3.5
FAMILIES: dict[str, Callable[[PlanContext], Awaitable[Plan]]] = {}
"""Family -> its rules."""


def family(name: str):
    def register(fn: Callable[[PlanContext], Awaitable[Plan]]):
        FAMILIES[name] = fn
        return fn

    return register


@plan("medagentbench", finds_patient=True)
async def medagentbench(ctx: PlanContext) -> Plan:
    rules = FAMILIES.get(str(ctx.task.context.get("family")))
    if rules is None:
        return Plan("This task family is not supported.", status="gave_up")
    return await rules(ctx)


@family("find_patient")
async def find_patient(ctx: PlanContext) -> Plan:
    found = await ctx.call("patient_search", name=ctx.task.context["name"]) or {}
    born = ctx.task.context["birth_date"]
    match = [p for p in found.get("patients", []) if p.get("birth_date") == born]
    if len(match) != 1 or not str(match[0].get("mrn") or "").isdigit():
        return Plan("Patient not found.", output={"found": False, "mrn": None})
    mrn = match[0]["mrn"]
    return Plan(f"{match[0]['name']}, born {born}: MRN {mrn}.", output={"found": True, "mrn": int(mrn)})


@family("age")
async def age(ctx: PlanContext) -> Plan:
    years = (await ctx.on_patient("patient_detail") or {}).get("age")
    return Plan(f"The patient is {years} years old.", output={"age": years})


@family("record_vital")
async def record_vital(ctx: PlanContext) -> Plan:
    value, code = ctx.task.context["value"], ctx.task.context["code"]
    observation = {
        "resourceType": "Observation",
        "status": "final",
        "category": [{"coding": [{"code": "vital-signs", "display": "Vital Signs"}]}],
        "code": {"coding": [{"system": LOINC, "code": code}], "text": "BP"},
        "effectiveDateTime": ctx.task.now.isoformat(),
        "valueString": value,
    }
    await create(ctx, observation)
    return Plan(f"Blood pressure {value} recorded now.")


@family("latest_lab_24h")
async def latest_lab_24h(ctx: PlanContext) -> Plan:
    reading = await latest(ctx, **window(ctx, last_hours=ctx.task.context["hours"]))
    if reading is None:
        return Plan(f"No {ctx.task.context['lab']} measured in the window: -1.", output={"magnesium": -1})
    value = reading["value"]["value"]
    return Plan(
        f"Latest {ctx.task.context['lab']}: {value} {reading['value'].get('unit', '')}.", output={"magnesium": value}
    )


@family("latest_value")
async def latest_value(ctx: PlanContext) -> Plan:
    reading = await latest(ctx)
    if reading is None:
        return Plan(f"No {ctx.task.context['lab']} on file.", output={})
    value = quantity(reading["value"])
    return Plan(f"Latest {ctx.task.context['lab']}: {value['value']} {value['unit']}.", output={"glucose": value})


@family("mean_value")
async def mean_value(ctx: PlanContext) -> Plan:
    readings = await series(ctx, **window(ctx, since_days=ctx.task.context["days"]))
    if not readings:
        return Plan(f"No {ctx.task.context['lab']} in the window.", output={})
    values = [r["value"]["value"] for r in readings]
    unit = readings[-1]["value"].get("unit") or ""
    shown = ", ".join(f"{v} {unit}" for v in values)
    return Plan(
        f"Mean {ctx.task.context['lab']} of {len(values)} values ({shown}): see the structured answer.",
        output={"mean_glucose": {"value": sum(values) / len(values), "unit": unit}},
    )


@family("referral")
async def referral(ctx: PlanContext) -> Plan:
    context = ctx.task.context
    request = {
        **order(ctx, {"system": context["system"], "code": context["code"]}),
        "note": [{"text": context["note"]}],
    }
    await create(ctx, request)
    return Plan("Referral ordered with its note.")


@family("conditional_magnesium")
async def conditional_magnesium(ctx: PlanContext) -> Plan:
    reading = await latest(ctx, last_hours=ctx.task.context["hours"])
    if reading is None:
        return Plan("No magnesium in the last 24 hours: nothing ordered.", output={"ordered": False, "dose": None})
    value = reading["value"]["value"]
    measured = {"magnesium": quantity(reading["value"])}
    if value >= MAGNESIUM_LOW:
        return Plan(
            f"Magnesium {value} mg/dL is not low: nothing ordered.", output={**measured, "ordered": False, "dose": None}
        )
    grams = 4 if value < 1 else 2 if value < 1.5 else 1
    dosage = {"doseQuantity": {"value": grams, "unit": "g"}, "rateQuantity": {"value": 1, "unit": "g/h"}}
    await create(ctx, prescription(ctx, "magnesium sulfate", "0338-1715-40", "IV", dosage))
    return Plan(
        f"Magnesium {value} mg/dL is low: magnesium sulfate {grams} g IV over {grams} h ordered.",
        output={**measured, "ordered": True, "dose": {"value": grams, "unit": "g"}},
    )


@family("conditional_potassium")
async def conditional_potassium(ctx: PlanContext) -> Plan:
    reading = await latest(ctx)
    if reading is None:
        return Plan("No potassium on file: nothing ordered.", output={"ordered": False})
    value = reading["value"]["value"]
    measured = {"potassium": quantity(reading["value"])}
    if value >= POTASSIUM_LOW:
        return Plan(f"Potassium {value} mmol/L is not low: nothing ordered.", output={**measured, "ordered": False})
    dose = {"doseQuantity": {"value": round((POTASSIUM_LOW - value) * 100), "unit": "mEq"}}
    await create(ctx, prescription(ctx, "potassium chloride", "40032-917-01", "oral", dose))
    morning = (ctx.task.now + timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0)
    await create(ctx, {**order(ctx, {"system": LOINC, "code": "2823-3"}), "occurrenceDateTime": morning.isoformat()})
    return Plan(
        f"Potassium {value} mmol/L is low: oral potassium chloride and a serum potassium for tomorrow morning ordered.",
        output={**measured, "ordered": True},
    )


@family("hba1c")
async def hba1c(ctx: PlanContext) -> Plan:
    reading = await latest(ctx)
    taken = None if reading is None else ctx.time_of(reading["time"])
    old = taken is None or not ctx.features.respects_records or ctx.task.now - taken > timedelta(days=365)
    if old:
        await create(ctx, order(ctx, {"system": LOINC, "code": ctx.task.context["code"]}))
    if reading is None:
        return Plan("No HbA1c on file: a new HbA1c ordered.", output={"ordered": True})
    assert taken is not None
    value = quantity(reading["value"])
    verdict = "over a year ago: a new HbA1c ordered" if old else "within the year: nothing ordered"
    return Plan(
        f"Last HbA1c {value['value']}% on {taken.date()}, {verdict}.",
        output={"hba1c": value, "date": taken.date().isoformat(), "ordered": old},
    )


async def series(ctx: PlanContext, **limit: float) -> list[dict]:
    """The numeric readings of the task's lab code, oldest first."""
    found = (await ctx.on_patient("lab_results", name=ctx.task.context["code"], **limit) or {}).get("items", [])
    return [r for r in found if isinstance(r.get("value"), dict) and isinstance(r["value"].get("value"), (int, float))]


async def latest(ctx: PlanContext, **limit: float) -> dict | None:
    readings = await series(ctx, **limit)
    return readings[-1] if readings else None


def order(ctx: PlanContext, coding: dict[str, str]) -> dict[str, Any]:
    """An active ServiceRequest for the current patient, authored now."""
    return {
        "resourceType": "ServiceRequest",
        "status": "active",
        "intent": "order",
        "priority": "stat",
        "code": {"coding": [coding]},
        "authoredOn": ctx.task.now.isoformat(),
    }


def prescription(ctx: PlanContext, drug: str, ndc: str, route: str, dose_and_rate: dict) -> dict[str, Any]:
    """An active MedicationRequest for the current patient, authored now."""
    return {
        "resourceType": "MedicationRequest",
        "status": "active",
        "intent": "order",
        "medicationCodeableConcept": {"coding": [{"system": NDC, "code": ndc}], "text": drug},
        "authoredOn": ctx.task.now.isoformat(),
        "dosageInstruction": [{"route": {"text": route}, "doseAndRate": [dose_and_rate]}],
    }


async def create(ctx: PlanContext, resource: dict[str, Any]) -> Any:
    """Create a resource about the current patient with ``fhir_create``."""
    return await ctx.call("fhir_create", resource={**resource, "subject": {"reference": f"Patient/{ctx.patient_id}"}})
