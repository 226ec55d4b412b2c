"""Clinical calculators (compute tools): BMI, eGFR, Child-Pugh, Wells (PE), blood gas, and a trend summary.

Each formula follows the published source named in its docstring; tests/tools/test_calculators.py checks them against
worked examples. For evaluation on synthetic patients only, not clinical advice.
"""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Literal

from pydantic import Field

from ..ehr import time_of, when
from ._reads import PatientArgs, require_patient
from .base import Args, ToolContext, ToolError, tool

MICROMOLAR = Literal["umol/L", "µmol/L", "μmol/L"]
"""Spellings of µmol/L (ASCII, micro sign, Greek mu)."""
CREATININE_UMOL_PER_MGDL = 88.4
BILIRUBIN_UMOL_PER_MGDL = 17.1


def band(value: float, cuts: list[tuple[float, str]], last: str) -> str:
    """The label of the first cut that ``value`` is below, else ``last``."""
    return next((label for cut, label in cuts if value < cut), last)


# --- BMI ------------------------------------------------------------------------------------------------------------

BMI_STANDARD = "WS/T 428-2013 成人体重判定 (China, adults): <18.5 偏瘦, 18.5-23.9 正常, 24.0-27.9 超重, >=28.0 肥胖"
BMI_LABELS = {"underweight": "偏瘦", "normal": "正常", "overweight": "超重", "obese": "肥胖"}


class BmiArgs(Args):
    weight_kg: float = Field(gt=0, le=500, description="Body weight in kg.")
    height_cm: float = Field(ge=50, le=280, description="Height in cm.")


@tool("bmi_calculate", kind="compute")
def bmi_calculate(ctx: ToolContext, args: BmiArgs) -> dict:
    """Body-mass index (kg/m2) classified by the Chinese adult criteria WS/T 428-2013, with the normal weight range."""
    metres2 = (args.height_cm / 100) ** 2
    bmi = round(args.weight_kg / metres2, 1)
    category = band(bmi, [(18.5, "underweight"), (24.0, "normal"), (28.0, "overweight")], "obese")
    return {
        "bmi": bmi,
        "unit": "kg/m2",
        "category": category,
        "category_zh": BMI_LABELS[category],
        "standard": BMI_STANDARD,
        "normal_range": [18.5, 23.9],
        "vs_normal": {"underweight": "below", "normal": "within"}.get(category, "above"),
        "normal_weight_kg": [math.ceil(18.5 * metres2 * 10) / 10, math.floor(23.9 * metres2 * 10) / 10],
    }


# --- eGFR -----------------------------------------------------------------------------------------------------------

CKD_STAGES = [  # (lower bound, stage, English, Chinese), KDIGO GFR categories
    (90, "G1", "normal or high", "正常或增高"),
    (60, "G2", "mildly decreased", "轻度下降"),
    (45, "G3a", "mildly to moderately decreased", "轻至中度下降"),
    (30, "G3b", "moderately to severely decreased", "中至重度下降"),
    (15, "G4", "severely decreased", "重度下降"),
    (0, "G5", "kidney failure", "肾衰竭"),
]


class EgfrArgs(Args):
    creatinine: float = Field(gt=0, description="Serum creatinine.")
    unit: MICROMOLAR | Literal["mg/dL"] = Field("umol/L", description="Unit of the creatinine value.")
    age: int = Field(ge=18, le=120, description="Age in years (the equation is for adults).")
    sex: Literal["male", "female"]


