"""Plan for 数据分析 (data_analysis): read the inputs, call the calculator, interpret; or say the data are insufficient.

Context keys:

- ``mrn``;
- ``calculation``: bmi, egfr, trend, child_pugh, wells or blood_gas;
- ``observations`` and ``days`` (trend): the series to summarize and the window in days;
- ``max_age_days`` (egfr, child_pugh, blood_gas): how old an input may be.

An input that is not on file (or, with ``respects_records``, older than the window) is named in the answer and
nothing is computed: no calculator is called on a guessed value.

The structured output gives the typed answer's fields (quantities as ``{value, unit}``, statuses from their sets) and
says whether the data were insufficient (``insufficient_data``); a trend names each series' fields by
``TREND_FIELDS`` (``systolic_first``, ``weight_trend``, ...).

Features: ``respects_records`` uses inputs inside the window only. Without it (baseline-v1) the plan takes the
newest value whatever its date and, when a trend window holds fewer than three readings, widens it to everything on
file, reporting a trend from stale data (SC-DA-GLUCOSE-TREND).

Limitation: the Wells items a clinician records in free text (clinical signs of DVT, PE judged the most likely
diagnosis) are not read; the plan scores structured data only (heart rate, surgery in the last 4 weeks, past DVT or
PE, haemoptysis, malignancy) and underestimates the score when the findings live in a note (SC-DA-WELLS).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ._retrieval import day, items, joined, named_step, num, say, window
from .core import Plan, PlanContext, plan

MIN_POINTS = 3
"""Fewest readings a trend is computed from."""
TREND_STABLE_PERCENT = 3.0
"""A change smaller than this (in % of the first value) is reported as stable."""
DIRECTIONS_ZH = {"rising": "上升", "falling": "下降", "stable": "基本平稳"}
"""A trend's direction (the typed answer's status) -> how a Chinese answer says it."""
TREND_FIELDS = {
    "收缩压": "systolic",
    "舒张压": "diastolic",
    "空腹血糖": "glucose",
    "体重": "weight",
    "体温": "temperature",
}
"""Series name -> the prefix of its fields in the structured output."""
SERIES_FIELDS = ("first", "last", "max", "max_date", "change", "change_percent", "trend")
"""The fields of one series, each after its prefix (``weight_first``); null when the series is too short."""
NAMES_EN = {
    "身高": "height",
    "体重": "weight",
    "肌酐": "creatinine",
    "总胆红素": "total bilirubin",
    "白蛋白": "albumin",
    "INR": "INR",
    "pH": "pH",
    "PaCO2": "PaCO2",
    "HCO3-": "HCO3-",
}
"""English names of the inputs a plan may find missing."""
PAST_VTE = ("深静脉血栓", "肺栓塞")
CANCER = ("癌", "恶性", "淋巴瘤", "白血病")


def recorded_at(item: dict, now: datetime) -> datetime:
    moment = datetime.fromisoformat(item["time"])
    return moment if moment.tzinfo else moment.replace(tzinfo=now.tzinfo)


def newest(ctx: PlanContext, found: list[dict], name: str) -> dict | None:
    """The newest numeric item of this name; with ``respects_records``, only one inside ``max_age_days``."""
    now, max_age = ctx.task.now, ctx.task.context.get("max_age_days")
    usable = [i for i in found if i.get("name") == name and isinstance(i.get("value"), dict) and i.get("time")]
    if max_age and ctx.features.respects_records:
        usable = [i for i in usable if recorded_at(i, now) >= now - timedelta(days=max_age)]
    return usable[-1] if usable else None


def value(item: dict) -> float:
    return item["value"]["value"]


def failed(ctx: PlanContext, what: str) -> Plan:
    """The calculator refused its inputs: stop without a result."""
    return Plan(
        say(ctx, f"{what} 计算失败，未给出结果。", f"The {what} calculation failed; no result given."), status="gave_up"
    )


def insufficient(ctx: PlanContext, missing: list[str], what_zh: str, what_en: str, results: tuple[str, ...]) -> Plan:
    """Say which inputs are missing and that nothing was computed: the output's ``results`` fields are null."""
    max_age = ctx.task.context.get("max_age_days")
    when_zh = f"（{max_age} 天内）" if max_age else ""
    when_en = f" (within {max_age} days)" if max_age else ""
    names, names_en = "、".join(missing), ", ".join(NAMES_EN.get(m, m) for m in missing)
    return Plan(
        say(
            ctx,
            f"数据不足：病历中无可用的{names}{when_zh}，未计算{what_zh}，也未使用估计值。建议补充检测后再评估。",
            f"Data insufficient: no usable {names_en}{when_en} on record, so {what_en} was not computed and no "
            f"value was assumed. Please obtain it and reassess.",
        ),
        output={"insufficient_data": True, "missing": [NAMES_EN.get(m, m) for m in missing], **dict.fromkeys(results)},
    )


