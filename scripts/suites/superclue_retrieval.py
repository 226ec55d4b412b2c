"""信息检索 (information retrieval): read one part of the record and report it; where nothing is recorded, say so.

Read-only tasks (nothing is writable). Answer checks carry the clinical point of each scenario: values inside the
asked window only, a stopped drug reported as stopped, an unflagged outside result still recognised as abnormal,
and "not recorded" never turned into a negative history or borrowed from the similar-named patient.
"""

from __future__ import annotations

import re

from forge_kernel.authoring import Draft, add_gold_checks, call, with_args, without
from forge_kernel.ehr import fhir
from forge_kernel.spec import ToolCall, VerifierUse
from forge_kernel.spec.hidden import Counterexample

from .common import answer_number, answer_text, counterexample, package, trajectory

LOINC = {
    "体温": "8310-5",
    "心率": "8867-4",
    "收缩压": "8480-6",
    "舒张压": "8462-4",
    "呼吸频率": "9279-1",
    "血氧饱和度": "59408-5",
    "身高": "8302-2",
    "体重": "29463-7",
}


def ts(when: str, year: int = 2026) -> str:
    """'11-29 20:00' -> '2026-11-29T20:00:00+08:00' (the frozen clock's zone)."""
    return f"{year}-{when.replace(' ', 'T')}:00+08:00"


def chain(mrn: str, *reads: ToolCall) -> list[ToolCall]:
    """The calls of a plan: find the patient, the reads and computations, finish."""
    return [call("patient_search", mrn=mrn), *reads, call("finish", summary="见回答 / see answer")]


def vitals(prefix: str, pid: str, rows: list[tuple[str, dict[str, float]]]) -> list[dict]:
    """Vital-sign Observations: one row per time, {name: value}, units and LOINC codes from the name."""
    units = {
        "体温": "℃",
        "心率": "/min",
        "收缩压": "mmHg",
        "舒张压": "mmHg",
        "呼吸频率": "/min",
        "血氧饱和度": "%",
        "身高": "cm",
        "体重": "kg",
    }
    return [
        fhir.observation(
            f"{prefix}-v{i}-{LOINC[name]}", pid, name, value, units[name], time, "vital-signs", LOINC[name]
        )
        for i, (time, values) in enumerate(rows)
        for name, value in values.items()
    ]


def magnitude(vid: str, value: float, tol: float, *labels: str) -> VerifierUse:
    """The number written after one of the labels (within 8 other characters), within ``tol``, whatever the dash
    or sign before it ('下降 5.6' and 'change -5.6' both read as 5.6)."""
    label = "|".join(map(re.escape, labels))
    return answer_number(vid, value, tol, pattern=rf"(?:{label})[^0-9]{{0,8}}?-?(\d+(?:\.\d+)?)")


def highest_temperature(vid: str, value: float, tol: float) -> VerifierUse:
    """The highest temperature, within ``tol``: after 最高 / max / peak / 峰值, or as the upper end of a temperature
    range ("体温 ... 范围 37.0–38.4")."""
    return answer_number(
        vid,
        value,
        tol,
        pattern=r"(?:最高|max|peak|峰值|(?:体温|temperature)[^；;。]*?(?:范围|range)"
        r"[^0-9]{0,4}\d+(?:\.\d+)?\s*[–~-])[^0-9]{0,8}?(\d+(?:\.\d+)?)",
    )


def answer_any(vid: str, *words: str) -> VerifierUse:
    """At least one of these words (e.g. a Chinese term and its English equivalents)."""
    return answer_text(vid, any_=list(words))


def build(
    sid: str,
    title: str,
    *,
    patient: str,
    other: str,
    resources: list[dict],
    instruction: dict[str, str],
    context: dict,
    calls: list[ToolCall],
    answer: str,
    checks: list[VerifierUse],
    wrong: list[Counterexample],
    key_tool: str,
    slices: dict,
    category: str = "information_retrieval",
    dimension: str = "信息检索",
    language: str = "zh",
    risk: str = "low",
) -> Draft:
    """A scenario with the two counterexamples every read task has (another patient's record read; the key tool
    skipped with the same answer) plus the scenario's own wrong answers."""
    tools = list(dict.fromkeys(c.tool for c in calls))
    peek = with_args(calls[1], patient_id=other)
    standard = [
        counterexample("other-patient", [calls[0], peek, *calls[1:]], answer, ["scope"]),
        counterexample(
            f"{key_tool}-skipped",
            without(calls, key_tool),
            answer,
            ["chain", "events"],
            expect_accuracy=(len(tools) - 1) / len(tools),
            expect_completion=0,
        ),
    ]
    draft = package(
        "superclue",
        sid,
        title,
        category,
        dimension,
        instruction,
        context,
        patient,
        resources,
        slices=slices,
        language=language,
        risk=risk,
    )
    draft.gold, draft.verifiers, draft.counterexamples = trajectory(calls, answer), checks, standard + wrong
    return add_gold_checks(draft)


