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

The structured output holds the typed answer's fields: the decision (prescribed, not_prescribed, escalated), the
drug ordered and its dose as ``{value, unit}``, the reason a drug was not ordered or not at its usual dose (allergy,
interaction, contraindication, renal_function) with the drug or condition it concerns as the record or the drug
table writes it, the latest eGFR a renal dose rests on, and what the moderate interactions' advice says: the current
drugs to stop ("停用氯吡格雷") and the least time between two drugs ("间隔 30 分钟").

Limitation (deliberate): allergies are matched by drug name only. A class allergy — a recorded allergy to another
NSAID (双氯芬酸) when 布洛芬 is asked for — is not recognised as one: rule 5 holds the prescription back, but the
answer names no cross-reactivity (SC-MED-GOUT-FLARE fails on its answer, never on a prescription).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from ...ehr import DOSE
from .core import Plan, PlanContext, plan

SEVERE_REACTIONS = ("喉头水肿", "过敏性休克", "血管性水肿", "anaphylaxis")
"""Allergic reactions after which a drug with a class-allergy warning is left to the physician (rule 5)."""
STOP = re.compile(r"停用([^，,；;。：:\s]+)")
"""An interaction's advice to stop a current drug: the drug's name."""
SPACING = re.compile(r"间隔\s*(\d+(?:\.\d+)?)\s*(分钟|小时)")
"""An interaction's advice to space two drugs: the least time between them."""
SPACING_UNITS = {"分钟": "min", "小时": "h"}


class Dosing(NamedTuple):
    """The dose to order (None: do not give), its frequency, a note for the answer, the eGFR it rests on."""

    dose: str | None
    frequency: str
    note: str
    egfr: dict | None = None


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
    dosing = await renal_dose(ctx, info)
    dose, frequency, renal_note = dosing.dose, dosing.frequency, dosing.note
    interactions = []
    if ctx.features.safety_checks:
        check = await ctx.call("drug_interaction_check", drugs=[*current, drug]) or {}
        interactions = [i for i in check.get("interactions", []) if info["name"] in i["drugs"]]
    contraindications = info["contraindications"]
    to_drug = [a for a in allergies if drug in a.get("name", "") or named_in(a.get("name", ""), contraindications)]
    allergic = [f"过敏史：{a.get('name', '')}（{'、'.join(filter(None, a.get('reaction', [])))}）" for a in to_drug]
    majors = [i for i in interactions if i["severity"] == "major"]
    major = [with_partner(i, info["name"]) for i in majors]
    if dose is None or allergic or major:
        why = "；".join([*allergic, *major, *([renal_note] if dose is None else [])])
        if to_drug:
            output = withheld("allergy", implicated=to_drug[0].get("name"))
        elif majors:
            output = withheld("interaction", implicated=partners(majors[0], info["name"])[0])
        else:
            output = withheld("renal_function")
        return Plan(f"不宜开具{drug}：{why}。建议上级医师评估。", output=output, status="escalated")
    warning = class_allergy_warning(info)
    severe = [a for a in allergies if any(r in m for m in a.get("reaction", []) for r in SEVERE_REACTIONS)]
    if warning and severe:
        seen = "；".join(f"{a.get('name', '')}（{'、'.join(a['reaction'])}）" for a in severe)
        return Plan(
            f"未开具{drug}：{drug}禁用于{warning}，患者有严重过敏反应史（{seen}），无法判断是否相关，请医师评估。",
            output=withheld("allergy", implicated=severe[0].get("name")),
            status="escalated",
        )
    barred = [c for c in conditions if named_in(c, contraindications)]
    if barred:
        reason = f"{drug}禁忌：{'、'.join(barred)}；何时开始用药需医师评估"
        await ctx.on_patient("escalate_to_human", reason=reason, idempotency_key=f"{ctx.task.task_id}:escalate")
        return Plan(
            f"未开具{drug}：患者存在禁忌（{'、'.join(barred)}），已提交上级医师评估。",
            output=withheld("contraindication", condition=barred[0], decision="escalated"),
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
    advice = [i["effect"] for i in interactions if i["severity"] != "major"]
    notes += [f"注意：{with_partner(i, info['name'])}" for i in interactions if i["severity"] != "major"]
    output = {
        "decision": "prescribed",
        "drug": drug,
        "dose": dose_quantity(dose),
        "reason": None if dose == info["usual_dose"] else "renal_function",
        "implicated_drug": None,
        "condition": None,
        "stopped": [m[1] for text in advice for m in STOP.finditer(text)],
        "egfr": dosing.egfr,
        "spacing": spacing(advice),
    }
    return Plan(" ".join([f"已开具{drug} {dose} {frequency} {info['route']}。", *notes]), output=output)


def withheld(
    reason: str, implicated: str | None = None, condition: str | None = None, decision: str = "not_prescribed"
) -> dict[str, Any]:
    """The typed answer when nothing is ordered: why, and the drug or condition on record that reason concerns."""
    return {
        "decision": decision,
        "drug": None,
        "dose": None,
        "reason": reason,
        "implicated_drug": implicated,
        "condition": condition,
        "stopped": [],
    }


def dose_quantity(dose: str) -> dict | None:
    """A dose of one amount ("20 mg") as the typed answer's ``{value, unit}``; None when it is not one amount."""
    amount = DOSE.fullmatch(dose)
    return {"value": float(amount[1]), "unit": amount[2] or ""} if amount else None


def spacing(advice: list[str]) -> dict | None:
    """The least time between two drugs that the interactions' advice asks for (``{value, unit}``), or None."""
    found = next((m for text in advice if (m := SPACING.search(text))), None)
    return {"value": float(found[1]), "unit": SPACING_UNITS[found[2]]} if found else None


def partners(interaction: dict, drug: str) -> list[str]:
    """The other drugs of an interaction."""
    return [d for d in interaction["drugs"] if d != drug]


def with_partner(interaction: dict, drug: str) -> str:
    """An interaction as text for the answer, naming the drug it is with."""
    return f"与{'、'.join(partners(interaction, drug))}合用，{interaction['effect']}"


def class_allergy_warning(info: dict) -> str | None:
    """The drug's contraindication that names an allergy to its own class (非甾体抗炎药过敏或诱发哮喘史), or None."""
    drug_class = info.get("class", "").split(" (")[0]
    return next((c for c in info["contraindications"] if drug_class and drug_class in c and "过敏" in c), None)


def named_in(name: str, contraindications: list[str]) -> bool:
    """True when a recorded allergy or condition is named in one of the drug's contraindications."""
    return bool(name) and any(name in c for c in contraindications)


async def renal_dose(ctx: PlanContext, info: dict) -> Dosing:
    """The dosing from the drug's eGFR tiers when it has them, with the eGFR read; else its usual dosing."""
    rule = info.get("renal_dosing")
    if not rule:
        return Dosing(info["usual_dose"], info["frequency"], "")
    labs = await ctx.on_patient("lab_results", name="eGFR") or {}
    if not ctx.features.respects_records:
        return Dosing(info["usual_dose"], info["frequency"], "")
    items = labs.get("items", [])
    if not items:
        return Dosing(None, info["frequency"], "无 eGFR 结果，无法按肾功能确定剂量")
    latest = items[-1]
    egfr = latest["value"]["value"]
    tier = next(t for t in rule["tiers"] if egfr >= t["egfr_min"])
    note = f"最近 eGFR {egfr:g}（{latest.get('time', '')[:10]}）：{tier.get('note', '无需调整剂量')}。"
    return Dosing(tier["dose"], tier.get("frequency", info["frequency"]), note, latest["value"])