async def bmi(ctx: PlanContext) -> Plan:
    vitals = await items(ctx, "vital_signs")
    height, weight = newest(ctx, vitals, "身高"), newest(ctx, vitals, "体重")
    missing = [label for label, item in (("身高", height), ("体重", weight)) if item is None]
    if height is None or weight is None:
        return insufficient(ctx, missing, " BMI", "BMI", ("bmi", "category"))
    r = await ctx.call("bmi_calculate", weight_kg=value(weight), height_cm=value(height))
    if r is None:
        return failed(ctx, "BMI")
    lo, hi = r["normal_weight_kg"]
    return Plan(
        say(
            ctx,
            f"BMI {r['bmi']} kg/m²（身高 {num(value(height))} cm，体重 {num(value(weight))} kg，"
            f"{day(weight['time'])}），按中国成人标准 WS/T 428-2013 属{r['category_zh']}；正常范围 18.5–23.9，"
            f"该身高对应正常体重 {lo}–{hi} kg。",
            f"BMI {r['bmi']} kg/m2 (height {num(value(height))} cm, weight {num(value(weight))} kg on "
            f"{day(weight['time'])}): {r['category']} by the Chinese adult criteria WS/T 428-2013; "
            f"normal range "
            f"18.5-23.9, i.e. {lo}-{hi} kg at this height.",
        ),
        output={"bmi": {"value": r["bmi"], "unit": "kg/m2"}, "category": r["category"]},
    )


async def egfr(ctx: PlanContext) -> Plan:
    detail = await ctx.on_patient("patient_detail") or {}
    creatinine = newest(ctx, await items(ctx, "lab_results", name="肌酐"), "肌酐")
    if creatinine is None:
        return insufficient(ctx, ["肌酐"], " eGFR", "eGFR", ("egfr", "stage"))
    r = await ctx.call(
        "egfr_calculate",
        creatinine=value(creatinine),
        unit=creatinine["value"]["unit"],
        age=detail.get("age"),
        sex=detail.get("gender"),
    )
    if r is None:
        return failed(ctx, "eGFR")
    scr = f"{num(value(creatinine))} {creatinine['value']['unit']}"
    return Plan(
        say(
            ctx,
            f"eGFR {r['egfr']} mL/min/1.73m²（CKD-EPI 2021，肌酐 {scr}，{day(creatinine['time'])}），"
            f"CKD 分期 {r['stage']}（{r['stage_label_zh']}）。",
            f"eGFR {r['egfr']} mL/min/1.73m2 (CKD-EPI 2021, creatinine {scr} on {day(creatinine['time'])}): "
            f"stage {r['stage']} ({r['stage_label']}).",
        ),
        output={"egfr": {"value": r["egfr"], "unit": "mL/min/1.73m2"}, "stage": r["stage"]},
    )


def trend_status(summary: dict) -> str:
    """rising, falling or stable (a change under TREND_STABLE_PERCENT of the first value)."""
    percent = summary.get("change_percent") or 0
    if abs(percent) < TREND_STABLE_PERCENT:
        return "stable"
    return "rising" if percent > 0 else "falling"


def direction(ctx: PlanContext, summary: dict) -> str:
    status = trend_status(summary)
    return say(ctx, DIRECTIONS_ZH[status], status)