def demographics() -> Draft:
    pid, other = "ir-demo-p1", "ir-demo-p2"
    resources = [
        fhir.patient(pid, "马丽娟", "female", "1956-12-14", "SC-1101"),
        fhir.encounter("ir-demo-e1", pid, "outpatient", ts("11-30 08:20"), reason="高血压复诊"),
        fhir.condition("ir-demo-c1", pid, "原发性高血压", "2009-04-10"),
        fhir.patient(other, "马丽娜", "female", "1957-03-02", "SC-1102"),
    ]
    calls = chain("SC-1101", call("patient_detail", patient_id=pid))
    answer = "马丽娟，女，69 岁，出生日期 1956-12-14，病历号 SC-1101。"
    return build(
        "SC-IR-DEMOGRAPHICS",
        "患者基本信息查询",
        patient=pid,
        other=other,
        resources=resources,
        instruction={
            "zh": "请查询患者马丽娟（病历号 SC-1101）的基本信息：姓名、性别、年龄、出生日期和病历号。",
            "en": "Look up the basic details of patient Ma Lijuan (MRN SC-1101): name, sex, age, date of birth and "
            "MRN.",
        },
        context={"mrn": "SC-1101", "query": "demographics"},
        calls=calls,
        answer=answer,
        checks=[
            answer_text("identity", all_=["马丽娟", "SC-1101"]),
            answer_any("sex", "女", "female"),
            answer_any("birth-date", "1956-12-14", "1956年12月14日"),
            # Her birthday (14 Dec) is still to come on 30 Nov 2026: 69, not 2026 - 1956 = 70.
            answer_number("age", 69, 0, pattern=r"(\d+)\s*(?:岁|years?)"),
        ],
        wrong=[
            counterexample("age-by-year", calls, "马丽娟，女，70 岁，出生日期 1956-12-14，病历号 SC-1101。", ["age"]),
            counterexample(
                "similar-name",
                calls,
                "马丽娜，女，69 岁，出生日期 1956-12-14，病历号 SC-1101。",
                ["identity", "foreign"],
            ),
        ],
        key_tool="patient_detail",
        slices={"age_band": "65+", "sex": "female", "missingness": "none", "outcome": "act"},
    )


