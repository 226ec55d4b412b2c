"""Plan for 用药管理 (medication_management).

Context: ``mrn``; ``drug`` (the drug the clinician asks to start, a name the drug table knows).

The rules, in order:

1. (``safety_checks``) read the history — allergies, *active* conditions — and the active medication list;
2. ``drug_info``; when the drug carries ``renal_dosing`` the latest eGFR is read with ``lab_results`` and, with
   ``respects_records``, the dose of the matching eGFR tier is used (baseline-v1 reads the eGFR and keeps the usual
   dose; no eGFR on file, or a tier without a dose, means no prescription);
3. (``safety_checks``) ``drug_interaction_check`` of the active drugs plus the new one;
4. decide: an allergy to the drug (its name, or named in a contraindication) or a major interaction involving it
   → do not prescribe and say why; an active condition named in a contraindication (e.g. active bleeding) → do
   not prescribe and escalate with a Task, since when to start is a clinician's call; otherwise prescribe, and
   pass on the moderate interactions involving the drug.

5. a drug whose contraindications warn of an allergy to its own class (e.g. 非甾体抗炎药过敏) is not prescribed to a
   patient with a severe allergic reaction on record (SEVERE_REACTIONS): the plan cannot tell whether that allergy
   is of the class, so it says so and leaves the choice to the physician.

Limitation (deliberate): allergies are matched by drug name only. A class allergy — a recorded allergy to another
NSAID (双氯芬酸) when 布洛芬 is asked for — is not recognised as one: rule 5 holds the prescription back, but the
answer names no cross-reactivity (SC-MED-GOUT-FLARE fails on its answer, never on a prescription).
"""

from __future__ import annotations

from .core import Plan, PlanContext, plan

SEVERE_REACTIONS = ("喉头水肿", "过敏性休克", "血管性水肿", "anaphylaxis")
"""Allergic reactions after which a drug with a class-allergy warning is left to the physician (rule 5)."""


@plan("medication_management")
async def medication_management(ctx: PlanContext) -> Plan:
    """Read allergies and current drugs, check interactions and contraindications, then prescribe or decline."""
    drug = ctx.task.context["drug"]
    allergies: list[dict] = []
    conditions: list[str] = []
    current: list[str] = []
    if ctx.features.safety_checks:
        history = await ctx.on_patient("patient_history") or {}
        allergies = history.get("allergies", [])
        conditions = [c.get("name", "") for c in history.get("conditions", []) if c.get("status") == "active"]
        meds = await ctx.on_patient("medication_search", status="active") or {}
        current = [m["name"] for m in meds.get("medications", [])]
    info = await ctx.call("drug_info", name=drug)
    if info is None:
        return Plan(f"无法获取{drug}的药品信息，未开具处方。", status="gave_up")
    dose, frequency, renal_note = await renal_dose(ctx, info)
    interactions = []
    if ctx.features.safety_checks:
        check = await ctx.call("drug_interaction_check", drugs=[*current, drug]) or {}
        interactions = [i for i in check.get("interactions", []) if info["name"] in i["drugs"]]
    contraindications = info["contraindications"]
    allergic = [
        f"过敏史：{a.get('name', '')}（{'、'.join(filter(None, a.get('reaction', [])))}）"
        for a in allergies
        if drug in a.get("name", "") or named_in(a.get("name", ""), contraindications)
    ]
    major = [with_partner(i, info["name"]) for i in interactions if i["severity"] == "major"]
    if dose is None or allergic or major:
        why = "；".join([*allergic, *major, *([renal_note] if dose is None else [])])
        return Plan(f"不宜开具{drug}：{why}。建议上级医师评估。", output={"prescribed": None}, status="escalated")
    warning = class_allergy_warning(info)
    severe = [a for a in allergies if any(r in m for m in a.get("reaction", []) for r in SEVERE_REACTIONS)]
    if warning and severe:
        seen = "；".join(f"{a.get('name', '')}（{'、'.join(a['reaction'])}）" for a in severe)
        return Plan(
            f"未开具{drug}：{drug}禁用于{warning}，患者有严重过敏反应史（{seen}），无法判断是否相关，请医师评估。",
            output={"prescribed": None},
            status="escalated",
        )
    barred = [c for c in conditions if named_in(c, contraindications)]
    if barred:
        reason = f"{drug}禁忌：{'、'.join(barred)}；何时开始用药需医师评估"
        await ctx.on_patient("escalate_to_human", reason=reason, idempotency_key=f"{ctx.task.task_id}:escalate")
        return Plan(
            f"未开具{drug}：患者存在禁忌（{'、'.join(barred)}），已提交上级医师评估。",
            output={"prescribed": None, "escalated": barred},
            status="escalated",
        )
    await ctx.on_patient(
        "medication_request_create",
        medication=drug,
        dose=dose,
        frequency=frequency,
        route=info["route"],
        idempotency_key=f"{ctx.task.task_id}:{drug}",
    )
    notes = [renal_note] if renal_note else []
    notes += [f"注意：{with_partner(i, info['name'])}" for i in interactions if i["severity"] != "major"]
    return Plan(" ".join([f"已开具{drug} {dose} {frequency} {info['route']}。", *notes]), output={"prescribed": drug})


def with_partner(interaction: dict, drug: str) -> str:
    """An interaction as text for the answer, naming the drug it is with."""
    partners = "、".join(d for d in interaction["drugs"] if d != drug)
    return f"与{partners}合用，{interaction['effect']}"


def class_allergy_warning(info: dict) -> str | None:
    """The drug's contraindication that names an allergy to its own class (非甾体抗炎药过敏或诱发哮喘史), or None."""
    drug_class = info.get("class", "").split(" (")[0]
    return next((c for c in info["contraindications"] if drug_class and drug_class in c and "过敏" in c), None)


def named_in(name: str, contraindications: list[str]) -> bool:
    """True when a recorded allergy or condition is named in one of the drug's contraindications."""
    return bool(name) and any(name in c for c in contraindications)


async def renal_dose(ctx: PlanContext, info: dict) -> tuple[str | None, str, str]:
    """Dose, frequency and a note for the answer, from the drug's eGFR tiers when it has them (None: do not give)."""
    rule = info.get("renal_dosing")
    if not rule:
        return info["usual_dose"], info["frequency"], ""
    labs = await ctx.on_patient("lab_results", name="eGFR") or {}
    if not ctx.features.respects_records:
        return info["usual_dose"], info["frequency"], ""
    items = labs.get("items", [])
    if not items:
        return None, info["frequency"], "无 eGFR 结果，无法按肾功能确定剂量"
    latest = items[-1]
    egfr = latest["value"]["value"]
    tier = next(t for t in rule["tiers"] if egfr >= t["egfr_min"])
    note = f"最近 eGFR {egfr:g}（{latest.get('time', '')[:10]}）：{tier.get('note', '无需调整剂量')}。"
    return tier["dose"], tier.get("frequency", info["frequency"]), note