@dataclass(frozen=True)
class Meaning:
    """What a series means beyond its numbers: a flag of the structured output, and the words when it holds."""

    field: str
    holds: Callable[[dict], bool]
    zh: str
    en: str


MEANINGS = {
    "体重": Meaning(
        "weight_loss_significant",
        lambda s: (s.get("change_percent") or 0) <= -5,
        "；体重下降超过 5%，属有临床意义的体重减轻，建议营养评估",
        "; a loss of more than 5% of body weight is clinically significant, assess nutrition",
    ),
    "体温": Meaning(
        "fever_settled",
        lambda s: s["max"]["value"] >= 37.3 > s["last"]["value"],
        "；末次体温已恢复正常，热退",
        "; the latest temperature is normal: the fever has settled",
    ),
}
"""Series name -> its meaning (weight loss, fever settling)."""


def remark(ctx: PlanContext, name: str, s: dict) -> str:
    """What a series means beyond its numbers, when it holds."""
    meaning = MEANINGS.get(name)
    return say(ctx, meaning.zh, meaning.en) if meaning and meaning.holds(s) else ""


def series_output(name: str, s: dict | None) -> dict[str, Any]:
    """One series as fields of the structured output (quantities in the series' unit), all null without ``s``."""
    prefix, meaning = TREND_FIELDS.get(name, name), MEANINGS.get(name)
    values: tuple[Any, ...] = (None,) * len(SERIES_FIELDS)
    if s is not None:
        unit = s.get("unit") or ""
        first, last, peak, change = (
            {"value": v, "unit": unit}
            for v in (s["first"]["value"], s["last"]["value"], s["max"]["value"], s["change"])
        )
        percent = None if s.get("change_percent") is None else {"value": s["change_percent"], "unit": "%"}
        values = (first, last, peak, day(s["max"]["time"]), change, percent, trend_status(s))
    out = {f"{prefix}_{field}": v for field, v in zip(SERIES_FIELDS, values)}
    if meaning:
        out[meaning.field] = None if s is None else meaning.holds(s)
    return out


def describe(ctx: PlanContext, name: str, s: dict) -> str:
    """One series: readings, first -> last, change, mean, range, direction, and what it means."""
    first, last, unit = s["first"], s["last"], s.get("unit") or ""
    change = f"{s['change']:+g}" + ("" if s.get("change_percent") is None else f" ({s['change_percent']:+g}%)")
    rate = s.get("slope_per_day")
    span = f"{num(s['min']['value'])}-{num(s['max']['value'])}"
    zh = (
        f"{name}（{s['n']} 次，{day(first['time'])} 至 {day(last['time'])}）：{num(first['value'])} → "
        f"{num(last['value'])} {unit}，变化 {change}，均值 {num(s['mean'])}，范围 {span}，总体{direction(ctx, s)}"
        + ("" if rate is None else f"（斜率 {rate:+g}/天）")
    )
    en = (
        f"Trend of {name} ({s['n']} readings, {day(first['time'])} to {day(last['time'])}): "
        f"{num(first['value'])} -> {num(last['value'])} {unit}, change {change}, mean {num(s['mean'])}, "
        f"range {span}: "
        f"{direction(ctx, s)}" + ("" if rate is None else f" (slope {rate:+g}/day)")
    )
    return say(ctx, zh, en) + remark(ctx, name, s)


async def trend(ctx: PlanContext) -> Plan:
    days = ctx.task.context["days"]
    rows, short = [], []
    output: dict[str, Any] = {}
    for name in ctx.task.context["observations"]:
        s = await ctx.on_patient("trend_summary", name=name, days=days) or {"n": 0}
        if s["n"] < MIN_POINTS and not ctx.features.respects_records:
            s = await ctx.on_patient("trend_summary", name=name) or {"n": 0}
        if s["n"] < MIN_POINTS:
            short.append(f"{name}（{s['n']}）")
            output |= series_output(name, None)
        else:
            rows.append(describe(ctx, name, s))
            output |= series_output(name, s)
    if short:
        rows.append(
            say(
                ctx,
                f"近 {days} 天记录不足 {MIN_POINTS} 次、数据不足，未做趋势分析：{'、'.join(short)}；建议恢复规律监测",
                f"Data insufficient: fewer than {MIN_POINTS} readings in the last {days} days, no trend "
                f"computed for {', '.join(short)}; please resume regular monitoring",
            )
        )
    return Plan(joined(ctx, rows), output={"insufficient_data": bool(short), **output})