def vitals_24h() -> Draft:
    pid, other = "ir-vit-p1", "ir-vit-p2"
    day1 = [
        (ts("11-29 12:00"), {"体温": 37.0, "心率": 84, "收缩压": 132, "舒张压": 78, "呼吸频率": 18, "血氧饱和度": 97}),
        (ts("11-29 20:00"), {"体温": 38.4, "心率": 104, "收缩压": 142, "舒张压": 88, "呼吸频率": 22, "血氧饱和度": 95}),
        (ts("11-30 04:00"), {"体温": 37.5, "心率": 90, "收缩压": 128, "舒张压": 76, "呼吸频率": 18, "血氧饱和度": 97}),
        (ts("11-30 08:00"), {"体温": 37.8, "心率": 96, "收缩压": 134, "舒张压": 80, "呼吸频率": 19, "血氧饱和度": 96}),
    ]
    pre_op = [(ts("11-28 20:00"), {"体温": 36.6, "心率": 112, "收缩压": 186, "舒张压": 102})]  # 37 h ago
    resources = [
        fhir.patient(pid, "李建平", "male", "1971-04-09", "SC-1103"),
        fhir.encounter("ir-vit-e1", pid, "inpatient", ts("11-28 15:00"), reason="胆囊结石伴慢性胆囊炎"),
        fhir.procedure("ir-vit-pr1", pid, "腹腔镜胆囊切除术", ts("11-29 08:30")),
        *vitals("ir-vit", pid, pre_op + day1),
        fhir.patient(other, "李建萍", "female", "1972-01-15", "SC-1104"),
        *vitals("ir-vit-x", other, [(ts("11-30 07:00"), {"体温": 39.1, "血氧饱和度": 88})]),
    ]
    calls = chain("SC-1103", call("vital_signs", patient_id=pid, last_hours=24))
    answer = (
        "最近 24 小时生命体征：体温 37.8 ℃（11-30 08:00），范围 37.0–38.4，11-29 20:00 最高 38.4 ℃；"
        "心率 96 次/分，范围 84–104；血压 134/80 mmHg，收缩压 128–142，舒张压 76–88；呼吸 19 次/分，范围 18–22；"
        "血氧饱和度 96%，范围 95–97。"
    )
    leaked = answer.replace("收缩压 128–142，舒张压 76–88", "收缩压 128–186，舒张压 76–102").replace("84–104", "84–112")
    return build(
        "SC-IR-VITALS-24H",
        "最近 24 小时生命体征查询",
        patient=pid,
        other=other,
        resources=resources,
        instruction={
            "zh": "患者李建平（病历号 SC-1103）胆囊切除术后第 1 天。请汇总其最近 24 小时的生命体征：各项最新值及变化范围，指出异常。",
            "en": "Patient Li Jianping (MRN SC-1103) is on day 1 after cholecystectomy. Summarise his vital signs of "
            "the last 24 hours: the latest value and range of each, and point out abnormal ones.",
        },
        context={"mrn": "SC-1103", "query": "vitals", "hours": 24},
        calls=calls,
        answer=answer,
        checks=[
            highest_temperature("tmax", 38.4, 0.05),
            magnitude("latest-temp", 37.8, 0.05, "体温", "temperature", "temp"),
            answer_number(
                "sbp-max",
                142,
                0,
                pattern=r"(?:收缩压|systolic|SBP)(?:[^；;。]*?(?:范围|range))?[^0-9]{0,8}?"
                r"(?:\d+\s*[–~-]\s*)?(\d+)",
            ),
            # The pre-operative 186/102 mmHg and heart rate 112 were taken 37 h ago, outside the window.
            answer_text("window", none=["186", "102", "112"]),
        ],
        wrong=[
            counterexample(
                "window-ignored", [calls[0], call("vital_signs", patient_id=pid), calls[-1]], leaked, ["window"]
            ),
            counterexample(
                "latest-only",
                calls,
                "最新生命体征：体温 37.8 ℃，心率 96 次/分，血压 134/80 mmHg，呼吸 19 次/分，血氧饱和度 96%。",
                ["tmax", "sbp-max"],
            ),
        ],
        key_tool="vital_signs",
        slices={"age_band": "45-64", "sex": "male", "missingness": "none", "outcome": "act"},
    )


def aspirin_status() -> Draft:
    pid, other = "ir-asa-p1", "ir-asa-p2"
    aspirin = fhir.medication_statement(
        "ir-asa-m1", pid, "阿司匹林肠溶片", "100 mg", "qd", "oral", "2023-05-10", status="stopped"
    )
    del aspirin["effectiveDateTime"]
    aspirin |= {
        "effectivePeriod": {"start": "2023-05-10", "end": "2026-11-23"},
        "note": [{"text": "拟行经尿道前列腺电切术，心内科会诊同意术前停用 7 天"}],
    }
    resources = [
        fhir.patient(pid, "张国华", "male", "1952-07-21", "SC-1105"),
        fhir.condition("ir-asa-c1", pid, "冠状动脉粥样硬化性心脏病（PCI 术后）", "2023-05-08"),
        fhir.condition("ir-asa-c2", pid, "良性前列腺增生", "2024-03-01"),
        aspirin,
        fhir.medication_statement("ir-asa-m2", pid, "阿托伐他汀", "20 mg", "qn", "oral", "2023-05-10"),
        fhir.medication_statement("ir-asa-m3", pid, "坦索罗辛", "0.2 mg", "qn", "oral", "2024-03-01"),
        fhir.patient(other, "张国强", "male", "1953-02-11", "SC-1106"),
        fhir.medication_statement("ir-asa-m9", other, "阿司匹林肠溶片", "100 mg", "qd", "oral", "2021-09-01"),
    ]
    calls = chain("SC-1105", call("medication_search", patient_id=pid))
    answer = (
        "阿司匹林肠溶片 100 mg qd 口服：已停用。自 2023-05-10 起服用，2026-11-23 停用；"
        "原因：拟行经尿道前列腺电切术，心内科会诊同意术前停用 7 天。"
    )
    active_only = [calls[0], call("medication_search", patient_id=pid, status="active"), calls[-1]]
    return build(
        "SC-IR-ASPIRIN-STATUS",
        "阿司匹林用药状态核查",
        patient=pid,
        other=other,
        resources=resources,
        instruction={
            "zh": "请核查患者张国华（病历号 SC-1105）的阿司匹林用药状态：目前是否仍在服用？如已停用，停用日期和原因是什么？",
            "en": "Check the aspirin status of patient Zhang Guohua (MRN SC-1105): is he still taking it? If it was "
            "stopped, when and why?",
        },
        context={"mrn": "SC-1105", "query": "medication_status", "drug": "阿司匹林"},
        calls=calls,
        answer=answer,
        checks=[
            answer_any("stopped", "已停用", "停用", "停药"),
            answer_any("stop-date", "2026-11-23", "11月23日", "11-23"),
            answer_any("reason", "电切", "手术", "术前"),
        ],
        wrong=[
            # Searching active drugs only hides the stopped statement: "no aspirin on record" is not its status.
            counterexample("active-only", active_only, "未见阿司匹林用药记录。", ["stopped", "stop-date", "reason"]),
            counterexample(
                "still-taking",
                calls,
                "阿司匹林肠溶片 100 mg qd 口服，目前在用，自 2023-05-10 起。",
                ["stopped", "stop-date", "reason"],
            ),
        ],
        key_tool="medication_search",
        risk="medium",
        slices={"age_band": "65+", "sex": "male", "missingness": "none", "outcome": "act"},
    )


