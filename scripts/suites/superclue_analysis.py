"""数据分析 (data analysis): read the inputs, call the calculator, interpret the result.

Read-only tasks. Each calculator scenario carries a trap a careless analysis falls into (a non-Chinese BMI cut-off,
an old creatinine, a reading outside the window, a resolved encephalopathy, a negated symptom in a note, a low PaCO2
taken for a second disorder). Two scenarios have missing data as the right outcome: say so, compute nothing.
"""

from __future__ import annotations

import re

from forge_kernel.authoring import Draft, call
from forge_kernel.ehr import fhir
from forge_kernel.spec import VerifierUse

from .common import answer_number, answer_text, counterexample
from .superclue_retrieval import answer_any, build, chain, highest_temperature, magnitude, ts, vitals

LOINC = {
    "肌酐": "14682-9",
    "空腹血糖": "14771-0",
    "总胆红素": "14631-6",
    "白蛋白": "61151-7",
    "INR": "6301-6",
    "pH": "2744-1",
    "PaCO2": "2019-8",
    "HCO3-": "1960-4",
    "钠": "2951-2",
    "氯": "2075-0",
    "PaO2": "2703-7",
}


def labs(
    prefix: str, pid: str, time: str, values: dict[str, tuple[float, str]], flags: dict[str, str] | None = None
) -> list[dict]:
    """Laboratory Observations taken together: {name: (value, unit)} (unit "" for none, e.g. pH), flags by name."""
    found = [
        fhir.observation(
            f"{prefix}-{i}", pid, name, value, unit, time, "laboratory", LOINC.get(name), (flags or {}).get(name)
        )
        for i, (name, (value, unit)) in enumerate(values.items())
    ]
    for obs in found:
        if not obs["valueQuantity"]["unit"]:
            del obs["valueQuantity"]["unit"]
    return found


def series(
    prefix: str, pid: str, name: str, unit: str, points: list[tuple[str, float]], category: str = "vital-signs"
) -> list[dict]:
    """One observation series, e.g. home blood pressure: (time, value) points."""
    return [
        fhir.observation(f"{prefix}-{i}", pid, name, value, unit, time, category, LOINC.get(name))
        for i, (time, value) in enumerate(points)
    ]


def analysis(sid: str, title: str, **kw) -> Draft:
    return build(sid, title, category="data_analysis", dimension="数据分析", **kw)


def forbid_call(vid: str, tool: str) -> VerifierUse:
    """A success check: the calculator was never called (there is nothing valid to compute on)."""
    return VerifierUse(id=vid, kind="trace.calls", category="success", params={"forbidden": [{"tool": tool}]})


INSUFFICIENT = [
    "数据不足",
    "无法计算",
    "未计算",
    "不能计算",
    "无法分析",
    "未做趋势",
    "insufficient",
    "cannot be calculated",
    "cannot be computed",
    "not computed",
    "cannot calculate",
    "not enough",
]


def bmi() -> Draft:
    pid, other = "da-bmi-p1", "da-bmi-p2"
    resources = [
        fhir.patient(pid, "何文斌", "male", "1978-03-22", "SC-1201"),
        *vitals(
            "da-bmi",
            pid,
            [
                (ts("05-12 08:30", 2025), {"身高": 168}),
                (ts("05-12 08:30"), {"体重": 78.5}),
                (ts("11-30 08:10"), {"身高": 168, "体重": 80.2}),
            ],
        ),
        fhir.condition("da-bmi-c1", pid, "2 型糖尿病", "2024-06-18"),
        fhir.patient(other, "何文彬", "male", "1979-07-01", "SC-1202"),
        *vitals("da-bmi-x", other, [(ts("11-29 09:00"), {"身高": 181, "体重": 95.0})]),
    ]
    calls = chain("SC-1201", call("vital_signs", patient_id=pid), call("bmi_calculate", weight_kg=80.2, height_cm=168))
    answer = (
        "BMI 28.4 kg/m²（身高 168 cm，体重 80.2 kg，2026-11-30），按中国成人标准 WS/T 428-2013 属肥胖（≥28.0）；"
        "正常范围 18.5–23.9，该身高对应正常体重 52.3–67.4 kg。"
    )
    old_weight = [*calls[:2], call("bmi_calculate", weight_kg=78.5, height_cm=168), calls[-1]]
    return analysis(
        "SC-DA-BMI",
        "BMI 计算与分类",
        patient=pid,
        other=other,
        resources=resources,
        instruction={
            "zh": "请根据患者何文斌（病历号 SC-1201）最近一次测量的身高和体重计算 BMI，并按中国成人标准判断体重分类。",
            "en": "Calculate the BMI of patient He Wenbin (MRN SC-1201) from his latest height and weight and "
            "classify it by the Chinese adult criteria.",
        },
        context={"mrn": "SC-1201", "calculation": "bmi"},
        calls=calls,
        answer=answer,
        checks=[
            magnitude("bmi", 28.4, 0.1, "BMI", "体重指数", "body-mass index", "body mass index"),
            # 28.4 is obese by WS/T 428 (>= 28) but only overweight by the WHO cut-offs (25-29.9).
            answer_any("category", "肥胖", "obese", "obesity"),
        ],
        wrong=[
            counterexample("old-weight", old_weight, "BMI 27.8 kg/m²，超重。", ["bmi", "category"]),
            counterexample("who-criteria", calls, "BMI 28.4 kg/m²，按 WHO 标准（25–29.9）属超重。", ["category"]),
        ],
        key_tool="bmi_calculate",
        slices={"age_band": "45-64", "sex": "male", "missingness": "none", "outcome": "act"},
    )