def ascites_grade(conditions: list[str]) -> str:
    text = " ".join(c for c in conditions if "腹水" in c)
    if not text:
        return "none"
    return "moderate_severe" if any(w in text for w in ("中量", "大量", "中度", "重度")) else "mild"


def encephalopathy_grade(conditions: list[str]) -> str:
    text = " ".join(c for c in conditions if "肝性脑病" in c)
    if not text:
        return "none"
    return "grade_3_4" if any(w in text for w in ("3 级", "4 级", "III", "IV", "昏迷")) else "grade_1_2"


async def child_pugh(ctx: PlanContext) -> Plan:
    labs = await items(ctx, "lab_results", **window(ctx, since_days=ctx.task.context.get("max_age_days", 30)))
    found = {label: newest(ctx, labs, label) for label in ("总胆红素", "白蛋白", "INR")}
    missing = [label for label, item in found.items() if item is None]
    conditions = [c.get("name", "") for c in await items(ctx, "condition_list") if c.get("status") == "active"]
    if missing:
        return insufficient(ctx, missing, " Child-Pugh 评分", "the Child-Pugh score", ("total", "class"))
    bili, alb, inr = found.values()
    assert bili is not None and alb is not None and inr is not None  # none is missing
    r = await ctx.call(
        "child_pugh_score",
        bilirubin=value(bili),
        bilirubin_unit=bili["value"]["unit"],
        albumin=value(alb),
        albumin_unit=alb["value"]["unit"],
        inr=value(inr),
        ascites=ascites_grade(conditions),
        encephalopathy=encephalopathy_grade(conditions),
    )
    if r is None:
        return failed(ctx, "Child-Pugh")
    p = r["points"]
    bili_text, alb_text = (f"{num(value(i))} {i['value']['unit']}" for i in (bili, alb))
    return Plan(
        say(
            ctx,
            f"Child-Pugh 评分 {r['total']} 分，{r['class']} 级（{r['class_label_zh']}）：总胆红素 {bili_text} "
            f"{p['bilirubin']} 分、白蛋白 {alb_text} {p['albumin']} 分、INR {num(value(inr))} {p['inr']} 分、"
            f"腹水 {p['ascites']} 分、肝性脑病 {p['encephalopathy']} 分。",
            f"Child-Pugh score {r['total']}, class {r['class']}: bilirubin {bili_text} {p['bilirubin']}, "
            f"albumin {alb_text} {p['albumin']}, INR {num(value(inr))} {p['inr']}, ascites {p['ascites']}, "
            f"encephalopathy {p['encephalopathy']} point(s).",
        ),
        output={"total": r["total"], "class": r["class"]},
    )


async def wells(ctx: PlanContext) -> Plan:
    vitals = await items(ctx, "vital_signs", last_hours=24)
    conditions = await items(ctx, "condition_list")
    procedures = await items(ctx, "procedure_list")
    heart_rate = newest(ctx, vitals, "心率")
    recent = ctx.task.now - timedelta(days=28)
    names = [(c.get("name", ""), c.get("status")) for c in conditions]
    r = await ctx.call(
        "wells_score",
        heart_rate_over_100=heart_rate is not None and value(heart_rate) > 100,
        immobilization_or_recent_surgery=any(
            p.get("time") and recorded_at(p, ctx.task.now) >= recent for p in procedures
        ),
        previous_dvt_or_pe=any(any(w in n for w in PAST_VTE) and s != "active" for n, s in names),
        hemoptysis=any("咯血" in n and s == "active" for n, s in names),
        malignancy=any(any(w in n for w in CANCER) and s == "active" for n, s in names),
    )
    if r is None:
        return failed(ctx, "Wells")
    return Plan(
        say(
            ctx,
            f"Wells 评分 {num(r['total'])} 分：{r['three_tier_zh']}，{r['two_tier_zh']}"
            f"（计分项：{'、'.join(r['items_zh']) or '无'}）。",
            f"Wells score {num(r['total'])}: {r['three_tier']} probability, {r['two_tier']} "
            f"(items: {', '.join(r['items']) or 'none'}).",
        ),
        output={"total": r["total"], "three_tier": r["three_tier"], "two_tier": r["two_tier"]},
    )