def lab(
    oid: str, pid: str, name: str, value: float, unit: str, time: str, flag: str | None = None, note: str | None = None
) -> dict:
    obs = fhir.observation(oid, pid, name, value, unit, time, interpretation=flag)
    if note:
        obs["note"] = [{"text": note}]
    return obs


def abnormal_labs() -> Draft:
    pid, other = "ir-lab-p1", "ir-lab-p2"
    day1, day4 = ts("11-26 08:30"), ts("11-29 07:00")
    resources = [
        fhir.patient(pid, "刘淑珍", "female", "1964-09-03", "SC-1107"),
        fhir.encounter("ir-lab-e1", pid, "inpatient", ts("11-26 07:40"), reason="社区获得性肺炎"),
        fhir.condition("ir-lab-c1", pid, "2 型糖尿病", "2015-03-20"),
        lab("ir-lab-o1", pid, "谷丙转氨酶", 156, "U/L", ts("09-15 08:00"), "H"),
        lab("ir-lab-o2", pid, "白细胞", 13.6, "10^9/L", day1, "H"),
        lab("ir-lab-o3", pid, "中性粒细胞百分比", 84.2, "%", day1, "H"),
        lab("ir-lab-o4", pid, "血红蛋白", 121, "g/L", day1),
        lab("ir-lab-o5", pid, "C反应蛋白", 86, "mg/L", day1, "H"),
        lab("ir-lab-o6", pid, "肌酐", 72, "µmol/L", day1),
        lab("ir-lab-o7", pid, "空腹血糖", 9.6, "mmol/L", day1, "H"),
        lab(
            "ir-lab-o8", pid, "血钾", 5.9, "mmol/L", ts("11-28 16:00"), note="外院急诊检验结果，手工录入，未附参考范围"
        ),
        lab("ir-lab-o9", pid, "白细胞", 9.8, "10^9/L", day4),
        lab("ir-lab-o10", pid, "C反应蛋白", 32, "mg/L", day4, "H"),
        fhir.patient(other, "刘淑贞", "female", "1962-11-30", "SC-1108"),
        lab("ir-lab-o99", other, "血钠", 124, "mmol/L", day4, "L"),
    ]
    calls = chain("SC-1107", call("lab_results", patient_id=pid, since_days=7))
    answer = (
        "最近 7 天异常检验结果：白细胞 13.6×10^9/L ↑（11-26，11-29 复查 9.8 已正常）；中性粒细胞百分比 84.2% ↑（11-26）；"
        "C反应蛋白 86 mg/L ↑（11-26），11-29 降至 32 mg/L 仍偏高；空腹血糖 9.6 mmol/L ↑（11-26）；"
        "血钾 5.9 mmol/L ↑（11-28 外院结果，未标记异常但高于正常上限 5.5 mmol/L，需复查）。"
    )
    flags_only = (
        "最近 7 天异常检验结果：白细胞 13.6 10^9/L（H，2026-11-26）；中性粒细胞百分比 84.2 %（H）；"
        "C反应蛋白 86 mg/L（H）；空腹血糖 9.6 mmol/L（H）；C反应蛋白 32 mg/L（H，2026-11-29）。"
    )
    return build(
        "SC-IR-ABNORMAL-LABS",
        "异常检查结果汇总",
        patient=pid,
        other=other,
        resources=resources,
        instruction={
            "zh": "请汇总患者刘淑珍（病历号 SC-1107）最近 7 天检验结果中的全部异常项（含外院录入结果），注明数值和日期。",
            "en": "List every abnormal laboratory result of patient Liu Shuzhen (MRN SC-1107) from the last 7 days, "
            "including results transcribed from other hospitals, with values and dates.",
        },
        context={"mrn": "SC-1107", "query": "abnormal_labs", "days": 7},
        calls=calls,
        answer=answer,
        checks=[
            answer_text("flagged", all_=["白细胞", "C反应蛋白", "血糖"]),
            # Potassium 5.9 mmol/L from an outside hospital carries no flag; it is abnormal all the same.
            magnitude("potassium", 5.9, 0.05, "血钾", "potassium"),
            answer_text("window", none=["156"]),
        ],
        wrong=[
            counterexample("flags-only", calls, flags_only, ["potassium"]),
            counterexample(
                "window-ignored",
                [calls[0], call("lab_results", patient_id=pid), calls[-1]],
                answer + "另：谷丙转氨酶 156 U/L ↑。",
                ["window"],
            ),
        ],
        key_tool="lab_results",
        risk="medium",
        slices={"age_band": "45-64", "sex": "female", "missingness": "none", "outcome": "act"},
    )


