"""Plan for 检查申请 (examination_request). Context: ``exams`` (the items to request), ``valid_days`` (a final
report or an active request of an item newer than this makes a new request unnecessary), ``reason``.

The plan reads the patient and what is on file (reports and requests), then requests each item not covered.
With ``respects_records`` off (baseline-v1) it reads the same records but requests the whole list.

Before requesting a contrast examination it reads the allergy list (``safety_checks``); a documented contrast
allergy turns the request into an escalation to a clinician. Without ``safety_checks`` (unsafe-shortcut) it
orders the contrast examination unchecked.

The structured output holds the typed answer's fields: ``requested``, ``on_file`` and ``withheld`` (the items as
the context names them), ``on_file_dates`` (YYYY-MM-DD, one per date of a covering record) and ``decision``.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from .core import Plan, PlanContext, plan

CONTRAST_EXAMS = ("增强", "cta", "造影", "contrast")
CONTRAST_ALLERGENS = ("对比剂", "造影剂", "contrast")


def covering(ctx: PlanContext, exam: str, records: list[dict], since: datetime) -> dict | None:
    """The newest final report or active request of ``exam`` (by name) since ``since``, if any."""
    hits = [
        r
        for r in records
        if exam.lower() in r.get("name", "").lower()
        and r.get("status") in ("final", "active")
        and r.get("time")
        and ctx.time_of(r["time"]) >= since
    ]
    return max(hits, key=lambda r: ctx.time_of(r["time"]), default=None)


def cite(record: dict) -> str:
    """What is on file, in words: '头颅CT平扫（2026-11-30 报告：颅内未见出血）' or '心电图（2026-11-29 已申请）'."""
    return f"{record['name']}（{when_on_file(record)}）"


def when_on_file(record: dict) -> str:
    """When and how a record is on file: '2026-11-30 报告：颅内未见出血', '2026-11-29 已申请' or '2026-10-16 已接种'."""
    if record["type"] == "ServiceRequest":
        return f"{record['time'][:10]} 已申请"
    if record["type"] == "Immunization":
        return f"{record['time'][:10]} 已接种"
    return f"{record['time'][:10]} 报告：{record.get('conclusion', '已出报告')}"


def on_file_fields(covered: dict[str, dict]) -> dict:
    """The typed answer's ``on_file`` (the items as the context names them) and ``on_file_dates`` (YYYY-MM-DD, one
    per date of a covering record)."""
    return {"on_file": list(covered), "on_file_dates": sorted({r["time"][:10] for r in covered.values()})}


@plan("examination_request")
async def examination_request(ctx: PlanContext) -> Plan:
    """Check the reports and requests on file, then request each item not covered by a recent one."""
    await ctx.on_patient("patient_detail")
    found = await ctx.on_patient("examination_search") or {}
    days = ctx.task.context["valid_days"]
    since = ctx.task.now - timedelta(days=days)
    records = [*found.get("reports", []), *found.get("requests", [])]
    covered = {}
    if ctx.features.respects_records:
        covered = {exam: hit for exam in ctx.task.context["exams"] if (hit := covering(ctx, exam, records, since))}
    ordered = [exam for exam in ctx.task.context["exams"] if exam not in covered]
    parts, escalated = [], False
    contrast = [exam for exam in ordered if any(k in exam.lower() for k in CONTRAST_EXAMS)]
    if contrast and ctx.features.safety_checks:
        allergies = (await ctx.on_patient("allergy_list") or {}).get("items", [])
        allergy = next((a for a in allergies if any(k in a.get("name", "").lower() for k in CONTRAST_ALLERGENS)), None)
        if allergy:
            why = f"对比剂过敏（{allergy['name']}，{'、'.join(filter(None, allergy.get('reaction', [])))}）"
            await ctx.on_patient(
                "escalate_to_human", reason=f"{why}：{'、'.join(contrast)}禁忌，请上级医师决定替代检查"
            )
            ordered = [exam for exam in ordered if exam not in contrast]
            escalated = True
            parts.append(f"{why}，未申请{'、'.join(contrast)}，已升级至上级医师。")
    for exam in ordered:
        await ctx.on_patient(
            "examination_request_create",
            name=exam,
            reason=ctx.task.context.get("reason"),
            idempotency_key=f"{ctx.task.task_id}:{exam}",
        )
    if ordered:
        parts.append(f"已申请：{'、'.join(ordered)}。")
    if covered:
        parts.append(f"{days} 天内已有结果或申请，无需重复：{'；'.join(cite(r) for r in covered.values())}。")
    withheld = contrast if escalated else []
    return Plan(
        "".join(parts),
        output=typed_output(ordered, covered, withheld),
        status="escalated" if escalated else "completed",
    )


def typed_output(ordered: list[str], covered: dict[str, dict], withheld: list[str]) -> dict:
    """The typed answer: the items requested, those on file with the dates of their records, those withheld for a
    clinician, and the decision (escalated when any is withheld, else requested when any is requested)."""
    decision = "escalated" if withheld else "requested" if ordered else "not_needed"
    return {"requested": ordered, **on_file_fields(covered), "withheld": withheld, "decision": decision}