def egfr() -> Draft:
    pid, other = "da-gfr-p1", "da-gfr-p2"
    umol = "µmol/L"
    resources = [
        fhir.patient(pid, "邓永强", "male", "1960-08-15", "SC-1203"),
        fhir.condition("da-gfr-c1", pid, "2 型糖尿病", "2012-04-06"),
        fhir.condition("da-gfr-c2", pid, "糖尿病肾病", "2024-04-22"),
        *labs("da-gfr-a", pid, ts("11-20 08:00", 2025), {"肌酐": (118, umol)}),
        *labs("da-gfr-b", pid, ts("05-18 08:00"), {"肌酐": (139, umol)}, {"肌酐": "H"}),
        *labs("da-gfr-c", pid, ts("11-28 08:00"), {"肌酐": (156, umol)}, {"肌酐": "H"}),
        fhir.patient(other, "邓永刚", "male", "1958-01-19", "SC-1204"),
        *labs("da-gfr-x", other, ts("11-29 08:00"), {"肌酐": (320, umol)}, {"肌酐": "H"}),
    ]
    calls = chain(
        "SC-1203",
        call("patient_detail", patient_id=pid),
        call("lab_results", patient_id=pid, name="肌酐"),
        call("egfr_calculate", creatinine=156, unit=umol, age=66, sex="male"),
    )
    # By hand: 156 / 88.4 = 1.765 mg/dL; 142 x (1.765 / 0.9)^-1.200 x 0.9938^66 = 142 x 0.4457 x 0.6633 = 42.0.
    answer = "eGFR 42 mL/min/1.73m²（CKD-EPI 2021，肌酐 156 µmol/L，2026-11-28），CKD 分期 G3b（中至重度下降）。"
    oldest = [*calls[:3], call("egfr_calculate", creatinine=118, unit=umol, age=66, sex="male"), calls[-1]]
    return analysis(
        "SC-DA-EGFR",
        "eGFR 计算与 CKD 分期",
        patient=pid,
        other=other,
        resources=resources,
        instruction={
            "zh": "请用患者邓永强（病历号 SC-1203）3 个月内最近一次血肌酐，按 CKD-EPI 2021 公式计算 eGFR 并给出 CKD 分期（G1–G5）。",
            "en": "Using the most recent serum creatinine of patient Deng Yongqiang (MRN SC-1203) from the last 3 "
            "months, calculate his eGFR with the CKD-EPI 2021 equation and give the CKD stage (G1-G5).",
        },
        context={"mrn": "SC-1203", "calculation": "egfr", "max_age_days": 90},
        calls=calls,
        answer=answer,
        checks=[
            answer_number("egfr", 42, 1, pattern=r"(\d+(?:\.\d+)?)\s*(?:mL|ml)"),
            answer_text("stage", all_=["G3b"]),
        ],
        wrong=[
            # 118 umol/L a year ago gives eGFR 59 (G3a): the trend of decline is missed.
            counterexample("oldest-creatinine", oldest, "eGFR 59 mL/min/1.73m²，CKD G3a。", ["egfr", "stage"]),
            counterexample(
                "ckd-epi-2009",
                [*calls[:3], calls[-1]],
                "eGFR 39 mL/min/1.73m²（CKD-EPI 2009），G3b。",
                ["chain", "egfr"],
            ),
        ],
        key_tool="egfr_calculate",
        risk="medium",
        slices={"age_band": "65+", "sex": "male", "missingness": "none", "outcome": "act"},
    )


ARROW = r"\s*(?:→|->)\s*"
"""Between the first and the last value of a trend ("162 → 138")."""


def trend_ends(vid: str, first: float, last: float, unit: str, *labels: str) -> list[VerifierUse]:
    """The first and the last value of a trend, written "first → last" (the first arrow after one of the labels in
    its sentence, when there are labels): ``<vid>-first`` and ``<vid>-last``."""
    lead = rf"(?:{'|'.join(map(re.escape, labels))})[^；;。]*?" if labels else ""
    number, arrow = r"(\d+(?:\.\d+)?)", rf"(?:\s*{re.escape(unit)})?{ARROW}"
    return [
        answer_number(f"{vid}-first", first, 0.05, pattern=lead + number + arrow),
        answer_number(f"{vid}-last", last, 0.05, pattern=lead + r"\d+(?:\.\d+)?" + arrow + number),
    ]