@tool("egfr_calculate", kind="compute")
def egfr_calculate(ctx: ToolContext, args: EgfrArgs) -> dict:
    """eGFR by the race-free CKD-EPI 2021 creatinine equation (Inker et al., NEJM 2021), with the KDIGO G stage.

    eGFR = 142 x min(Scr/k, 1)^a x max(Scr/k, 1)^-1.200 x 0.9938^age (x 1.012 if female); k 0.7 F / 0.9 M,
    a -0.241 F / -0.302 M, Scr in mg/dL. The stage is read from the eGFR rounded to a whole number, as reported.
    """
    scr = args.creatinine if args.unit == "mg/dL" else args.creatinine / CREATININE_UMOL_PER_MGDL
    if not 0.1 <= scr <= 30:
        raise ToolError("invalid_args", f"creatinine {args.creatinine} {args.unit} is implausible; check the unit")
    female = args.sex == "female"
    kappa, alpha = (0.7, -0.241) if female else (0.9, -0.302)
    ratio = scr / kappa
    egfr = 142 * min(ratio, 1) ** alpha * max(ratio, 1) ** -1.200 * 0.9938**args.age * (1.012 if female else 1)
    reported = round(egfr)
    _, stage, label, label_zh = next(s for s in CKD_STAGES if reported >= s[0])
    return {
        "egfr": reported,
        "unit": "mL/min/1.73m2",
        "stage": stage,
        "stage_label": label,
        "stage_label_zh": label_zh,
        "creatinine_mg_dl": round(scr, 2),
        "equation": "CKD-EPI 2021 creatinine (race-free)",
        "note": "CKD needs kidney damage or eGFR < 60 for more than 3 months; G1-G2 alone do not define CKD.",
    }


# --- Child-Pugh -----------------------------------------------------------------------------------------------------

CHILD_PUGH_CLASSES = [(7, "A", "肝功能良好"), (10, "B", "肝功能中等"), (16, "C", "肝功能差")]


class ChildPughArgs(Args):
    bilirubin: float = Field(gt=0, description="Total bilirubin.")
    bilirubin_unit: MICROMOLAR | Literal["mg/dL"] = "umol/L"
    albumin: float = Field(gt=0, description="Serum albumin.")
    albumin_unit: Literal["g/L", "g/dL"] = "g/L"
    inr: float = Field(gt=0, le=20)
    ascites: Literal["none", "mild", "moderate_severe"]
    encephalopathy: Literal["none", "grade_1_2", "grade_3_4"]


@tool("child_pugh_score", kind="compute")
def child_pugh_score(ctx: ToolContext, args: ChildPughArgs) -> dict:
    """Child-Pugh score (Pugh et al., Br J Surg 1973): points per item, total 5-15, class A (5-6), B (7-9), C (10-15).

    Bilirubin <2 / 2-3 / >3 mg/dL (34.2 / 51.3 umol/L); albumin >3.5 / 2.8-3.5 / <2.8 g/dL; INR <1.7 / 1.7-2.3 / >2.3;
    ascites none / mild / moderate-severe; encephalopathy none / grade 1-2 / grade 3-4 score 1 / 2 / 3.
    """
    per_mgdl = 1 if args.bilirubin_unit == "mg/dL" else BILIRUBIN_UMOL_PER_MGDL
    per_gdl = 1 if args.albumin_unit == "g/dL" else 10
    points = {
        "bilirubin": 1 if args.bilirubin < 2 * per_mgdl else 2 if args.bilirubin <= 3 * per_mgdl else 3,
        "albumin": 1 if args.albumin > 3.5 * per_gdl else 2 if args.albumin >= 2.8 * per_gdl else 3,
        "inr": 1 if args.inr < 1.7 else 2 if args.inr <= 2.3 else 3,
        "ascites": ["none", "mild", "moderate_severe"].index(args.ascites) + 1,
        "encephalopathy": ["none", "grade_1_2", "grade_3_4"].index(args.encephalopathy) + 1,
    }
    total = sum(points.values())
    _, grade, label_zh = next(c for c in CHILD_PUGH_CLASSES if total < c[0])
    return {
        "points": points,
        "total": total,
        "class": grade,
        "class_label_zh": label_zh,
        "classes": "A 5-6, B 7-9, C 10-15",
    }


# --- Wells (pulmonary embolism) -------------------------------------------------------------------------------------

WELLS_ITEMS = {  # item: (points, Chinese label)
    "clinical_signs_dvt": (3.0, "深静脉血栓的临床症状和体征"),
    "pe_most_likely": (3.0, "其他诊断可能性低于肺栓塞"),
    "heart_rate_over_100": (1.5, "心率 > 100 次/分"),
    "immobilization_or_recent_surgery": (1.5, "制动 ≥ 3 天或 4 周内手术"),
    "previous_dvt_or_pe": (1.5, "既往深静脉血栓或肺栓塞"),
    "hemoptysis": (1.0, "咯血"),
    "malignancy": (1.0, "恶性肿瘤（治疗中、6 个月内治疗或姑息治疗）"),
}