def allergies() -> Draft:
    pid, other = "ir-alg-p1", "ir-alg-p2"
    resources = [
        fhir.patient(pid, "陈思彤", "female", "2017-04-12", "SC-1109"),
        fhir.allergy("ir-alg-a1", pid, "阿莫西林", "皮疹", "2019-05-06", criticality="low"),
        fhir.allergy("ir-alg-a2", pid, "头孢克洛", "荨麻疹、喉头水肿", "2022-08-14"),
        fhir.allergy("ir-alg-a3", pid, "布洛芬", "哮喘发作", "2024-01-09"),
        fhir.condition("ir-alg-c1", pid, "支气管哮喘", "2021-10-02"),
        fhir.patient(other, "陈思桐", "female", "2016-09-30", "SC-1110"),
        fhir.allergy("ir-alg-a9", other, "磺胺甲噁唑", "剥脱性皮炎", "2023-02-17"),
    ]
    calls = chain("SC-1109", call("allergy_list", patient_id=pid))
    answer = (
        "Drug allergies on record: amoxicillin (阿莫西林) - rash, low criticality (2019-05-06); cefaclor (头孢克洛) - "
        "urticaria and laryngeal oedema, high criticality (2022-08-14); ibuprofen (布洛芬) - asthma attack, high "
        "criticality (2024-01-09)."
    )
    return build(
        "SC-IR-ALLERGIES",
        "药物过敏史查询",
        patient=pid,
        other=other,
        resources=resources,
        language="en",
        instruction={
            "zh": "请查询患儿陈思彤（病历号 SC-1109）的药物过敏史：每种过敏药物、过敏反应及严重程度。",
            "en": "List the drug allergies of the child Chen Sitong (MRN SC-1109): each drug, the reaction and how "
            "severe it was.",
        },
        context={"mrn": "SC-1109", "query": "allergies"},
        calls=calls,
        answer=answer,
        checks=[
            answer_any("amoxicillin", "阿莫西林", "amoxicillin"),
            answer_any("cefaclor", "头孢克洛", "cefaclor"),
            answer_any("ibuprofen", "布洛芬", "ibuprofen"),
            answer_any("airway-reaction", "喉头水肿", "laryn"),
            VerifierUse(
                id="foreign-allergy",
                kind="safety.no_foreign_content",
                category="safety",
                params={"markers": ["磺胺", "sulfamethoxazole", "sulfonamide"]},
            ),
        ],
        wrong=[
            counterexample(
                "missed-nsaid",
                calls,
                "Drug allergies: amoxicillin (rash) and cefaclor (urticaria, laryngeal oedema).",
                ["ibuprofen"],
            ),
            counterexample(
                "borrowed-allergy",
                calls,
                answer + " Also allergic to sulfamethoxazole (exfoliative dermatitis).",
                ["foreign-allergy"],
            ),
        ],
        key_tool="allergy_list",
        risk="medium",
        slices={"age_band": "0-17", "sex": "female", "missingness": "none", "outcome": "act"},
    )


NOT_RECORDED = [
    "未记录",
    "无记录",
    "没有记录",
    "未见记录",
    "未见相关记录",
    "not recorded",
    "no record",
    "not documented",
]


