"""Plan for 信息检索 (information_retrieval): read one part of the record and report it, inventing nothing.

Context keys:

- ``mrn``;
- ``query``: demographics, vitals, medication_status, abnormal_labs, allergies, procedures, family_history,
  latest_diagnosis, current_medications or admissions;
- ``hours`` (vitals) or ``days`` (abnormal_labs): the time window the instruction asks for;
- ``drug`` (medication_status): the drug whose status is asked.

An empty list is reported as "not recorded", never as a negative history. The answer is in the task's language;
record texts are quoted as written. The structured output holds the typed answer's fields: quantities as
``{value, unit}``, dates as YYYY-MM-DD, names as the record writes them, statuses from their options.

Features: ``respects_records`` reads inside the task's time window. Without it (baseline-v1) the plan reads every
record on file and reports ranges over all of them, so a value from before the window leaks into the answer
(SC-IR-VITALS-24H).

Limitation: abnormal results are the ones the laboratory flagged (``interpretation``). An unflagged value, e.g. one
transcribed from an outside hospital, is not compared with a reference range and is missed (SC-IR-ABNORMAL-LABS).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Awaitable, Callable
from datetime import date
from typing import Any

from .core import Plan, PlanContext, plan

FLAGS = {"H", "L", "HH", "LL", "A", "偏高", "偏低", "异常"}
"""Interpretation texts that mark a laboratory result abnormal."""
SEX = {"male": ("男", "male"), "female": ("女", "female")}
MED_STATUS = {
    "active": ("在用", "active"),
    "stopped": ("已停用", "stopped"),
    "completed": ("已完成", "completed"),
    "on-hold": ("暂停", "on hold"),
}
VITAL_FIELDS = {
    "体温": "temperature",
    "心率": "heart_rate",
    "收缩压": "systolic",
    "舒张压": "diastolic",
    "呼吸频率": "respiratory_rate",
    "血氧饱和度": "spo2",
}
"""Vital sign name -> the prefix of its fields in the typed answer (``temperature_latest``, ``_min``, ``_max``)."""
RECORDED, NOT_RECORDED = "recorded", "not recorded"
"""The history status of a listing query: entries on file, or none."""


def say(ctx: PlanContext, zh: str, en: str) -> str:
    """The text in the task's language."""
    return en if ctx.task.language == "en" else zh


async def named_step(
    ctx: PlanContext, steps: dict[str, Callable[[PlanContext], Awaitable[Plan]]], key: str, zh: str, en: str
) -> Plan:
    """Run the step the task's context names under ``key``; give up, saying ``zh`` / ``en``, when it names none."""
    name: Any = ctx.task.context.get(key)  # whatever the package's context holds there
    step = steps.get(name)
    if step is None:
        return Plan(say(ctx, zh, en), status="gave_up")
    return await step(ctx)


def joined(ctx: PlanContext, rows: list[str]) -> str:
    """Rows as one sentence, with the task language's separators."""
    return say(ctx, "；".join(rows) + "。", "; ".join(rows) + ".")


def num(value: float) -> str:
    return f"{value:g}"


def day(time: str | None) -> str:
    return (time or "?")[:10]


def moment(time: str | None) -> str:
    """'2026-11-30T06:00:00+08:00' -> '2026-11-30 06:00'."""
    return (time or "?")[:16].replace("T", " ")


def numeric(items: list[dict]) -> dict[str, list[dict]]:
    """Items with a numeric value, grouped by name, oldest first."""
    groups: dict[str, list[dict]] = defaultdict(list)
    for item in items:
        if isinstance(item.get("value"), dict) and isinstance(item["value"].get("value"), (int, float)):
            groups[item.get("name", "?")].append(item)
    return groups


def window(ctx: PlanContext, **limit: float) -> dict:
    """The read window the task asks for, or none without ``respects_records``."""
    return limit if ctx.features.respects_records else {}


async def items(ctx: PlanContext, tool: str, key: str = "items", **args) -> list[dict]:
    return (await ctx.on_patient(tool, **args) or {}).get(key, [])


def not_recorded(ctx: PlanContext, zh: str, en: str) -> Plan:
    return Plan(
        say(
            ctx,
            f"病历中未记录{zh}（不能据此认为没有），建议补充问诊。",
            f"No {en} is recorded in the chart (that does not mean there is none); please take the history.",
        ),
        output={"history": NOT_RECORDED},
    )


def quantity(value: Any) -> dict:
    """A reading's ``{value, unit}``, as the typed answer takes a quantity."""
    return {"value": value["value"], "unit": value.get("unit") or ""}