class WellsArgs(Args):
    clinical_signs_dvt: bool = Field(False, description="Leg swelling and pain on palpation of the deep veins.")
    pe_most_likely: bool = Field(False, description="An alternative diagnosis is less likely than PE.")
    heart_rate_over_100: bool = False
    immobilization_or_recent_surgery: bool = Field(False, description="Immobilized >= 3 days or surgery in 4 weeks.")
    previous_dvt_or_pe: bool = False
    hemoptysis: bool = False
    malignancy: bool = Field(False, description="Cancer treated now, within 6 months, or palliative.")


@tool("wells_score", kind="compute")
def wells_score(ctx: ToolContext, args: WellsArgs) -> dict:
    """Wells score for pulmonary embolism (Wells et al., Thromb Haemost 2000): points, three-tier and two-tier risk.

    Three tiers: < 2 low, 2-6 moderate, > 6 high. Two tiers: <= 4 PE unlikely, > 4 PE likely.
    """
    present = [item for item in WELLS_ITEMS if getattr(args, item)]
    total = sum(WELLS_ITEMS[item][0] for item in present)
    three = "low" if total < 2 else "moderate" if total <= 6 else "high"
    return {
        "total": total,
        "items": {item: WELLS_ITEMS[item][0] for item in present},
        "items_zh": [WELLS_ITEMS[item][1] for item in present],
        "three_tier": three,
        "three_tier_zh": {"low": "低危", "moderate": "中危", "high": "高危"}[three],
        "two_tier": "PE likely" if total > 4 else "PE unlikely",
        "two_tier_zh": "肺栓塞可能" if total > 4 else "肺栓塞可能性小",
    }


# --- Blood gas ------------------------------------------------------------------------------------------------------

DISORDERS = {
    "metabolic_acidosis": ("metabolic acidosis", "代谢性酸中毒"),
    "metabolic_alkalosis": ("metabolic alkalosis", "代谢性碱中毒"),
    "respiratory_acidosis": ("respiratory acidosis", "呼吸性酸中毒"),
    "respiratory_alkalosis": ("respiratory alkalosis", "呼吸性碱中毒"),
}
DELTA_RATIO = (
    ("with a normal-gap metabolic acidosis", "合并正常阴离子间隙代谢性酸中毒"),
    ("pure high-gap metabolic acidosis", "单纯高阴离子间隙代谢性酸中毒"),
    ("with a metabolic alkalosis", "合并代谢性碱中毒"),
)
"""What a delta ratio (AG - 12) / (24 - HCO3) below 1, from 1 to 2, and above 2 means."""
ANION_GAP_NORMAL = (8.0, 16.0)
"""Reference range of Na - (Cl + HCO3) in mmol/L (诊断学); 12 is its midpoint, used for the delta ratio."""


class BloodGasArgs(Args):
    ph: float = Field(ge=6.5, le=8.0)
    paco2: float = Field(gt=5, le=200, description="PaCO2 in mmHg (kPa x 7.5).")
    hco3: float = Field(gt=0, le=80, description="Bicarbonate in mmol/L.")
    sodium: float | None = Field(None, gt=80, le=200, description="Na in mmol/L, for the anion gap.")
    chloride: float | None = Field(None, gt=50, le=160, description="Cl in mmol/L, for the anion gap.")
    albumin: float | None = Field(None, gt=0, le=80, description="Albumin in g/L, to correct the anion gap.")


def primary_disorders(ph: float, paco2: float, hco3: float) -> list[str]:
    """The primary process(es): those pushing pH the way it went; with a normal pH, towards its side of 7.40."""
    acid = [d for d, on in (("respiratory_acidosis", paco2 > 45), ("metabolic_acidosis", hco3 < 22)) if on]
    alkali = [d for d, on in (("respiratory_alkalosis", paco2 < 35), ("metabolic_alkalosis", hco3 > 26)) if on]
    if ph < 7.35 or (ph < 7.40 and acid):
        return acid
    if ph > 7.45 or (ph > 7.40 and alkali):
        return alkali
    return acid + alkali