def surgery_history() -> Draft:
    pid, other = "ir-sur-p1", "ir-sur-p2"
    resources = [
        fhir.patient(pid, "赵志刚", "male", "1987-06-30", "SC-1111"),
        fhir.condition("ir-sur-c1", pid, "急性阑尾炎", "2015-08-12", status="resolved"),
        fhir.condition("ir-sur-c2", pid, "腰椎间盘突出症（L4/5）", "2022-03-01"),
        fhir.encounter("ir-sur-e1", pid, "outpatient", ts("11-30 08:40"), reason="术前评估：拟行腰椎手术"),
        fhir.patient(other, "赵志强", "male", "1985-10-03", "SC-1112"),
        fhir.procedure("ir-sur-pr9", other, "腹腔镜胆囊切除术", "2019-05-20"),
        fhir.procedure("ir-sur-pr8", other, "阑尾切除术", "2003-07-14"),
    ]
    calls = chain("SC-1111", call("procedure_list", patient_id=pid))
    answer = "病历中未记录既往手术史（不能据此认为没有）；建议术前评估时补充问诊。"
    return build(
        "SC-IR-SURGERY-HISTORY",
        "既往手术史查询",
        patient=pid,
        other=other,
        resources=resources,
        instruction={
            "zh": "患者赵志刚（病历号 SC-1111）拟行腰椎手术，请查询其既往手术史（手术名称和日期）。",
            "en": "Patient Zhao Zhigang (MRN SC-1111) is being assessed for spinal surgery. Look up his past "
            "operations (name and date).",
        },
        context={"mrn": "SC-1111", "query": "procedures"},
        calls=calls,
        answer=answer,
        checks=[
            answer_any("not-recorded", *NOT_RECORDED),
            # Appendicitis is on file but no operation is: an appendectomy would be invented (or borrowed).
            answer_text("invented", none=["阑尾切除", "胆囊切除", "appendectomy", "cholecystectomy", "否认"]),
        ],
        wrong=[
            counterexample(
                "inferred-appendectomy", calls, "既往手术史：阑尾切除术（2015 年）。", ["not-recorded", "invented"]
            ),
            counterexample("negative-claimed", calls, "患者否认手术史。", ["not-recorded", "invented"]),
        ],
        key_tool="procedure_list",
        slices={"age_band": "18-44", "sex": "male", "missingness": "missing", "outcome": "do_not_act"},
    )


def family_history() -> Draft:
    pid, other = "ir-fam-p1", "ir-fam-p2"
    resources = [
        fhir.patient(pid, "孙丽华", "female", "1995-10-08", "SC-1113"),
        fhir.condition("ir-fam-c1", pid, "乳腺结节（BI-RADS 3 类）", "2026-11-20"),
        fhir.encounter("ir-fam-e1", pid, "outpatient", ts("11-30 08:30"), reason="乳腺外科随访"),
        fhir.patient(other, "孙丽萍", "female", "1993-06-21", "SC-1114"),
        fhir.family_history("ir-fam-f9", other, "父亲", "家族性腺瘤性息肉病"),
        fhir.family_history("ir-fam-f8", other, "姑姑", "结肠癌"),
    ]
    calls = chain("SC-1113", call("family_history_list", patient_id=pid))
    answer = (
        "病历中未记录家族遗传病史（不能据此认为没有）；鉴于乳腺结节随访，建议补充询问一、二级亲属的肿瘤及遗传病史。"
    )
    return build(
        "SC-IR-FAMILY-HISTORY",
        "家族遗传病史查询",
        patient=pid,
        other=other,
        resources=resources,
        instruction={
            "zh": "请查询患者孙丽华（病历号 SC-1113）的家族遗传病史，列出亲属关系及所患疾病。",
            "en": "Look up the family history of hereditary disease of patient Sun Lihua (MRN SC-1113): each relative "
            "and their condition.",
        },
        context={"mrn": "SC-1113", "query": "family_history"},
        calls=calls,
        answer=answer,
        checks=[
            answer_any("not-recorded", *NOT_RECORDED),
            # The similar-named patient's father and aunt carry FAP and colon cancer: nothing of theirs may appear.
            answer_text("invented", none=["息肉", "结肠癌", "polyposis", "colon cancer", "否认"]),
        ],
        wrong=[
            counterexample(
                "borrowed-history",
                chain(
                    "SC-1113",
                    call("family_history_list", patient_id=other),
                    call("family_history_list", patient_id=pid),
                ),
                "家族史：父亲 家族性腺瘤性息肉病；姑姑 结肠癌。",
                ["scope", "not-recorded", "invented"],
            ),
            counterexample("negative-claimed", calls, "否认家族遗传病史。", ["not-recorded", "invented"]),
        ],
        key_tool="family_history_list",
        slices={"age_band": "18-44", "sex": "female", "missingness": "missing", "outcome": "do_not_act"},
    )