def bp_trend() -> Draft:
    pid, other = "da-bp-p1", "da-bp-p2"
    days = ["11-03", "11-06", "11-09", "11-12", "11-15", "11-18", "11-21", "11-25", "11-29"]
    sbp = [162, 158, 155, 150, 148, 145, 142, 140, 138]
    dbp = [98, 97, 95, 93, 92, 90, 89, 88, 86]
    home = [(ts(f"{d} 07:30"), {"收缩压": s, "舒张压": d_}) for d, s, d_ in zip(days, sbp, dbp)]
    resources = [
        fhir.patient(pid, "林志远", "male", "1969-12-05", "SC-1205"),
        fhir.condition("da-bp-c1", pid, "原发性高血压 2 级", "2026-10-30"),
        fhir.medication_statement("da-bp-m1", pid, "氨氯地平", "5 mg", "qd", "oral", "2026-11-02"),
        *vitals("da-bp", pid, [(ts("10-30 10:00"), {"收缩压": 168, "舒张压": 100}), *home]),
        fhir.patient(other, "林志源", "male", "1970-03-14", "SC-1206"),
        *vitals("da-bp-x", other, [(ts("11-20 08:00"), {"收缩压": 150}), (ts("11-27 08:00"), {"收缩压": 171})]),
    ]
    calls = chain(
        "SC-1205",
        call("trend_summary", patient_id=pid, name="收缩压", days=28),
        call("trend_summary", patient_id=pid, name="舒张压", days=28),
    )
    answer = (
        "近 28 天家庭血压 9 次（2026-11-03 至 11-29）：收缩压 162 → 138 mmHg，下降 24 mmHg（-14.8%），均值 148.7；"
        "舒张压 98 → 86 mmHg，下降 12 mmHg（-12.2%），均值 92.0。服用氨氯地平后血压呈持续下降趋势，末次 138/86 mmHg，"
        "接近但尚未达到 <130/80 mmHg 的目标。"
    )
    return analysis(
        "SC-DA-BP-TREND",
        "血压趋势分析",
        patient=pid,
        other=other,
        resources=resources,
        instruction={
            "zh": "患者林志远（病历号 SC-1205）11 月 2 日起服用氨氯地平。请分析其近 4 周（28 天）家庭自测血压的变化趋势：收缩压和舒张压的首末值、变化幅度及总体趋势。",
            "en": "Patient Lin Zhiyuan (MRN SC-1205) started amlodipine on 2 November. Analyse his home blood pressure "
            "over the last 4 weeks (28 days): first and last systolic and diastolic values, the change and the "
            "overall trend.",
        },
        context={"mrn": "SC-1205", "calculation": "trend", "observations": ["收缩压", "舒张压"], "days": 28},
        calls=calls,
        answer=answer,
        checks=[
            *trend_ends("systolic", 162, 138, "mmHg", "收缩压", "systolic"),
            *trend_ends("diastolic", 98, 86, "mmHg", "舒张压", "diastolic"),
            answer_any("direction", "下降", "降低", "decreas", "fall", "fell", "declin"),
            # The clinic reading of 168/100 mmHg on 30 October lies outside the 28-day window.
            answer_text("window", none=["168"]),
        ],
        wrong=[
            counterexample(
                "window-ignored",
                [
                    calls[0],
                    call("trend_summary", patient_id=pid, name="收缩压", days=60),
                    call("trend_summary", patient_id=pid, name="舒张压", days=60),
                    calls[-1],
                ],
                "收缩压 168 → 138 mmHg，下降 30；舒张压 100 → 86 mmHg，下降 14；呈下降趋势。",
                ["systolic-first", "diastolic-first", "window"],
            ),
            counterexample(
                "systolic-only",
                calls,
                "收缩压 162 → 138 mmHg，下降 24 mmHg，呈下降趋势。",
                ["diastolic-first", "diastolic-last"],
            ),
        ],
        key_tool="trend_summary",
        slices={"age_band": "45-64", "sex": "male", "missingness": "none", "outcome": "act"},
    )


def glucose_trend() -> Draft:
    pid, other = "da-glu-p1", "da-glu-p2"
    old = [("08-24", 7.2), ("09-03", 7.6), ("09-14", 7.9), ("09-23", 8.4), ("10-02", 8.8), ("10-12", 9.3)]
    resources = [
        fhir.patient(pid, "郑桂芳", "female", "1957-04-18", "SC-1207"),
        fhir.condition("da-glu-c1", pid, "2 型糖尿病", "2011-02-14"),
        fhir.medication_statement("da-glu-m1", pid, "二甲双胍", "0.5 g", "tid", "oral", "2011-02-20"),
        *series("da-glu", pid, "空腹血糖", "mmol/L", [(ts(f"{d} 06:30"), v) for d, v in old], "laboratory"),
        fhir.patient(other, "郑桂英", "female", "1958-12-02", "SC-1208"),
        *series(
            "da-glu-x",
            other,
            "空腹血糖",
            "mmol/L",
            [(ts("11-10 06:30"), 6.8), (ts("11-17 06:30"), 6.5), (ts("11-24 06:30"), 6.3)],
            "laboratory",
        ),
    ]
    calls = chain("SC-1207", call("trend_summary", patient_id=pid, name="空腹血糖", days=28))
    answer = (
        "数据不足：近 28 天病历中无空腹血糖记录，无法分析近 4 周的血糖趋势，未做推测。"
        "建议恢复每周至少 2–3 次空腹血糖监测后再评估。"
    )
    stale = [*calls[:2], call("trend_summary", patient_id=pid, name="空腹血糖"), calls[-1]]
    return analysis(
        "SC-DA-GLUCOSE-TREND",
        "血糖趋势分析",
        patient=pid,
        other=other,
        resources=resources,
        instruction={
            "zh": "请分析患者郑桂芳（病历号 SC-1207）近 4 周（28 天）空腹血糖的变化趋势，判断血糖控制是否改善。",
            "en": "Analyse the fasting glucose trend of patient Zheng Guifang (MRN SC-1207) over the last 4 weeks "
            "(28 days) and say whether her control is improving.",
        },
        context={"mrn": "SC-1207", "calculation": "trend", "observations": ["空腹血糖"], "days": 28},
        calls=calls,
        answer=answer,
        checks=[answer_any("insufficient", *INSUFFICIENT, "无记录", "no reading", "no fasting glucose")],
        wrong=[
            # The August-October readings rise from 7.2 to 9.3 mmol/L; presenting them as the last 4 weeks misleads.
            counterexample(
                "stale-trend",
                stale,
                "空腹血糖（6 次）：7.2 → 9.3 mmol/L，变化 +2.1（+29.2%），总体上升。",
                ["insufficient"],
            ),
            counterexample("invented-stable", calls, "近 4 周空腹血糖平稳，约 7 mmol/L，控制尚可。", ["insufficient"]),
        ],
        key_tool="trend_summary",
        slices={"age_band": "65+", "sex": "female", "missingness": "partial", "outcome": "do_not_act"},
    )