def compensation(primary: str, paco2: float, hco3: float) -> dict:
    """Expected compensation of a single primary disorder and what a departure from it adds."""
    if primary.startswith("metabolic"):
        # Winter's formula (Albert, Dell & Winters 1967); metabolic alkalosis: PaCO2 = 0.7 x HCO3 + 21 +/- 2.
        centre, rule = (
            (1.5 * hco3 + 8, "Winter: PaCO2 = 1.5 x HCO3 + 8 +/- 2")
            if primary == "metabolic_acidosis"
            else (0.7 * hco3 + 21, "PaCO2 = 0.7 x HCO3 + 21 +/- 2")
        )
        low, high = centre - 2, centre + 2
        extra = "respiratory_acidosis" if paco2 > high else "respiratory_alkalosis" if paco2 < low else None
        return {
            "expected": "PaCO2",
            "low": round(low, 1),
            "high": round(high, 1),
            "rule": rule,
            "assessment": "appropriate" if extra is None else "additional disorder",
            "additional": extra,
        }
    # Respiratory: HCO3 changes per 10 mmHg of PaCO2 from 40, acute vs chronic (acidosis 1 / 3.5, alkalosis 2 / 4).
    acute_k, chronic_k = (0.1, 0.35) if primary == "respiratory_acidosis" else (0.2, 0.4)
    delta = abs(paco2 - 40)
    sign = 1 if primary == "respiratory_acidosis" else -1
    acute, chronic = 24 + sign * acute_k * delta, 24 + sign * chronic_k * delta
    low, high = min(acute, chronic) - 2, max(acute, chronic) + 2
    extra = "metabolic_acidosis" if hco3 < low else "metabolic_alkalosis" if hco3 > high else None
    phase = "acute" if abs(hco3 - acute) <= abs(hco3 - chronic) else "chronic"
    return {
        "expected": "HCO3",
        "acute": round(acute, 1),
        "chronic": round(chronic, 1),
        "low": round(low, 1),
        "high": round(high, 1),
        "rule": "HCO3 per 10 mmHg PaCO2: acute 1 / chronic 3.5 (acidosis), 2 / 4 (alkalosis), +/- 2",
        "assessment": "appropriate" if extra is None else "additional disorder",
        "additional": extra,
        "phase": phase if extra is None else None,
    }


def anion_gap(args: BloodGasArgs) -> dict | None:
    """Na - (Cl + HCO3), albumin-corrected (+0.25 per g/L below 40) when albumin is given, and the delta ratio."""
    if args.sodium is None or args.chloride is None:
        return None
    gap = args.sodium - args.chloride - args.hco3
    used = gap if args.albumin is None else gap + 0.25 * (40 - args.albumin)
    status = "high" if used > ANION_GAP_NORMAL[1] else "low" if used < ANION_GAP_NORMAL[0] else "normal"
    out = {
        "value": round(gap, 1),
        "corrected": None if args.albumin is None else round(used, 1),
        "normal": list(ANION_GAP_NORMAL),
        "status": status,
    }
    if status == "high" and args.hco3 < 24:
        ratio = (used - 12) / (24 - args.hco3)
        meaning, meaning_zh = DELTA_RATIO[0 if ratio < 1 else 1 if ratio <= 2 else 2]
        out |= {"delta_ratio": round(ratio, 2), "delta_meaning": meaning, "delta_meaning_zh": meaning_zh}
    return out


@tool("blood_gas_interpret", kind="compute")
def blood_gas_interpret(ctx: ToolContext, args: BloodGasArgs) -> dict:
    """Arterial blood gas: primary disorder, expected compensation (Winter's formula etc.), anion gap and delta ratio.

    Normal: pH 7.35-7.45, PaCO2 35-45 mmHg, HCO3 22-26 mmol/L, anion gap 8-16 mmol/L.
    """
    primary = primary_disorders(args.ph, args.paco2, args.hco3)
    comp = compensation(primary[0], args.paco2, args.hco3) if len(primary) == 1 else None
    additional = [comp["additional"]] if comp and comp["additional"] else []
    gap = anion_gap(args)
    if gap and gap["status"] == "high" and "metabolic_acidosis" not in primary + additional:
        additional.append("metabolic_acidosis")
    computed_ph = 6.1 + math.log10(args.hco3 / (0.03 * args.paco2))
    status = "acidemia" if args.ph < 7.35 else "alkalemia" if args.ph > 7.45 else "normal pH"
    return {
        "ph_status": status,
        "primary": primary,
        "mixed": len(primary) > 1,
        "compensation": comp,
        "additional": additional,
        "anion_gap": gap,
        "summary": summary(status, primary, comp, additional, gap, False),
        "summary_zh": summary(status, primary, comp, additional, gap, True),
        "consistency": {
            "henderson_hasselbalch_ph": round(computed_ph, 2),
            "consistent": abs(computed_ph - args.ph) <= 0.05,
        },
    }


