"""Plan for 临床操作 (clinical_operations). Context: ``orders`` (examinations to request)."""
from __future__ import annotations

from .core import Plan, PlanContext, plan


@plan("clinical_operations")
async def clinical_operations(ctx: PlanContext) -> Plan:
    """Check the existing requests, then request each order not already active."""
    await ctx.on_patient("patient_detail")
    existing = await ctx.on_patient("examination_search") or {}
    on_file = set()
    if ctx.features.respects_records:
        on_file = {r.get("name") for r in existing.get("requests", []) if r.get("status") == "active"}
    ordered = []
    for exam in ctx.task.context["orders"]:
        if exam in on_file:
            continue
        await ctx.on_patient("examination_request_create", name=exam, idempotency_key=f"{ctx.task.task_id}:{exam}")
        ordered.append(exam)
    answer = f"已申请：{'、'.join(ordered)}。" if ordered else "所需检查均已申请，无需重复。"
    return Plan(answer, output={"requested": ordered})