def weight_trend() -> Draft:
    pid, other = "da-wt-p1", "da-wt-p2"
    weekly = [
        ("10-06", 62.0),
        ("10-13", 61.6),
        ("10-20", 61.0),
        ("10-27", 60.1),
        ("11-03", 59.3),
        ("11-10", 58.4),
        ("11-17", 57.8),
        ("11-24", 57.0),
        ("11-29", 56.4),
    ]
    resources = [
        fhir.patient(pid, "钱国栋", "male", "1961-01-09", "SC-1209"),
        fhir.condition("da-wt-c1", pid, "胃体低分化腺癌（cT3N1M0）", "2026-09-20"),
        fhir.medication_statement("da-wt-m1", pid, "奥沙利铂", "130 mg/m2", "q3w", "iv", "2026-10-08"),
        *vitals("da-wt", pid, [(ts(f"{d} 08:00"), {"体重": w}) for d, w in weekly]),
        fhir.patient(other, "钱国梁", "male", "1960-05-22", "SC-1210"),
        *vitals("da-wt-x", other, [(ts("11-01 08:00"), {"体重": 70.2}), (ts("11-28 08:00"), {"体重": 71.0})]),
    ]
    calls = chain("SC-1209", call("trend_summary", patient_id=pid, name="体重", days=56))
    # By hand: 56.4 - 62.0 = -5.6 kg; -5.6 / 62.0 = -9.0 %; mean 533.6 / 9 = 59.3 kg.
    answer = (
        "Weight over the last 8 weeks (9 weekly readings, 2026-10-06 to 2026-11-29): 62.0 -> 56.4 kg, a loss of "
        "5.6 kg (-9.0%), mean 59.3 kg, falling steadily by about 0.1 kg a day. A loss of more than 5% in two "
        "months is clinically significant weight loss during chemotherapy: assess nutrition and refer to the "
        "dietitian."
    )
    return analysis(
        "SC-DA-WEIGHT-TREND",
        "体重变化趋势",
        patient=pid,
        other=other,
        resources=resources,
        language="en",
        instruction={
            "zh": "患者钱国栋（病历号 SC-1209）胃癌化疗中。请分析其近 8 周（56 天）体重变化：首末体重、变化量及百分比，并解读其意义。",
            "en": "Patient Qian Guodong (MRN SC-1209) is on chemotherapy for gastric cancer. Analyse his weight over "
            "the last 8 weeks (56 days): first and latest weight, total change in kg and percent, and what it "
            "means.",
        },
        context={"mrn": "SC-1209", "calculation": "trend", "observations": ["体重"], "days": 56},
        calls=calls,
        answer=answer,
        checks=[
            *trend_ends("weight", 62, 56.4, "kg"),
            magnitude("change-kg", 5.6, 0.05, "loss of", "lost", "下降", "减少", "减轻", "降低", "change"),
            answer_number("change-percent", 9.0, 0.2, pattern=r"-?(\d+(?:\.\d+)?)\s*%"),
            answer_any(
                "significance", "5%", "significant", "临床意义", "营养", "nutrition", "malnutrition", "cachexia"
            ),
        ],
        wrong=[
            counterexample(
                "two-weeks-only",
                [calls[0], call("trend_summary", patient_id=pid, name="体重", days=14), calls[-1]],
                "Weight 57.8 -> 56.4 kg over 2 weeks (-1.4 kg, -2.4%): roughly stable.",
                ["weight-first", "change-kg", "change-percent", "significance"],
            ),
            counterexample(
                "no-interpretation", calls, "Weight 62.0 -> 56.4 kg, change -5.6 kg (-9.0%).", ["significance"]
            ),
        ],
        key_tool="trend_summary",
        risk="medium",
        slices={"age_band": "65+", "sex": "male", "missingness": "none", "outcome": "act"},
    )


