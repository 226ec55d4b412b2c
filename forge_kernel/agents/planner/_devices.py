"""Plan for 设备监测 (device_monitoring): decide by dwell time, care interval or risk score whether a device or
nursing item is due, using the ``device_rules`` table.

Context: ``mrn``, and either ``device`` (the device named in the instruction, e.g. 留置导尿管; it is looked up in
``device_list`` by name) or ``nursing`` (a nursing item of the rules table, e.g. 术后伤口, 压力性损伤).

Rules: the action is due when an early sign is found in the nursing notes, or the time since insertion (or since
the last recorded care) reaches ``due_after_hours``, or the risk score crosses its threshold; an ongoing
indication (``keep_if``) defers a removal; a sign for the physician (``escalate_signs``) holds the action. Without
``respects_records`` (baseline-v1) the plan reads the same records but acts whatever they say. Without
``safety_checks`` it skips the bedside notes.

The structured output holds the typed answer's fields: ``item`` (the rule's type), ``due`` (whether the action is
done now), ``action`` (the rule's action), ``findings`` (the rule's signs found on file); then, by the rule,
``dwell`` (hours since insertion), ``since_care`` and ``last_care`` (hours since, and the date of, the last
recorded care) or ``score`` (the latest risk score).

Limitation: ``escalate_signs`` only hold the action; the plan neither names what they suggest nor hands the
patient over. A drain whose fluid turns feculent after bowel surgery (a suspected anastomotic leak) is kept, but
the surgeon is not called (SC-DEV-ABDOMINAL-DRAIN fails on the hand-over and its answer, not on a removal).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

from .core import Plan, PlanContext, plan

VERBS = {"replace": "更换", "remove": "拔除", "maintain": "维护", "request": "申请"}
NEGATIONS = ("无", "未", "否认", "没有", "不伴")
CLAUSE = re.compile(r"[，。；;,.!?！？\n]")


def mentioned(text: str, phrase: str) -> bool:
    """The phrase occurs in a clause where no negation (无, 未, ...; 无菌 is not one) comes before it."""
    for clause in CLAUSE.split(text):
        at = clause.find(phrase)
        if at >= 0 and not any(n in clause[:at].replace("无菌", "") for n in NEGATIONS):
            return True
    return False


def hours_between(start: str, now: datetime) -> float:
    return (now - datetime.fromisoformat(start)).total_seconds() / 3600


async def last_care(ctx: PlanContext, care: str) -> str | None:
    """When the latest recorded care procedure (e.g. 伤口换药) was performed."""
    procedures = (await ctx.on_patient("procedure_list") or {}).get("items", [])
    times = [p["time"] for p in procedures if care in p.get("name", "") and p.get("time")]
    return max(times, key=lambda t: datetime.fromisoformat(t)) if times else None


@dataclass
class Reading:
    """What the rule's clock or risk score reads: in words, whether it makes the action due, and the typed
    answer's fields it fills."""

    text: str
    due: bool
    fields: dict[str, Any]


def in_hours(hours: float | None) -> dict | None:
    return None if hours is None else {"value": round(hours, 1), "unit": "h"}


async def score_status(ctx: PlanContext, score: dict) -> Reading:
    """The latest value of the rule's risk score, and whether it makes the action due."""
    found = await ctx.on_patient("record_search", type="Observation", code=score["name"]) or {}
    values = [r["value"]["value"] for r in found.get("records", []) if isinstance(r.get("value"), dict)]
    if not values:
        return Reading(f"{score['name']}未记录", False, {"score": None})
    value = values[-1]
    due = value <= score.get("due_at_most", float("-inf")) or value >= score.get("due_at_least", float("inf"))
    return Reading(f"{score['name']} {value:g} 分", due, {"score": value})


