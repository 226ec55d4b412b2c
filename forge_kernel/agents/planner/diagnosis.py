"""Plan for 鉴别诊断 (differential_diagnosis). Context: ``symptoms`` (list of findings)."""
from __future__ import annotations

from .core import Plan, PlanContext, plan


@plan("differential_diagnosis")
async def differential_diagnosis(ctx: PlanContext) -> Plan:
    """Review history, rank the differential, request the top candidate's examinations."""
    detail = await ctx.on_patient("patient_detail") or {}
    await ctx.on_patient("record_search", type="Condition")
    ddx = await ctx.call("differential_diagnosis", symptoms=ctx.task.context["symptoms"],
                         age=detail.get("age"), sex=detail.get("gender"))
    candidates = (ddx or {}).get("candidates", [])
    if not candidates:
        return Plan("鉴别诊断无候选结果，建议上级医师评估。", status="escalated")
    top = candidates[0]
    for exam in top["recommended_exams"]:
        await ctx.on_patient("examination_request_create", name=exam, reason=top["diagnosis"], priority="urgent",
                             idempotency_key=f"{ctx.task.task_id}:{exam}")
    return Plan(f"首先考虑{top['diagnosis']}，已申请：{'、'.join(top['recommended_exams'])}。",
                output={"leading_diagnosis": top["diagnosis"], "requested": top["recommended_exams"]})