def fever_trend() -> Draft:
    pid, other = "da-fev-p1", "da-fev-p2"
    temps = [
        ("11-23 14:00", 39.2),
        ("11-23 22:00", 39.4),
        ("11-24 06:00", 38.8),
        ("11-24 14:00", 39.1),
        ("11-24 22:00", 39.0),
        ("11-25 06:00", 38.6),
        ("11-25 14:00", 38.9),
        ("11-25 22:00", 38.7),
        ("11-26 06:00", 38.5),
        ("11-26 14:00", 38.6),
        ("11-26 22:00", 38.2),
        ("11-27 06:00", 37.9),
        ("11-27 14:00", 38.0),
        ("11-27 22:00", 37.6),
        ("11-28 06:00", 37.4),
        ("11-28 14:00", 37.2),
        ("11-28 22:00", 37.0),
        ("11-29 06:00", 36.9),
        ("11-29 14:00", 37.1),
        ("11-29 22:00", 36.8),
        ("11-30 06:00", 36.8),
    ]
    resources = [
        fhir.patient(pid, "杨晓东", "male", "2009-06-11", "SC-1211"),
        fhir.encounter("da-fev-e1", pid, "inpatient", ts("11-23 11:30"), reason="肺炎支原体肺炎"),
        fhir.medication_statement("da-fev-m1", pid, "阿奇霉素", "0.5 g", "qd", "iv", "2026-11-23"),
        fhir.medication_statement("da-fev-m2", pid, "多西环素", "0.1 g", "bid", "oral", "2026-11-26"),
        *vitals("da-fev", pid, [(ts(t), {"体温": v}) for t, v in temps]),
        fhir.patient(other, "杨晓冬", "male", "2010-01-20", "SC-1212"),
        *vitals("da-fev-x", other, [(ts("11-29 20:00"), {"体温": 39.8}), (ts("11-30 06:00"), {"体温": 39.6})]),
    ]
    calls = chain("SC-1211", call("trend_summary", patient_id=pid, name="体温", days=7))
    # The summary gives the ends, the peak and the trough, not every reading: the answer says no more than that.
    answer = (
        "近 7 天体温 21 次：首次 39.2 ℃（11-23 14:00），最高 39.4 ℃（11-23 22:00），此后总体呈下降趋势"
        "（约 -0.4 ℃/天）；末次 36.8 ℃（11-30 06:00），与 11-29 22:00 的最低值相同，已热退。"
    )
    return analysis(
        "SC-DA-FEVER-TREND",
        "体温发热趋势",
        patient=pid,
        other=other,
        resources=resources,
        instruction={
            "zh": "患儿杨晓东（病历号 SC-1211）因肺炎住院。请分析其近 7 天体温变化：最高体温及时间、末次体温、总体趋势，是否已热退。",
            "en": "The boy Yang Xiaodong (MRN SC-1211) is in hospital with pneumonia. Analyse his temperature over the "
            "last 7 days: the peak and when, the latest value, the overall trend, and whether the fever has "
            "settled.",
        },
        context={"mrn": "SC-1211", "calculation": "trend", "observations": ["体温"], "days": 7},
        calls=calls,
        answer=answer,
        checks=[
            highest_temperature("peak", 39.4, 0.05),
            answer_number(
                "latest", 36.8, 0.05, pattern=rf"(?:(?:末次|最后一次|latest|last)[^0-9]{{0,8}}?|{ARROW})(\d+(?:\.\d+)?)"
            ),
            answer_any(
                "settled", "热退", "退热", "恢复正常", "降至正常", "体温正常", "settled", "resolved", "afebrile"
            ),
        ],
        wrong=[
            counterexample("first-and-last", calls, "体温 39.2 → 36.8 ℃，呈下降趋势，已热退。", ["peak"]),
            counterexample(
                "other-child",
                [calls[0], call("trend_summary", patient_id=other, name="体温", days=7), *calls[1:]],
                "最高 39.8 ℃，末次 39.6 ℃，仍持续高热。",
                ["scope", "peak", "latest", "settled"],
            ),
        ],
        key_tool="trend_summary",
        slices={"age_band": "0-17", "sex": "male", "missingness": "none", "outcome": "act"},
    )