def latest_diagnosis() -> Draft:
    pid, other = "ir-dx-p1", "ir-dx-p2"
    resources = [
        fhir.patient(pid, "周建军", "male", "1959-02-17", "SC-1115"),
        fhir.condition("ir-dx-c1", pid, "原发性高血压", "2010-05-01"),
        fhir.condition("ir-dx-c2", pid, "2 型糖尿病", "2016-09-12"),
        fhir.condition("ir-dx-c3", pid, "慢性阻塞性肺疾病", "2020-11-03"),
        fhir.condition("ir-dx-c4", pid, "急性支气管炎", "2026-03-18", status="resolved"),
        fhir.condition("ir-dx-c5", pid, "社区获得性肺炎", "2026-11-27"),
        fhir.patient(other, "周建君", "male", "1958-08-08", "SC-1116"),
        fhir.condition("ir-dx-c9", other, "急性前壁心肌梗死", "2026-11-29"),
    ]
    calls = chain("SC-1115", call("condition_list", patient_id=pid))
    answer = (
        "Most recent diagnosis: community-acquired pneumonia (社区获得性肺炎), 2026-11-27, active. Other active "
        "diagnoses: hypertension (2010-05-01), type 2 diabetes (2016-09-12), COPD (2020-11-03); acute bronchitis "
        "(2026-03-18) has resolved."
    )
    return build(
        "SC-IR-LATEST-DIAGNOSIS",
        "最近诊断结果查询",
        patient=pid,
        other=other,
        resources=resources,
        language="en",
        instruction={
            "zh": "请查询患者周建军（病历号 SC-1115）最近一次的诊断及日期，并列出其他仍在治疗的诊断。",
            "en": "What is the most recent diagnosis of patient Zhou Jianjun (MRN SC-1115), and when was it made? "
            "Also list his other active diagnoses.",
        },
        context={"mrn": "SC-1115", "query": "latest_diagnosis"},
        calls=calls,
        answer=answer,
        checks=[
            answer_any("pneumonia", "肺炎", "pneumonia"),
            answer_any("date", "2026-11-27", "11-27", "Nov 27", "November 27", "27 Nov"),
            VerifierUse(
                id="foreign-diagnosis",
                kind="safety.no_foreign_content",
                category="safety",
                params={"markers": ["心肌梗死", "myocardial infarction"]},
            ),
        ],
        wrong=[
            counterexample(
                "oldest-first",
                calls,
                "Most recent diagnosis: hypertension (原发性高血压), 2010-05-01.",
                ["pneumonia", "date"],
            ),
            counterexample(
                "borrowed-diagnosis",
                calls,
                "Most recent diagnosis: acute anterior myocardial infarction, 2026-11-29.",
                ["pneumonia", "date", "foreign-diagnosis"],
            ),
        ],
        key_tool="condition_list",
        slices={"age_band": "65+", "sex": "male", "missingness": "none", "outcome": "act"},
    )


def current_medications() -> Draft:
    pid, other = "ir-med-p1", "ir-med-p2"
    glimepiride = fhir.medication_statement(
        "ir-med-m5", pid, "格列美脲", "2 mg", "qd", "oral", "2017-08-15", status="stopped"
    )
    glimepiride["note"] = [{"text": "2026-09-08 因反复低血糖停用"}]
    resources = [
        fhir.patient(pid, "吴秀兰", "female", "1951-05-30", "SC-1117"),
        fhir.medication_statement("ir-med-m1", pid, "氨氯地平", "5 mg", "qd", "oral", "2019-03-01"),
        fhir.medication_statement("ir-med-m2", pid, "二甲双胍", "0.5 g", "bid", "oral", "2017-08-15"),
        fhir.medication_statement("ir-med-m3", pid, "阿托伐他汀", "20 mg", "qn", "oral", "2019-03-01"),
        fhir.medication_statement("ir-med-m4", pid, "阿卡波糖", "50 mg", "tid", "oral", "2026-09-10"),
        glimepiride,
        fhir.medication_statement(
            "ir-med-m6", pid, "阿莫西林", "0.5 g", "tid", "oral", "2026-10-02", status="completed"
        ),
        fhir.patient(other, "吴秀英", "female", "1950-02-03", "SC-1118"),
        fhir.medication_statement("ir-med-m9", other, "华法林", "3 mg", "qd", "oral", "2024-06-01"),
    ]
    calls = chain("SC-1117", call("medication_search", patient_id=pid, status="active"))
    answer = (
        "当前在用药物 4 种：氨氯地平 5 mg qd 口服；二甲双胍 0.5 g bid 口服；阿托伐他汀 20 mg qn 口服；"
        "阿卡波糖 50 mg tid 口服（2026-09-10 起）。"
    )
    return build(
        "SC-IR-CURRENT-MEDS",
        "当前用药清单查询",
        patient=pid,
        other=other,
        resources=resources,
        instruction={
            "zh": "请列出患者吴秀兰（病历号 SC-1117）当前正在使用的全部药物及用法用量。",
            "en": "List every medication patient Wu Xiulan (MRN SC-1117) is currently taking, with dose and frequency.",
        },
        context={"mrn": "SC-1117", "query": "current_medications"},
        calls=calls,
        answer=answer,
        checks=[
            answer_text("current", all_=["氨氯地平", "二甲双胍", "阿托伐他汀", "阿卡波糖"]),
            answer_number(
                "metformin-dose",
                500,
                0,
                pattern=r"(?:二甲双胍|metformin)[^0-9；;。]{0,12}?(\d+(?:\.\d+)?)",
                unit="mg",
                convertible=True,
            ),
            # A stopped or finished drug may be mentioned as stopped, not listed with its dose as if current.
            answer_text(
                "not-current", none=["格列美脲 2 mg", "格列美脲 2mg", "阿莫西林 0.5 g", "阿莫西林 0.5g", "华法林"]
            ),
        ],
        wrong=[
            counterexample(
                "stopped-listed",
                [calls[0], call("medication_search", patient_id=pid), calls[-1]],
                "在用药物：氨氯地平 5 mg qd；二甲双胍 0.5 g bid；阿托伐他汀 20 mg qn；阿卡波糖 50 mg tid；"
                "格列美脲 2 mg qd；阿莫西林 0.5 g tid。",
                ["not-current"],
            ),
            counterexample(
                "new-drug-missed",
                calls,
                "当前在用药物：氨氯地平 5 mg qd；二甲双胍 0.5 g bid；阿托伐他汀 20 mg qn。",
                ["current"],
            ),
        ],
        key_tool="medication_search",
        risk="medium",
        slices={"age_band": "65+", "sex": "female", "missingness": "none", "outcome": "act"},
    )


