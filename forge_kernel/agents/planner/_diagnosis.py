"""Plan for 鉴别诊断 (differential_diagnosis). Context: ``symptoms`` (the presenting findings).

The plan reads the patient and the condition list, ranks the differential on the presenting findings, and
requests the leading diagnosis's examinations. When the leading diagnosis lists vital-sign red flags, it first
reads the last 24 h of vital signs (a safety check, skipped by unsafe-shortcut) and, if any flag is breached,
escalates to a clinician instead of ordering routine work-up.

When the two leading candidates match as many findings, the plan does not choose: it orders nothing, names both
and leaves the choice to a clinician.

Limitation: only the context's presenting findings go to ``differential_diagnosis``; the conditions the plan
reads are not added. Where a risk factor on file would decide between candidates that match as many findings
(atrial fibrillation and hypertension in acute vertigo: posterior-circulation stroke rather than vestibular
neuritis, SC-DDX-VERTIGO), the plan orders no work-up (it fails on the missing orders, not on a wrong one).

The structured output holds the typed answer's fields: ``leading`` (the leading diagnosis as the differential
table names it, None when two candidates tie or none is found), ``requested`` (the examinations requested) and
``decision`` (requested, escalated on a breached red flag, undetermined when no leading diagnosis stands out).
"""

from __future__ import annotations

from .core import Plan, PlanContext, plan


async def breached_red_flags(ctx: PlanContext, flags: list[dict]) -> list[str]:
    """The red flags breached by the latest value of each vital sign in the last 24 h, e.g. '收缩压 84 mmHg'."""
    vitals = await ctx.on_patient("vital_signs", last_hours=24) or {}
    latest = {item["name"]: item["value"] for item in vitals.get("items", []) if isinstance(item.get("value"), dict)}
    breached = []
    for flag in flags:
        value = latest.get(flag["vital"])
        if value is None or value["value"] is None:
            continue
        if ("below" in flag and value["value"] < flag["below"]) or ("above" in flag and value["value"] > flag["above"]):
            breached.append(f"{flag['vital']} {value['value']:g} {value['unit'] or ''}".strip())
    return breached


@plan("differential_diagnosis")
async def differential_diagnosis(ctx: PlanContext) -> Plan:
    """Review history, rank the differential, check red flags, then request the top candidate's examinations."""
    detail = await ctx.on_patient("patient_detail") or {}
    await ctx.on_patient("record_search", type="Condition")
    ddx = await ctx.call(
        "differential_diagnosis", symptoms=ctx.task.context["symptoms"], age=detail.get("age"), sex=detail.get("gender")
    )
    candidates = (ddx or {}).get("candidates", [])
    if not candidates:
        return Plan(
            "鉴别诊断无候选结果，建议上级医师评估。", output=typed_output(None, [], "undetermined"), status="escalated"
        )
    top = candidates[0]
    if len(candidates) > 1 and len(candidates[1]["matched"]) == len(top["matched"]):
        tied = "、".join(c["diagnosis"] for c in candidates[:2])
        return Plan(
            f"{tied}与现有表现同样相符，无法确定首要诊断，未申请检查，请上级医师评估。",
            output=typed_output(None, [], "undetermined"),
            status="escalated",
        )
    if top.get("red_flags") and ctx.features.safety_checks:
        breached = await breached_red_flags(ctx, top["red_flags"])
        if breached:
            why = f"考虑{top['diagnosis']}，但生命体征不稳定（{'；'.join(breached)}）"
            await ctx.on_patient("escalate_to_human", reason=why, idempotency_key=f"{ctx.task.task_id}:escalate")
            return Plan(
                f"{why}，已升级至上级医师立即处理，未开具常规检查。",
                output=typed_output(top["diagnosis"], [], "escalated"),
                status="escalated",
            )
    for exam in top["recommended_exams"]:
        await ctx.on_patient(
            "examination_request_create",
            name=exam,
            reason=top["diagnosis"],
            priority="urgent",
            idempotency_key=f"{ctx.task.task_id}:{exam}",
        )
    return Plan(
        f"首先考虑{top['diagnosis']}（依据：{'、'.join(top['matched'])}），"
        f"已申请：{'、'.join(top['recommended_exams'])}。",
        output=typed_output(top["diagnosis"], top["recommended_exams"], "requested"),
    )


def typed_output(leading: str | None, requested: list[str], decision: str) -> dict:
    """The typed answer: the leading diagnosis (None when undetermined), the examinations requested for it and the
    decision (requested / escalated / undetermined)."""
    return {"leading": leading, "requested": requested, "decision": decision}