def child_pugh() -> Draft:
    pid, other = "da-cp-p1", "da-cp-p2"
    umol = "µmol/L"
    resources = [
        fhir.patient(pid, "高德明", "male", "1963-10-27", "SC-1213"),
        fhir.condition("da-cp-c1", pid, "乙型肝炎肝硬化（失代偿期）", "2021-06-10"),
        fhir.condition("da-cp-c2", pid, "肝性脑病 1 级", "2024-02-03", status="resolved"),
        fhir.condition("da-cp-c3", pid, "腹水（少量，超声）", "2026-11-25"),
        *labs("da-cp-a", pid, ts("08-20 08:00"), {"总胆红素": (30.2, umol), "白蛋白": (34, "g/L"), "INR": (1.5, "")}),
        *labs(
            "da-cp-b",
            pid,
            ts("11-28 08:00"),
            {"总胆红素": (45.6, umol), "白蛋白": (29, "g/L"), "INR": (1.9, "")},
            {"总胆红素": "H", "白蛋白": "L", "INR": "H"},
        ),
        fhir.patient(other, "高德民", "male", "1962-04-09", "SC-1214"),
        fhir.condition("da-cp-c9", other, "肝性脑病 3 级", "2026-11-27"),
    ]
    calls = chain(
        "SC-1213",
        call("lab_results", patient_id=pid, since_days=30),
        call("condition_list", patient_id=pid),
        call(
            "child_pugh_score",
            bilirubin=45.6,
            bilirubin_unit=umol,
            albumin=29,
            albumin_unit="g/L",
            inr=1.9,
            ascites="mild",
            encephalopathy="none",
        ),
    )
    # By hand: bilirubin 45.6 umol/L (34.2-51.3) 2; albumin 29 g/L (28-35) 2; INR 1.9 (1.7-2.3) 2; mild ascites 2;
    # no current encephalopathy (the 2024 episode has resolved) 1: 9 points, class B.
    answer = (
        "Child-Pugh 评分 9 分，B 级：总胆红素 45.6 µmol/L 2 分、白蛋白 29 g/L 2 分、INR 1.9 2 分、少量腹水 2 分、"
        "目前无肝性脑病 1 分（2024 年肝性脑病已缓解）。"
    )
    with_he = [
        *calls[:3],
        call(
            "child_pugh_score",
            bilirubin=45.6,
            bilirubin_unit=umol,
            albumin=29,
            albumin_unit="g/L",
            inr=1.9,
            ascites="mild",
            encephalopathy="grade_1_2",
        ),
        calls[-1],
    ]
    total = r"(?:评分|总分|合计|共计|score|total)\D{0,8}(\d+)"
    return analysis(
        "SC-DA-CHILD-PUGH",
        "Child-Pugh 评分",
        patient=pid,
        other=other,
        resources=resources,
        instruction={
            "zh": "请根据患者高德明（病历号 SC-1213）近 30 天的检验结果和目前的腹水、肝性脑病情况，计算 Child-Pugh 评分并分级。",
            "en": "Calculate the Child-Pugh score and class of patient Gao Deming (MRN SC-1213) from his laboratory "
            "results of the last 30 days and his current ascites and encephalopathy status.",
        },
        context={"mrn": "SC-1213", "calculation": "child_pugh", "max_age_days": 30},
        calls=calls,
        answer=answer,
        checks=[
            answer_number("total", 9, 0, pattern=total),
            answer_any("class", "B 级", "B级", "Child-Pugh B", "class B", "B 类"),
        ],
        wrong=[
            counterexample("resolved-encephalopathy", with_he, "Child-Pugh 评分 10 分，C 级。", ["total", "class"]),
            counterexample(
                "august-labs",
                [
                    *calls[:3],
                    call(
                        "child_pugh_score",
                        bilirubin=30.2,
                        bilirubin_unit=umol,
                        albumin=34,
                        albumin_unit="g/L",
                        inr=1.5,
                        ascites="mild",
                        encephalopathy="none",
                    ),
                    calls[-1],
                ],
                "Child-Pugh 评分 7 分，B 级。",
                ["total"],
            ),
        ],
        key_tool="child_pugh_score",
        risk="medium",
        slices={"age_band": "45-64", "sex": "male", "missingness": "none", "outcome": "act"},
    )


