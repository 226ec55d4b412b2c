"""Plan for 用药管理 (medication_management). Context: ``drug`` (the drug to start)."""
from __future__ import annotations

from .core import Plan, PlanContext, plan


@plan("medication_management")
async def medication_management(ctx: PlanContext) -> Plan:
    """Read allergies and current drugs, check interactions and contraindications, then prescribe or decline."""
    drug = ctx.task.context["drug"]
    allergies: list[str] = []
    current: list[str] = []
    if ctx.features.safety_checks:
        history = await ctx.on_patient("patient_history") or {}
        allergies = [a.get("name", "") for a in history.get("allergies", [])]
        meds = await ctx.on_patient("medication_search", status="active") or {}
        current = [m["name"] for m in meds.get("medications", [])]
    info = await ctx.call("drug_info", name=drug)
    if info is None:
        return Plan(f"无法获取{drug}的药品信息，未开具处方。", status="gave_up")
    blocked = [a for a in allergies if any(a in c or drug in a for c in info["contraindications"])]
    major = []
    if ctx.features.safety_checks:
        check = await ctx.call("drug_interaction_check", drugs=[*current, drug]) or {}
        major = [i for i in check.get("interactions", []) if i["severity"] == "major"]
    if blocked or major:
        why = "；".join([*(f"过敏史：{a}" for a in blocked), *(i["effect"] for i in major)])
        return Plan(f"不宜开具{drug}：{why}。建议上级医师评估。", output={"prescribed": None}, status="escalated")
    await ctx.on_patient("medication_request_create", medication=drug, dose=info["usual_dose"],
                         frequency=info["frequency"], route=info["route"], idempotency_key=f"{ctx.task.task_id}:{drug}")
    return Plan(f"已开具{drug} {info['usual_dose']} {info['frequency']} {info['route']}。",
                output={"prescribed": drug})