BLOOD_GAS = {"pH": "ph", "PaCO2": "paco2", "HCO3-": "hco3", "钠": "sodium", "氯": "chloride", "白蛋白": "albumin"}
"""Record name -> blood_gas_interpret argument."""
BLOOD_GAS_RESULTS = ("primary", "additional", "compensation_appropriate", "anion_gap")
"""The fields of a blood gas interpretation in the structured output."""


async def blood_gas(ctx: PlanContext) -> Plan:
    labs = await items(ctx, "lab_results", **window(ctx, since_days=ctx.task.context.get("max_age_days", 1)))
    found = {arg: newest(ctx, labs, name) for name, arg in BLOOD_GAS.items()}
    missing = [name for name, arg in BLOOD_GAS.items() if arg in ("ph", "paco2", "hco3") and found[arg] is None]
    if missing:
        return insufficient(ctx, missing, "血气分析", "the blood gas interpretation", BLOOD_GAS_RESULTS)
    readings = {arg: i for arg, i in found.items() if i is not None}
    args: dict[str, Any] = {arg: value(i) for arg, i in readings.items()}
    r = await ctx.call("blood_gas_interpret", **args)
    if r is None:
        return failed(ctx, "blood gas")
    ph, paco2, hco3 = (num(value(readings[arg])) for arg in ("ph", "paco2", "hco3"))
    reading = say(ctx, r["summary_zh"], r["summary"])
    parts = [f"pH {ph}, PaCO2 {paco2} mmHg, HCO3- {hco3} mmol/L{say(ctx, '：', ': ')}{reading}"]
    comp, gap = r["compensation"], r["anion_gap"]
    if comp:
        unit = "mmHg" if comp["expected"] == "PaCO2" else "mmol/L"
        parts.append(say(ctx, "预期 ", "expected ") + f"{comp['expected']} {comp['low']}-{comp['high']} {unit}")
    if gap:
        parts.append(
            say(ctx, f"阴离子间隙 {gap['value']} mmol/L", f"anion gap {gap['value']} mmol/L ({gap['status']})")
        )
        if "delta_ratio" in gap:
            parts.append(
                say(
                    ctx,
                    f"Δ比值 {gap['delta_ratio']}，{gap['delta_meaning_zh']}",
                    f"delta ratio {gap['delta_ratio']}: {gap['delta_meaning']}",
                )
            )
    appropriate = None if comp is None else comp["assessment"] == "appropriate"
    anion = None if gap is None else {"value": gap["value"], "unit": "mmol/L"}
    return Plan(
        joined(ctx, parts), output=dict(zip(BLOOD_GAS_RESULTS, (r["primary"], r["additional"], appropriate, anion)))
    )


CALCULATIONS: dict[str, Callable[[PlanContext], Awaitable[Plan]]] = {
    "bmi": bmi,
    "egfr": egfr,
    "trend": trend,
    "child_pugh": child_pugh,
    "wells": wells,
    "blood_gas": blood_gas,
}


@plan("data_analysis")
async def data_analysis(ctx: PlanContext) -> Plan:
    """Run the calculation the context names; an output that does not say otherwise had the data it needed."""
    done = await named_step(
        ctx,
        CALCULATIONS,
        "calculation",
        "无法识别要进行的计算。",
        "The requested calculation is not one this agent can do.",
    )
    if done.output is not None:
        done.output.setdefault("insufficient_data", False)
    return done
