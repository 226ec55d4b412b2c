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
"""

from __future__ import annotations

from datetime import datetime, timedelta

from ._examination import covering, when_on_file
from .core import Plan, PlanContext, plan

VACCINE_SEASON_DAYS = 180
"""A vaccine given this recently counts as this season's dose."""


@plan("clinical_operations")
async def clinical_operations(ctx: PlanContext) -> Plan:
    """Record the vitals given, then request each vaccine, referral and order not already on file."""
    context = ctx.task.context
    await ctx.on_patient("patient_detail")
    recorded = [await record_vital(ctx, vital) for vital in context.get("vitals", [])]
    wanted: list[tuple[str, str, dict]] = []  # (tool, name, extra arguments) of each request asked for
    on_file: dict[str, str] = {}  # name -> when it was already given or requested
    if "vaccine" in context:
        on_file |= await vaccines_given(ctx, context["vaccine"])
        wanted.append(("immunization_request_create", context["vaccine"], {}))
    if "referral" in context or "orders" in context:
        on_file |= await requests_on_file(ctx)
    if "referral" in context:
        referral = context["referral"]
        wanted.append(("referral_create", referral["specialty"], {"reason": referral.get("reason")}))
    wanted += [("examination_request_create", name, {}) for name in context.get("orders", [])]
    requested, skipped = [], []
    for tool, name, extra in wanted:
        if ctx.features.respects_records and name in on_file:
            skipped.append(f"{name}（{on_file[name]}）")
            continue
        await ctx.on_patient(tool, name=name, idempotency_key=f"{ctx.task.task_id}:{name}", **extra)
        requested.append(name)
    parts = [
        f"已录入：{'、'.join(recorded)}。" if recorded else "",
        f"已申请：{'、'.join(requested)}。" if requested else "",
        f"已有记录，无需重复：{'、'.join(skipped)}。" if skipped else "",
    ]
    return Plan("".join(parts), output={"recorded": len(recorded), "requested": requested, "skipped": skipped})


async def record_vital(ctx: PlanContext, vital: dict) -> str:
    """Record one vital sign measured now; its text for the answer."""
    await ctx.on_patient("vital_sign_create", **vital, idempotency_key=f"{ctx.task.task_id}:{vital['name']}")
    return f"{vital['name']} {vital['value']:g} {vital['unit']}"


async def vaccines_given(ctx: PlanContext, vaccine: str) -> dict[str, str]:
    """``{vaccine: date}`` when a vaccine of that name was given this season, else empty."""
    found = await ctx.on_patient("record_search", type="Immunization") or {}
    season = ctx.task.now - timedelta(days=VACCINE_SEASON_DAYS)
    given = [
        r["time"]
        for r in found.get("records", [])
        if vaccine in r.get("name", "")
        and r.get("status") == "completed"
        and r.get("time")
        and datetime.fromisoformat(r["time"]) >= season
    ]
    return {vaccine: f"{max(given)[:10]} 已接种"} if given else {}


async def requests_on_file(ctx: PlanContext) -> dict[str, str]:
    """Name -> when it is on file: the patient's requests that are still active and, with ``valid_days``, the
    orders asked for that have a final report inside that window."""
    existing = await ctx.on_patient("examination_search") or {}
    found = {
        r["name"]: f"{r.get('time', '')[:10]} 已申请"
        for r in existing.get("requests", [])
        if r.get("status") == "active" and r.get("name")
    }
    days = ctx.task.context.get("valid_days")
    if days:
        since = ctx.task.now - timedelta(days=days)
        reports = {
            name: hit
            for name in ctx.task.context.get("orders", [])
            if (hit := covering(ctx, name, existing.get("reports", []), since))
        }
        found |= {name: when_on_file(report) for name, report in reports.items() if name not in found}
    return found