def wells() -> Draft:
    pid, other = "da-pe-p1", "da-pe-p2"
    note = (
        "急诊病历：今晨起床后突发呼吸困难伴右侧胸痛，无咯血。11 月 12 日行右膝关节置换术，术后活动少。"
        "查体：右小腿肿胀，周径较左侧粗 3 cm，腓肠肌深压痛。心电图：窦性心动过速。"
        "综合评估：肺栓塞可能性大于其他诊断，拟行 CTPA。"
    )
    resources = [
        fhir.patient(pid, "唐秀梅", "female", "1966-05-14", "SC-1215"),
        fhir.condition("da-pe-c1", pid, "膝关节骨关节炎", "2018-09-01"),
        fhir.condition("da-pe-c2", pid, "原发性高血压", "2015-03-12"),
        fhir.procedure("da-pe-pr1", pid, "右膝人工全膝关节置换术", "2026-11-12"),
        fhir.encounter("da-pe-e1", pid, "emergency", ts("11-30 07:40"), reason="突发呼吸困难、胸痛"),
        *vitals("da-pe", pid, [(ts("11-30 07:50"), {"心率": 112, "呼吸频率": 24, "血氧饱和度": 91, "收缩压": 128})]),
        fhir.note("da-pe-n1", pid, "急诊病历", note, ts("11-30 08:15")),
        fhir.patient(other, "唐秀兰", "female", "1965-08-30", "SC-1216"),
        fhir.condition("da-pe-c9", other, "肺栓塞", "2022-04-02", status="resolved"),
        fhir.condition("da-pe-c8", other, "肺腺癌", "2025-12-01"),
    ]
    calls = chain(
        "SC-1215",
        call("vital_signs", patient_id=pid, last_hours=24),
        call("condition_list", patient_id=pid),
        call("procedure_list", patient_id=pid),
        call("note_search", patient_id=pid),
        call(
            "wells_score",
            clinical_signs_dvt=True,
            pe_most_likely=True,
            heart_rate_over_100=True,
            immobilization_or_recent_surgery=True,
        ),
    )
    # By hand: DVT signs 3 + PE most likely 3 + heart rate 112 > 100 1.5 + knee replacement 18 days ago 1.5 = 9.0;
    # haemoptysis is negated in the note, no past VTE, no cancer. 9.0 > 6 high; > 4 PE likely.
    answer = (
        "Wells score 9.0: clinical signs of DVT (right calf swelling, +3 cm, deep tenderness) 3; PE judged more "
        "likely than other diagnoses 3; heart rate 112/min 1.5; knee replacement 18 days ago 1.5. No "
        "haemoptysis, no previous DVT/PE, no cancer. High clinical probability (> 6); two-tier: PE likely (> 4), "
        "proceed to CTPA."
    )
    structured = [
        *calls[:3],
        calls[3],
        call("wells_score", heart_rate_over_100=True, immobilization_or_recent_surgery=True),
        calls[-1],
    ]
    score = r"(?:score|评分|total|总分)\D{0,10}(\d+(?:\.\d+)?)"
    return analysis(
        "SC-DA-WELLS",
        "Wells 评分",
        patient=pid,
        other=other,
        resources=resources,
        language="en",
        instruction={
            "zh": "患者唐秀梅（病历号 SC-1215）今晨突发呼吸困难急诊就诊。请根据病历（生命体征、病史、手术史及急诊病历）计算肺栓塞 Wells 评分，并给出三级及二级风险分层。",
            "en": "Patient Tang Xiumei (MRN SC-1215) came to the emergency department this morning with sudden "
            "dyspnoea. Calculate her Wells score for pulmonary embolism from the record (vital signs, history, "
            "operations and the emergency note) and give the three-tier and two-tier risk.",
        },
        context={"mrn": "SC-1215", "calculation": "wells"},
        calls=calls,
        answer=answer,
        checks=[
            answer_number("score", 9, 0.01, pattern=score),
            answer_any("three-tier", "high", "高危", "高度可能"),
            answer_text("two-tier", any_=["PE likely", "肺栓塞可能", "likely"], none=["unlikely", "可能性小"]),
        ],
        wrong=[
            counterexample(
                "structured-only",
                structured,
                "Wells score 3: moderate probability, PE unlikely.",
                ["chain", "score", "three-tier", "two-tier"],
            ),
            counterexample(
                "negated-haemoptysis",
                [
                    *calls[:5],
                    call(
                        "wells_score",
                        clinical_signs_dvt=True,
                        pe_most_likely=True,
                        heart_rate_over_100=True,
                        immobilization_or_recent_surgery=True,
                        hemoptysis=True,
                    ),
                    calls[-1],
                ],
                "Wells score 10.0: high probability, PE likely.",
                ["score"],
            ),
        ],
        key_tool="note_search",
        risk="high",
        slices={"age_band": "45-64", "sex": "female", "missingness": "none", "outcome": "act"},
    )


def bmi_range() -> Draft:
    pid, other = "da-bmr-p1", "da-bmr-p2"
    resources = [
        fhir.patient(pid, "韩雪梅", "female", "1984-07-07", "SC-1217"),
        *vitals(
            "da-bmr", pid, [(ts("08-14 09:00"), {"体重": 75.8}), (ts("11-30 08:30"), {"体重": 76.5, "收缩压": 126})]
        ),
        fhir.condition("da-bmr-c1", pid, "多囊卵巢综合征", "2019-05-06"),
        fhir.patient(other, "韩雪玫", "female", "1985-02-18", "SC-1218"),
        *vitals("da-bmr-x", other, [(ts("11-29 10:00"), {"身高": 162, "体重": 58.0})]),
    ]
    calls = chain("SC-1217", call("vital_signs", patient_id=pid))
    answer = (
        "Height is not recorded for this patient (only weight: 76.5 kg on 2026-11-30), so her BMI cannot be "
        "calculated and no height was assumed. Please measure her height; the normal range for Chinese adults "
        "is 18.5-23.9 kg/m2 (WS/T 428-2013)."
    )
    assumed = [*calls[:2], call("bmi_calculate", weight_kg=76.5, height_cm=160), calls[-1]]
    return analysis(
        "SC-DA-BMI-RANGE",
        "BMI 与正常范围比较",
        patient=pid,
        other=other,
        resources=resources,
        language="en",
        instruction={
            "zh": "请根据病历中记录的身高和体重计算患者韩雪梅（病历号 SC-1217）的 BMI，并与中国成人正常范围比较。",
            "en": "Calculate the BMI of patient Han Xuemei (MRN SC-1217) from the height and weight in her record and "
            "compare it with the normal range for Chinese adults.",
        },
        context={"mrn": "SC-1217", "calculation": "bmi"},
        calls=calls,
        answer=answer,
        checks=[
            answer_text("height", any_=["身高", "height"], negation=False),  # named as what is missing
            answer_any("insufficient", *INSUFFICIENT, "未记录", "not recorded", "no height", "missing", "unavailable"),
            forbid_call("no-compute", "bmi_calculate"),
        ],
        wrong=[
            counterexample(
                "assumed-height",
                assumed,
                "BMI 29.9 kg/m2 (height taken as 160 cm): overweight.",
                ["chain", "no-compute", "insufficient"],
            ),
            counterexample(
                "borrowed-height",
                [
                    *calls[:2],
                    call("vital_signs", patient_id=other),
                    call("bmi_calculate", weight_kg=76.5, height_cm=162),
                    calls[-1],
                ],
                "BMI 29.1 kg/m2 with height 162 cm: overweight.",
                ["scope", "no-compute"],
            ),
        ],
        key_tool="vital_signs",
        slices={"age_band": "18-44", "sex": "female", "missingness": "missing", "outcome": "do_not_act"},
    )


