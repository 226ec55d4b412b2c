"""Plan for 临床操作 (clinical_operations): record vital signs, request vaccines, referrals and examinations.

Context (``mrn`` plus any of):

- ``vitals``: list of ``{name, value, unit, code}`` measured now → one ``vital_sign_create`` each;
- ``vaccine``: the vaccine's name → ``record_search`` of the Immunization records, then
  ``immunization_request_create``;
- ``referral``: ``{specialty, reason}`` → ``examination_search``, then ``referral_create``;
- ``orders``: examination names → ``examination_search``, then one ``examination_request_create`` per order;
- ``valid_days``: a final report of an order newer than this makes a new request unnecessary.

With ``respects_records`` (candidate-v2) nothing is done twice: a vaccine of that name given in the last
``VACCINE_SEASON_DAYS`` days (this season), a request of that name still active, or (with ``valid_days``) a final
report of that order inside the window counts as done (an echocardiogram reported five days before chemotherapy,
SC-OPS-PRECHEMO). baseline-v1 reads the same records and ignores them.

The structured output holds the typed answer's fields, as the 检查申请 plan writes them: ``requested`` and
``on_file`` (the vaccine, clinic or examinations as the context names them), ``on_file_dates`` (YYYY-MM-DD),
``recorded`` (the vital signs' names) and ``decision``; with vitals, each one's ``{value, unit}`` under its field
(``VITAL_FIELDS``).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from ._examination import covering, on_file_fields, when_on_file
from .core import Plan, PlanContext, plan

VACCINE_SEASON_DAYS = 180
"""A vaccine given this recently counts as this season's dose."""
VITAL_FIELDS = {
    "8310-5": "temperature",
    "8867-4": "heart_rate",
    "9279-1": "respiratory_rate",
    "8480-6": "systolic",
    "8462-4": "diastolic",
    "59408-5": "spo2",
}
"""LOINC code of a vital sign -> the typed answer's field of its measurement."""


@plan("clinical_operations")
async def clinical_operations(ctx: PlanContext) -> Plan:
    """Record the vitals given, then request each vaccine, referral and order not already on file."""
    context = ctx.task.context
    await ctx.on_patient("patient_detail")
    vitals = context.get("vitals", [])
    for vital in vitals:
        await record_vital(ctx, vital)
    wanted: list[tuple[str, str, dict]] = []  # (tool, name, extra arguments) of each request asked for
    on_file: dict[str, dict] = {}  # name -> the record that shows it already given or requested
    if "vaccine" in context:
        on_file |= await vaccines_given(ctx, context["vaccine"])
        wanted.append(("immunization_request_create", context["vaccine"], {}))
    if "referral" in context or "orders" in context:
        on_file |= await requests_on_file(ctx)
    if "referral" in context:
        referral = context["referral"]
        wanted.append(("referral_create", referral["specialty"], {"reason": referral.get("reason")}))
    wanted += [("examination_request_create", name, {}) for name in context.get("orders", [])]
    requested, skipped = [], {}
    for tool, name, extra in wanted:
        if ctx.features.respects_records and name in on_file:
            skipped[name] = on_file[name]
            continue
        await ctx.on_patient(tool, name=name, idempotency_key=f"{ctx.task.task_id}:{name}", **extra)
        requested.append(name)
    parts = [
        f"已录入：{'、'.join(map(vital_text, vitals))}。" if vitals else "",
        f"已申请：{'、'.join(requested)}。" if requested else "",
        f"已有记录，无需重复：{'、'.join(f'{n}（{when_on_file(r)}）' for n, r in skipped.items())}。"
        if skipped
        else "",
    ]
    return Plan("".join(parts), output=typed_output(vitals, requested, skipped))


def typed_output(vitals: list[dict], requested: list[str], skipped: dict[str, dict]) -> dict:
    """The typed answer: what was requested, what was on file (with the dates of its records), the vital signs
    recorded with each measurement under its field, and the decision (requested when anything is requested, else
    recorded when vitals are, else not_needed)."""
    decision = "requested" if requested else "recorded" if vitals else "not_needed"
    measured = {VITAL_FIELDS[v["code"]]: {"value": v["value"], "unit": v["unit"]} for v in vitals}
    recorded = [v["name"] for v in vitals]
    return {"requested": requested, **on_file_fields(skipped), "recorded": recorded, "decision": decision, **measured}


async def record_vital(ctx: PlanContext, vital: dict) -> None:
    """Record one vital sign measured now."""
    await ctx.on_patient("vital_sign_create", **vital, idempotency_key=f"{ctx.task.task_id}:{vital['name']}")


def vital_text(vital: dict) -> str:
    """A vital sign as the answer writes it: '体温 37.8 °C'."""
    return f"{vital['name']} {vital['value']:g} {vital['unit']}"


async def vaccines_given(ctx: PlanContext, vaccine: str) -> dict[str, dict]:
    """``{vaccine: record}`` of the latest dose of a vaccine of that name given this season, else empty."""
    found = await ctx.on_patient("record_search", type="Immunization") or {}
    season = ctx.task.now - timedelta(days=VACCINE_SEASON_DAYS)
    given = [
        r
        for r in found.get("records", [])
        if vaccine in r.get("name", "")
        and r.get("status") == "completed"
        and r.get("time")
        and datetime.fromisoformat(r["time"]) >= season
    ]
    return {vaccine: max(given, key=lambda r: r["time"])} if given else {}


async def requests_on_file(ctx: PlanContext) -> dict[str, dict]:
    """Name -> the record that puts it on file: the patient's requests that are still active and, with
    ``valid_days``, the orders asked for that have a final report inside that window."""
    existing = await ctx.on_patient("examination_search") or {}
    found = {r["name"]: r for r in existing.get("requests", []) if r.get("status") == "active" and r.get("name")}
    days = ctx.task.context.get("valid_days")
    if days:
        since = ctx.task.now - timedelta(days=days)
        reports = {
            name: hit
            for name in ctx.task.context.get("orders", [])
            if (hit := covering(ctx, name, existing.get("reports", []), since))
        }
        found |= {name: report for name, report in reports.items() if name not in found}
    return found