async def demographics(ctx: PlanContext) -> Plan:
    d = await ctx.on_patient("patient_detail") or {}
    gender: Any = d.get("gender")
    zh_sex, en_sex = SEX.get(gender, ("性别未记录", "sex not recorded"))
    return Plan(
        say(
            ctx,
            f"{d.get('name')}，{zh_sex}，{d.get('age')} 岁，出生日期 {d.get('birth_date')}，病历号 {d.get('mrn')}。",
            f"{d.get('name')}: {en_sex}, {d.get('age')} years old, born {d.get('birth_date')}, MRN {d.get('mrn')}.",
        ),
        output={
            "name": d.get("name"),
            "sex": gender,
            "age": {"value": d.get("age"), "unit": "year"},
            "birth_date": d.get("birth_date"),
            "mrn": d.get("mrn"),
        },
    )


async def vitals(ctx: PlanContext) -> Plan:
    hours = ctx.task.context.get("hours", 24)
    groups = numeric(await items(ctx, "vital_signs", **window(ctx, last_hours=hours)))
    if not groups:
        return not_recorded(ctx, f"最近 {hours} 小时的生命体征", f"vital sign in the last {hours} hours")
    rows = []
    for name, series in groups.items():
        values = [o["value"]["value"] for o in series]
        last = series[-1]
        row = f"{name} {num(values[-1])} {last['value'].get('unit') or ''} ({moment(last.get('time'))[5:]})"
        if len(values) > 1:
            row += say(ctx, "，范围 ", ", range ") + f"{num(min(values))}-{num(max(values))}"
        rows.append(row)
    return Plan(
        say(
            ctx,
            f"最近 {hours} 小时生命体征（最新值，时间，范围）：",
            f"Vital signs, last {hours} h (latest, time, range): ",
        )
        + joined(ctx, rows),
        output={k: v for name, series in groups.items() for k, v in vital_fields(name, series).items()},
    )


def vital_fields(name: str, series: list[dict]) -> dict[str, dict]:
    """The latest, lowest and highest reading of one vital sign, as typed answer fields."""
    prefix = VITAL_FIELDS.get(name, name)
    by_value = sorted(series, key=lambda o: o["value"]["value"])
    return {
        f"{prefix}_latest": quantity(series[-1]["value"]),
        f"{prefix}_min": quantity(by_value[0]["value"]),
        f"{prefix}_max": quantity(by_value[-1]["value"]),
    }


async def medication_status(ctx: PlanContext) -> Plan:
    drug = ctx.task.context["drug"]
    found = [m for m in await items(ctx, "medication_search", "medications") if drug in m.get("name", "")]
    if not found:
        return not_recorded(ctx, f"{drug}的用药", f"use of {drug}")
    rows = []
    for m in found:
        status: Any = m.get("status")
        zh, en = MED_STATUS.get(status, (status, status))
        dose = "、".join(m.get("dosage") or []) or m.get("name")
        row = say(ctx, f"{dose}：{zh}，自 {day(m.get('time'))} 起", f"{dose}: {en}, since {day(m.get('time'))}")
        if m.get("end"):
            row += say(ctx, f"，{day(m['end'])} 停用", f", stopped on {day(m['end'])}")
        if m.get("note"):
            row += say(ctx, f"（备注：{m['note']}）", f" (note: {m['note']})")
        rows.append(row)
    latest = max(found, key=lambda m: day(m.get("time")))
    return Plan(
        joined(ctx, rows),
        output={
            "status": latest.get("status"),
            "started": day(latest.get("time")),
            "stopped": day(latest["end"]) if latest.get("end") else None,
            "reason": latest.get("note"),
        },
    )


async def abnormal_labs(ctx: PlanContext) -> Plan:
    days = ctx.task.context.get("days", 7)
    labs = await items(ctx, "lab_results", **window(ctx, since_days=days))
    flagged = [o for o in labs if o.get("interpretation") in FLAGS and isinstance(o.get("value"), dict)]
    if not flagged:
        return Plan(
            say(ctx, f"最近 {days} 天无标记为异常的检验结果。", f"No result flagged abnormal in the last {days} days."),
            output={"abnormal": []},
        )
    rows = [
        f"{o.get('name')} {num(o['value']['value'])} {o['value'].get('unit') or ''} ({o['interpretation']}, "
        f"{day(o.get('time'))})"
        for o in flagged
    ]
    return Plan(
        say(ctx, f"最近 {days} 天异常检验结果：", f"Abnormal results, last {days} days: ") + joined(ctx, rows),
        output={"abnormal": list(dict.fromkeys(o.get("name") for o in flagged))},
    )


def allergy_row(ctx: PlanContext, a: dict) -> str:
    reaction = "、".join(r for r in a.get("reaction", []) if r)
    return say(
        ctx,
        f"{a.get('name')}（反应：{reaction}；严重程度 {a.get('criticality')}；记录于 {day(a.get('time'))}）",
        f"{a.get('name')} (reaction: {reaction}; criticality {a.get('criticality')}; recorded {day(a.get('time'))})",
    )