def summary(
    status: str, primary: list[str], comp: dict | None, additional: list[str], gap: dict | None, zh: bool
) -> str:
    """One sentence (English, or Chinese when ``zh``): primary disorder(s), compensation, additions, raised gap.

    Every text pair below is (English, Chinese), indexed by ``zh``.
    """

    def names(codes: list[str]) -> str:
        return ("、" if zh else " and ").join(DISORDERS[c][zh] for c in codes)

    if not primary:
        text = (
            ("no acid-base disorder", "酸碱平衡大致正常")
            if status == "normal pH"
            else (
                "abnormal pH without a clear primary process: check the values",
                "pH 异常但原发过程不明确，请核对数值",
            )
        )[zh]
    else:
        text = ("mixed " if len(primary) > 1 else "primary ", "混合性" if len(primary) > 1 else "原发")[zh] + names(
            primary
        )
    if comp:
        text += (
            ("; compensation as expected", "，代偿在预期范围内")
            if comp["assessment"] == "appropriate"
            else ("; compensation outside the expected range", "，代偿超出预期范围")
        )[zh]
    if additional:
        text += ("; with " if not zh else "，合并") + names(additional)
    if gap and gap["status"] == "high":
        value = gap["value"] if gap["corrected"] is None else gap["corrected"]
        text += (f" (raised anion gap, {value} mmol/L)", f"（阴离子间隙升高，{value} mmol/L）")[zh]
    return text


# --- Trend summary --------------------------------------------------------------------------------------------------


class TrendArgs(PatientArgs):
    name: str = Field(min_length=1, description="Observation name or code, e.g. 收缩压 or 8480-6.")
    days: float | None = Field(None, gt=0, le=3650, description="Only the last N days; everything on file if omitted.")


@tool("trend_summary", kind="compute")
def trend_summary(ctx: ToolContext, args: TrendArgs) -> dict:
    """Summary of one numeric observation series of the patient: n, first, last, min, max, mean, change, slope/day."""
    require_patient(ctx, args.patient_id)
    since = None if args.days is None else (ctx.view.now - timedelta(days=args.days)).timestamp()
    tz = ctx.view.image.tz
    series = [
        (t, r)
        for r in ctx.view.search(args.patient_id, "Observation", since=since, code=args.name)
        if isinstance(r.get("valueQuantity", {}).get("value"), (int, float)) and (t := time_of(r, tz)) is not None
    ]
    out: dict = {"name": args.name, "days": args.days, "n": len(series)}
    if not series:
        return out | {"message": "no dated numeric observation of this name in the window"}
    units = {r["valueQuantity"].get("unit") for _, r in series}
    if len(units) > 1:
        raise ToolError("mixed_units", f"{args.name} is recorded in several units: {', '.join(map(str, units))}")
    points = [{"time": when(r), "value": r["valueQuantity"]["value"]} for _, r in series]
    values = [p["value"] for p in points]
    offsets = [(t - series[0][0]) / 86400 for t, _ in series]
    first, last = points[0], points[-1]
    out |= {
        "unit": units.pop(),
        "first": first,
        "last": last,
        "min": min(points, key=lambda p: p["value"]),
        "max": max(points, key=lambda p: p["value"]),
        "mean": round(sum(values) / len(values), 2),
        "change": round(last["value"] - first["value"], 2),
        "change_percent": round((last["value"] - first["value"]) / first["value"] * 100, 1) if first["value"] else None,
        "span_days": round(offsets[-1], 1),
        "slope_per_day": slope(offsets, values),
    }
    return out


def slope(x: list[float], y: list[float]) -> float | None:
    """Least-squares slope of y over x, or None with fewer than two distinct x."""
    mx, my = sum(x) / len(x), sum(y) / len(y)
    sxx = sum((a - mx) ** 2 for a in x)
    if sxx == 0:
        return None
    return round(sum((a - mx) * (b - my) for a, b in zip(x, y)) / sxx, 3)