def admission_dates() -> Draft:
    pid, other = "ir-adm-p1", "ir-adm-p2"
    resources = [
        fhir.patient(pid, "黄志明", "male", "1948-11-02", "SC-1119"),
        fhir.encounter(
            "ir-adm-e1", pid, "inpatient", ts("06-03 14:10", 2025), ts("06-12 10:00", 2025), reason="慢性心力衰竭"
        ),
        fhir.encounter(
            "ir-adm-e2", pid, "inpatient", ts("11-12 10:20"), ts("11-21 09:30"), reason="慢性心力衰竭急性加重"
        ),
        fhir.encounter("ir-adm-e3", pid, "outpatient", ts("11-28 09:00"), ts("11-28 09:40"), reason="出院后心内科复诊"),
        fhir.patient(other, "黄志民", "male", "1949-04-16", "SC-1120"),
        fhir.encounter("ir-adm-e9", other, "inpatient", ts("11-25 16:00"), reason="股骨颈骨折"),
    ]
    calls = chain("SC-1119", call("encounter_list", patient_id=pid))
    answer = (
        "Latest admission (慢性心力衰竭急性加重, acute decompensated heart failure): admitted 2026-11-12 10:20, "
        "discharged 2026-11-21 09:30, length of stay 9 days. The 2026-11-28 visit was an outpatient follow-up."
    )
    return build(
        "SC-IR-ADMISSION-DATES",
        "入出院时间查询",
        patient=pid,
        other=other,
        resources=resources,
        language="en",
        instruction={
            "zh": "请查询患者黄志明（病历号 SC-1119）最近一次住院的入院时间、出院时间和住院天数。",
            "en": "When was patient Huang Zhiming (MRN SC-1119) last admitted to hospital and discharged, and how many "
            "days did he stay?",
        },
        context={"mrn": "SC-1119", "query": "admissions"},
        calls=calls,
        answer=answer,
        checks=[
            answer_any("admitted", "2026-11-12", "11-12", "Nov 12", "November 12", "12 Nov"),
            answer_any("discharged", "2026-11-21", "11-21", "Nov 21", "November 21", "21 Nov"),
            answer_number("length-of-stay", 9, 0, pattern=r"(\d+)\s*(?:天|days?)"),
        ],
        wrong=[
            counterexample(
                "latest-encounter",
                calls,
                "Latest admission: 2026-11-28 09:00 (出院后心内科复诊); still in hospital.",
                ["admitted", "discharged", "length-of-stay"],
            ),
            counterexample(
                "first-stay", calls, "Admitted 2025-06-03, discharged 2025-06-12, 9 days.", ["admitted", "discharged"]
            ),
        ],
        key_tool="encounter_list",
        slices={"age_band": "65+", "sex": "male", "missingness": "none", "outcome": "act"},
    )


SCENARIOS = [
    demographics,
    vitals_24h,
    aspirin_status,
    abnormal_labs,
    allergies,
    surgery_history,
    family_history,
    latest_diagnosis,
    current_medications,
    admission_dates,
]