def allergy_fields(found: list[dict]) -> dict:
    """The drugs the patient is allergic to, and those of high criticality."""
    return {
        "allergies": [a.get("name") for a in found],
        "high_criticality": [a.get("name") for a in found if a.get("criticality") == "high"],
    }


def named_items(found: list[dict]) -> dict:
    """The records listed, by name (or, for family history, relationship)."""
    return {"items": [r.get("name") or r.get("relationship") for r in found]}


def listing(
    tool: str,
    zh: str,
    en: str,
    row: Callable[[PlanContext, dict], str],
    fields: Callable[[list[dict]], dict] = named_items,
):
    """A query that lists one record type (its typed fields from ``fields``), or says it is not recorded."""

    async def run(ctx: PlanContext) -> Plan:
        found = await items(ctx, tool)
        if not found:
            return not_recorded(ctx, zh, en)
        return Plan(
            say(ctx, f"{zh}：", f"{en.capitalize()} on record: ") + joined(ctx, [row(ctx, r) for r in found]),
            output={"history": RECORDED, **fields(found)},
        )

    return run


async def latest_diagnosis(ctx: PlanContext) -> Plan:
    found = sorted(await items(ctx, "condition_list"), key=lambda c: day(c.get("time")))
    if not found:
        return not_recorded(ctx, "诊断", "diagnosis")
    latest = found[-1]
    active = [c for c in found[:-1] if c.get("status") == "active"]
    others = [f"{c.get('name')} ({day(c.get('time'))})" for c in active]
    return Plan(
        say(
            ctx,
            f"最近诊断：{latest.get('name')}（{day(latest.get('time'))}，{latest.get('status')}）。"
            f"其他在治诊断：{'、'.join(others) or '无'}。",
            f"Most recent diagnosis: {latest.get('name')} ({day(latest.get('time'))}, {latest.get('status')}). "
            f"Other active diagnoses: {', '.join(others) or 'none'}.",
        ),
        output={
            "latest": latest.get("name"),
            "diagnosed": day(latest.get("time")),
            "other_active": [c.get("name") for c in active],
        },
    )


async def current_medications(ctx: PlanContext) -> Plan:
    active = await items(ctx, "medication_search", "medications", status="active")
    if not active:
        return not_recorded(ctx, "在用药物", "current medication")
    rows = ["、".join(m.get("dosage") or []) or m.get("name", "?") for m in active]
    return Plan(
        say(ctx, f"当前在用药物 {len(rows)} 种：", f"{len(rows)} current medications: ") + joined(ctx, rows),
        output={"medications": [m.get("name") for m in active]},
    )


async def admissions(ctx: PlanContext) -> Plan:
    stays = [e for e in await items(ctx, "encounter_list") if e.get("class") == "inpatient"]
    if not stays:
        return not_recorded(ctx, "住院记录", "admission")
    last = max(stays, key=lambda e: e.get("time") or "")
    start, end, reason = last.get("time"), last.get("end"), last.get("reasonCode") or ""
    if not end:
        return Plan(
            say(
                ctx,
                f"最近一次住院（{reason}）：{moment(start)} 入院，目前仍在院。",
                f"Latest admission ({reason}): admitted {moment(start)}, still in hospital.",
            ),
            output={"stay": {"start": day(start), "end": None}, "length_of_stay": None},
        )
    los = (date.fromisoformat(day(end)) - date.fromisoformat(day(start))).days
    return Plan(
        say(
            ctx,
            f"最近一次住院（{reason}）：{moment(start)} 入院，{moment(end)} 出院，住院 {los} 天。",
            f"Latest admission ({reason}): admitted {moment(start)}, discharged {moment(end)}, length of stay "
            f"{los} days.",
        ),
        output={"stay": {"start": day(start), "end": day(end)}, "length_of_stay": {"value": los, "unit": "d"}},
    )


QUERIES: dict[str, Callable[[PlanContext], Awaitable[Plan]]] = {
    "demographics": demographics,
    "vitals": vitals,
    "medication_status": medication_status,
    "abnormal_labs": abnormal_labs,
    "allergies": listing("allergy_list", "药物过敏史", "allergy", allergy_row, allergy_fields),
    "procedures": listing(
        "procedure_list", "既往手术史", "past operation", lambda ctx, p: f"{p.get('name')}（{day(p.get('time'))}）"
    ),
    "family_history": listing(
        "family_history_list",
        "家族史",
        "family history",
        lambda ctx, f: f"{f.get('relationship')}：{'、'.join(f.get('conditions') or [])}",
    ),
    "latest_diagnosis": latest_diagnosis,
    "current_medications": current_medications,
    "admissions": admissions,
}


@plan("information_retrieval")
async def information_retrieval(ctx: PlanContext) -> Plan:
    """Run the query the context names."""
    return await named_step(
        ctx, QUERIES, "query", "无法识别要查询的内容。", "The requested information is not one this agent can look up."
    )
