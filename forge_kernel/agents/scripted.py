"""``scripted``: a deterministic reference agent with one plan per task category.

It reads only the AgentTask (public half) and what tools return. Context keys it uses:
``mrn`` (the patient), ``symptoms`` (differential diagnosis), ``drug`` (medication management),
``orders`` (clinical operations).
"""
from __future__ import annotations

from ..spec import AgentResult
from ..tools import ToolSession
from .base import AgentTask


class ScriptedAgent:
    """Finds the patient by MRN, then follows the plan of the task's category."""

    name = "scripted"
    version = "1.0"

    async def run(self, task: AgentTask, session: ToolSession) -> AgentResult:
        found = await session.call("patient_search", mrn=task.context["mrn"])
        patients = found["result"]["patients"] if found["ok"] else []
        if len(patients) != 1:
            await session.call("finish", summary="patient not identified")
            return AgentResult(answer="未能唯一确定患者，已停止。", status="escalated")
        plan = getattr(self, f"plan_{task.category}", None)
        if plan is None:
            await session.call("finish", summary="unsupported task category")
            return AgentResult(answer="该任务类型不在本代理能力范围内。", status="gave_up")
        answer = await plan(task, session, patients[0]["patient_id"])
        await session.call("finish", summary=answer)
        return AgentResult(answer=answer, status="completed")

    async def plan_differential_diagnosis(self, task: AgentTask, session: ToolSession, pid: str) -> str:
        detail = (await session.call("patient_detail", patient_id=pid))["result"]
        await session.call("record_search", patient_id=pid, type="Condition")
        ddx = await session.call("differential_diagnosis", symptoms=task.context["symptoms"],
                                 age=detail["age"], sex=detail["gender"])
        candidates = ddx["result"]["candidates"] if ddx["ok"] else []
        if not candidates:
            return "鉴别诊断无候选结果，建议上级医师评估。"
        top = candidates[0]
        for exam in top["recommended_exams"]:
            await session.call("examination_request_create", patient_id=pid, name=exam, reason=top["diagnosis"],
                               priority="urgent", idempotency_key=f"{task.task_id}:{exam}")
        return f"首先考虑{top['diagnosis']}，已申请：{'、'.join(top['recommended_exams'])}。"

    async def plan_medication_management(self, task: AgentTask, session: ToolSession, pid: str) -> str:
        drug = task.context["drug"]
        history = (await session.call("patient_history", patient_id=pid))["result"]
        meds = (await session.call("medication_search", patient_id=pid, status="active"))["result"]["medications"]
        info = await session.call("drug_info", name=drug)
        if not info["ok"]:
            return f"无法获取{drug}的药品信息，未开具处方。"
        current = [m["name"] for m in meds]
        check = await session.call("drug_interaction_check", drugs=[*current, drug])
        allergies = [a["name"] for a in history["allergies"]]
        blocked = [a for a in allergies if any(a in c or drug in a for c in info["result"]["contraindications"])]
        major = [i for i in check["result"]["interactions"] if i["severity"] == "major"] if check["ok"] else []
        if blocked or major:
            why = "；".join([*(f"过敏史：{a}" for a in blocked), *(i["effect"] for i in major)])
            return f"不宜开具{drug}：{why}。建议上级医师评估。"
        d = info["result"]
        await session.call("medication_request_create", patient_id=pid, medication=drug, dose=d["usual_dose"],
                           frequency=d["frequency"], route=d["route"], idempotency_key=f"{task.task_id}:{drug}")
        return f"已开具{drug} {d['usual_dose']} {d['frequency']} {d['route']}，无过敏及相互作用禁忌。"

    async def plan_clinical_operations(self, task: AgentTask, session: ToolSession, pid: str) -> str:
        await session.call("patient_detail", patient_id=pid)
        existing = (await session.call("examination_search", patient_id=pid))["result"]
        on_file = {r["name"] for r in existing["requests"] if r.get("status") == "active"}
        ordered = []
        for exam in task.context["orders"]:
            if exam in on_file:
                continue
            await session.call("examination_request_create", patient_id=pid, name=exam,
                               idempotency_key=f"{task.task_id}:{exam}")
            ordered.append(exam)
        return f"已申请：{'、'.join(ordered)}。" if ordered else "所需检查均已申请，无需重复。"