async def time_status(ctx: PlanContext, rule: dict, device: dict | None) -> Reading:
    """Time since insertion (or since the last recorded care), and whether it reaches the rule's limit."""
    by_care = rule.get("clock") == "last_care"
    cared = await last_care(ctx, rule["care"]) if by_care else None
    since = cared or (device or {}).get("inserted")
    hours = hours_between(since, ctx.task.now) if since else None
    fields = (
        {"since_care": in_hours(hours), "last_care": cared and cared[:10]} if by_care else {"dwell": in_hours(hours)}
    )
    limit = rule.get("due_after_hours")
    if hours is None:
        return Reading("无留置或护理时间记录", True, fields)
    elapsed = f"距上次{rule['care']} {hours:.1f} h" if cared else f"已留置 {hours / 24:.1f} 天（{hours:.0f} h）"
    rule_text = f"规定时限 {limit} h" if limit is not None else "不按时间常规更换"
    return Reading(f"{elapsed}，{rule_text}", limit is not None and hours >= limit, fields)


def typed_output(item: str, action: str, findings: list[str], reading: Reading, due: bool) -> dict:
    """The typed answer: the item, whether its rule's action is done now, that action, the rule's signs found on
    file, and the fields of the rule's clock or score."""
    return {"item": item, "due": due, "action": action, "findings": findings, **reading.fields}


@plan("device_monitoring")
async def device_monitoring(ctx: PlanContext) -> Plan:
    """Find the device (or nursing item) and its rule, read what is on file, then act, defer or decline."""
    device = None
    if "device" in ctx.task.context:
        wanted = ctx.task.context["device"]
        devices = (await ctx.on_patient("device_list") or {}).get("items", [])
        device = next((d for d in devices if wanted in (d.get("type") or "") and d.get("status") == "active"), None)
        if device is None:
            return Plan(f"未找到在用的{wanted}，请核对医嘱。", status="escalated")
        item = device["type"]
    else:
        item = ctx.task.context["nursing"]
    rule = await ctx.call("device_rules", type=item)
    if rule is None:
        return Plan(f"护理规则表中没有{item}，未作处理。", status="gave_up")
    reading = await (score_status(ctx, rule["score"]) if rule.get("score") else time_status(ctx, rule, device))

    texts = [device.get("note", "")] if device else []
    if ctx.features.safety_checks:
        texts += [n["text"] for n in (await ctx.on_patient("note_search") or {}).get("items", [])]
    signs = [s for s in rule.get("early_signs", []) if any(mentioned(t, s) for t in texts)]
    holds = [s for s in rule.get("keep_if", []) if any(mentioned(t, s) for t in texts)]
    alarms = [s for s in rule.get("escalate_signs", []) if any(mentioned(t, s) for t in texts)]
    summary, verb = f"{item}：{reading.text}", VERBS[rule["action"]]
    output = partial(typed_output, item, rule["action"], list(dict.fromkeys(signs + holds + alarms)), reading)
    if alarms:
        return Plan(
            f"{summary}；见{'、'.join(alarms)}，暂不{verb}，请医师评估。", output=output(False), status="escalated"
        )

    if ctx.features.respects_records and not signs and (holds or not reading.due):
        why = "未到处理时机，未见需提前处理的征象"
        if holds:
            why = f"仍有留置指征（{'、'.join(holds)}），{rule.get('review_hours', 24)} h 后再评估"
        return Plan(f"{summary}；{why}，暂不{verb}。", output=output(False))

    priority = "urgent" if signs else "routine"
    reason = f"{summary}；出现{'、'.join(signs)}" if signs else summary
    key = f"{ctx.task.task_id}:{item}"
    if device:
        done = await ctx.on_patient(
            "device_order_create",
            device_id=device["id"],
            action=rule["action"],
            name=item,
            reason=reason,
            priority=priority,
            idempotency_key=key,
        )
    else:
        done = await ctx.on_patient(
            "nursing_request_create", name=rule["order"], reason=reason, priority=priority, idempotency_key=key
        )
    if done is None:
        return Plan(f"{reason}；{rule['order']}申请未能提交。", status="gave_up")
    return Plan(f"{reason}；已申请{rule['order']}（{priority}）。", output=output(True))