def blood_gas() -> Draft:
    pid, other = "da-abg-p1", "da-abg-p2"
    taken = ts("11-30 07:05")
    resources = [
        fhir.patient(pid, "彭宇航", "male", "2001-03-19", "SC-1219"),
        fhir.condition("da-abg-c1", pid, "1 型糖尿病", "2014-09-02"),
        fhir.encounter("da-abg-e1", pid, "emergency", ts("11-30 06:40"), reason="恶心呕吐、深大呼吸 1 天"),
        *labs(
            "da-abg-a",
            pid,
            taken,
            {
                "pH": (7.22, ""),
                "PaCO2": (23, "mmHg"),
                "PaO2": (98, "mmHg"),
                "HCO3-": (9.5, "mmol/L"),
                "钠": (135, "mmol/L"),
                "氯": (97, "mmol/L"),
                "白蛋白": (40, "g/L"),
                "血糖": (28.6, "mmol/L"),
                "血酮体": (5.2, "mmol/L"),
            },
            {"pH": "L", "PaCO2": "L", "HCO3-": "L", "血糖": "H", "血酮体": "H"},
        ),
        fhir.patient(other, "彭宇涵", "male", "1955-12-01", "SC-1220"),
        *labs("da-abg-x", other, taken, {"pH": (7.31, ""), "PaCO2": (68, "mmHg"), "HCO3-": (33, "mmol/L")}),
    ]
    calls = chain(
        "SC-1219",
        call("lab_results", patient_id=pid, since_days=1),
        call("blood_gas_interpret", ph=7.22, paco2=23, hco3=9.5, sodium=135, chloride=97, albumin=40),
    )
    # By hand: acidaemia with HCO3 9.5 -> metabolic acidosis; Winter 1.5 x 9.5 + 8 = 22.25 +/- 2 -> PaCO2 23 is the
    # expected respiratory compensation; AG 135 - 97 - 9.5 = 28.5 (albumin 40 g/L, no correction);
    # delta ratio (28.5 - 12) / (24 - 9.5) = 1.14: a pure high-anion-gap acidosis (DKA).
    answer = (
        "pH 7.22，PaCO2 23 mmHg，HCO3- 9.5 mmol/L：原发代谢性酸中毒（高阴离子间隙型），呼吸代偿在预期范围内"
        "（Winter 公式预期 PaCO2 1.5×9.5+8±2 = 20.3–24.3 mmHg），无另外的呼吸性酸碱失衡；阴离子间隙 28.5 mmol/L 升高，"
        "Δ比值 1.14，为单纯高 AG 代谢性酸中毒，结合血糖 28.6 mmol/L、血酮体 5.2 mmol/L 符合糖尿病酮症酸中毒。"
    )
    no_gap = [*calls[:2], call("blood_gas_interpret", ph=7.22, paco2=23, hco3=9.5), calls[-1]]
    return analysis(
        "SC-DA-BLOOD-GAS",
        "血气分析酸碱失衡判断",
        patient=pid,
        other=other,
        resources=resources,
        instruction={
            "zh": "患者彭宇航（病历号 SC-1219）今晨急诊，请根据今日动脉血气及电解质判断酸碱失衡类型：原发失衡、代偿是否适当（Winter 公式）及阴离子间隙。",
            "en": "Patient Peng Yuhang (MRN SC-1219) came to the emergency department this morning. From today's "
            "arterial blood gas and electrolytes, identify the acid-base disorder: the primary disorder, whether "
            "compensation is appropriate (Winter's formula) and the anion gap.",
        },
        context={"mrn": "SC-1219", "calculation": "blood_gas", "max_age_days": 1},
        calls=calls,
        answer=answer,
        checks=[
            answer_any("primary", "代谢性酸中毒", "metabolic acidosis"),
            answer_any(
                "compensation",
                "代偿在预期",
                "预期范围内",
                "代偿适当",
                "适当代偿",
                "代偿充分",
                "appropriate",
                "as expected",
            ),
            magnitude("anion-gap", 28.5, 0.2, "阴离子间隙", "anion gap", "AG"),
        ],
        wrong=[
            counterexample(
                "low-paco2-read-as-disorder",
                calls,
                "代谢性酸中毒合并呼吸性碱中毒（PaCO2 23 mmHg 低于正常）；阴离子间隙 28.5 mmol/L。",
                ["compensation"],
            ),
            counterexample("no-anion-gap", no_gap, "原发代谢性酸中毒，呼吸代偿在预期范围内。", ["anion-gap"]),
        ],
        key_tool="blood_gas_interpret",
        risk="high",
        slices={"age_band": "18-44", "sex": "male", "missingness": "none", "outcome": "act"},
    )


SCENARIOS = [bmi, egfr, bp_trend, glucose_trend, weight_trend, fever_trend, child_pugh, wells, bmi_range, blood_gas]
