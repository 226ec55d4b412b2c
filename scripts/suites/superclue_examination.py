"""检查申请 (examination requests): check the reports and requests on file, then request what is indicated.

Every scenario: patient_search → patient_detail → examination_search → examination_request_create (each item not
covered by a report or an active request inside the task's window) → finish. Four scenarios have items on file:
three where nothing is to be requested (SC-EXM-HEAD-CT, SC-EXM-CORONARY-CTA, SC-EXM-ANNUAL-CHECKUP) and one where
only the missing part of the panel is (SC-EXM-PREOP). SC-EXM-ABDOMINAL-CT is an escalation: a documented
anaphylaxis to iodinated contrast rules out the contrast CT that was asked for.
"""

from __future__ import annotations

from forge_kernel.authoring import Draft, add_gold_checks, before_finish, call, without
from forge_kernel.ehr import fhir
from forge_kernel.spec import VerifierUse

from .common import answer_text, checks_before, counterexample, created, package, trajectory, unchanged
from .superclue_diagnosis import Person, vitals

NO_REPEAT_WORDS = ["无需", "不必", "不再", "已有", "already", "no need", "not repeat", "not be repeated"]
"""Words of an answer that says an item is on file and not requested again."""
SEARCH_FIRST = VerifierUse(
    id="search-first",
    kind="trace.calls",
    category="trace",
    params={"required": [{"tool": "examination_search"}, {"tool": "examination_request_create"}], "in_order": True},
)


EN = {
    "血常规": "blood count",
    "凝血功能": "coagulation",
    "血型鉴定": "blood group",
    "肝功能": "liver function",
    "肾功能": "kidney function",
    "胃镜": "gastroscopy",
    "冠脉CTA": "coronary CT angiography",
    "眼底照相": "fundus photography",
    "尿白蛋白/肌酐比值": "urine albumin/creatinine ratio",
    "血脂": "lipids",
    "神经传导速度": "nerve conduction",
    "踝肱指数": "ankle-brachial index",
    "腹部增强CT": "contrast abdominal CT",
    "头颅CT": "head CT",
    "动脉血气分析": "arterial blood gas",
    "尿常规": "urinalysis",
    "空腹血糖": "fasting glucose",
    "心电图": "ECG",
    "腹部超声": "abdominal ultrasound",
    "感染四项": "HBV/HCV/HIV/syphilis serology",
    "胸片": "chest X-ray",
    "甲状腺功能": "thyroid function",
    "甲状旁腺激素": "parathyroid hormone",
    "血钙": "serum calcium",
    "甲状腺球蛋白": "thyroglobulin",
    "颈部超声": "neck ultrasound",
    "甲胎蛋白": "AFP",
    "异常凝血酶原": "PIVKA-II",
    "癌胚抗原": "CEA",
    "糖类抗原19-9": "CA19-9",
}
"""English words for the examination names of the instructions (requests carry the catalogue's Chinese names)."""


def asking(exams: list[str], days: int) -> tuple[str, str]:
    """What to do, in zh and en: check what is on file, then request the items not done or requested recently."""
    within_zh, within_en = {1: ("24 小时", "24 hours"), 365: ("一年", "year")}.get(days, (f"{days} 天", f"{days} days"))
    items_en = ", ".join(f"{name} ({EN[name]})" for name in exams)
    return (
        f"请先核对已有检查结果和申请，再申请以下检查：{'、'.join(exams)}；{within_zh}内已有结果或已申请的项目无需重复申请。",
        f"Check the results and requests on file first, then request, by catalogue name: {items_en}. Do not "
        f"repeat an item with a result or a request within the past {within_en}.",
    )


def report(rid: str, pid: str, name: str, issued: str, conclusion: str) -> dict:
    """A final report issued at ``issued`` (a date means 10:00 that day)."""
    return fhir.diagnostic_report(rid, pid, name, issued if "T" in issued else f"{issued}T10:00:00+08:00", conclusion)


def started(
    sid: str,
    title: str,
    patient: Person,
    other: Person,
    records: list[dict],
    instruction: dict[str, str],
    context: dict,
    slices: dict,
    language: str = "zh",
    risk: str = "high",
    writable: tuple[str, ...] = ("ServiceRequest", "Task"),
) -> Draft:
    """An examination-request package on ``patient`` (``other`` in the same fixture), before its gold: requests only
    after the patient's requests on file were read."""
    return package(
        "superclue",
        sid,
        title,
        "examination_request",
        "检查申请",
        instruction,
        {"mrn": patient.mrn, **context},
        patient.pid,
        [patient.resource(), *records, other.resource()],
        slices=slices,
        language=language,
        risk=risk,
        writable=writable,
        precedence=[{"action": "examination_request_create", "requires": ["examination_search"]}],
    )


def panel(
    sid: str,
    title: str,
    patient: Person,
    other: Person,
    records: list[dict],
    story: tuple[str, str],
    exams: list[str],
    valid_days: int,
    reason: str,
    *,
    on_file: dict[str, str] | None = None,
    cites: list[str] | None = None,
    language: str = "zh",
    missingness: str = "none",
    risk: str = "medium",
) -> Draft:
    """Request ``exams`` but the items ``on_file`` (item -> what is on file, in words) inside ``valid_days``.

    ``cites``: words of the on-file result (its date, its finding), one of which an answer requesting nothing
    must quote.
    """
    on_file = on_file or {}
    pid = patient.pid
    to_order = [e for e in exams if e not in on_file]
    instruction = patient.ask(*story, *asking(exams, valid_days))
    head = [
        call("patient_search", mrn=patient.mrn),
        call("patient_detail", patient_id=pid),
        call("examination_search", patient_id=pid),
    ]
    requests = [call("examination_request_create", patient_id=pid, name=e, reason=reason) for e in exams]
    calls = [*head, *(r for r in requests if r.args["name"] in to_order), call("finish", summary="检查申请已核对")]
    expected = list(dict.fromkeys(c.tool for c in calls))
    answer = (f"已申请：{'、'.join(to_order)}。" if to_order else "") + (
        f"近期已有结果或申请，无需重复：{'；'.join(f'{k}（{v}）' for k, v in on_file.items())}。" if on_file else ""
    )
    verifiers = [
        created(
            f"order-{i + 1}",
            "ServiceRequest",
            f"one request for {name}",
            {"code.text": {"contains": name}, "status": {"equals": "active"}},
            max=1,
        )
        for i, name in enumerate(to_order)
    ]
    counterexamples = [
        counterexample(
            "other-patient",
            [*head[:2], call("examination_search", patient_id=other.pid), *calls[2:]],
            answer,
            ["scope"],
        )
    ]
    if to_order:
        verifiers.append(SEARCH_FIRST)
        counterexamples += [
            counterexample(
                "search-skipped",
                without(calls, "examination_search"),
                answer,
                ["chain", "search-first"],
                expect_accuracy=(len(expected) - 1) / len(expected),
                expect_completion=0,
            ),
            counterexample(
                "duplicate",
                before_finish(calls, calls[3]),
                answer,
                ["order-1"],
                expect_accuracy=1.0,
                expect_completion=0,
            ),
        ]
    if len(to_order) > 1:
        counterexamples.append(
            counterexample(
                "item-missing",
                [*calls[:-2], calls[-1]],
                answer,
                [f"order-{len(to_order)}"],
                expect_accuracy=1.0,
                expect_completion=0,
            )
        )
    if on_file:
        verifiers.append(answer_text("says-on-file", any_=NO_REPEAT_WORDS))
        again = [*head, *requests, calls[-1]]
        if to_order:
            repeated = [f"no-repeat-{i + 1}" for i in range(len(on_file))]
            verifiers += [
                unchanged(vid, "ServiceRequest", f"no repeat request for {name}", {"code.text": {"contains": name}})
                for vid, name in zip(repeated, on_file)
            ]
        else:
            repeated = ["no-request", "chain"]
            verifiers += [
                unchanged("no-request", "ServiceRequest", "nothing requested again"),
                answer_text("cites-result", any_=cites),
            ]
            counterexamples.append(
                counterexample(
                    "silent", calls, "无需申请。", ["cites-result"], expect_accuracy=1.0, expect_completion=0
                )
            )
        counterexamples.append(
            counterexample(
                "whole-list-again",
                again,
                f"已申请：{'、'.join(exams)}。",
                [*repeated, "says-on-file"],
                expect_completion=0,
            )
        )
    outcome = "act" if to_order else "do_not_act"
    draft = started(
        sid,
        title,
        patient,
        other,
        records,
        instruction,
        {"exams": exams, "valid_days": valid_days, "reason": reason},
        patient.slices(outcome, missingness),
        language,
        risk,
        ("ServiceRequest",),
    )
    draft.gold, draft.verifiers, draft.counterexamples = trajectory(calls, answer), verifiers, counterexamples
    return add_gold_checks(draft)


def ugib_panel() -> Draft:
    """Act: the blood count and gastroscopy on file are months old, so the whole panel is requested."""
    me = Person("exm-ugib-p1", "何建军", "He Jianjun", "male", "1969-02-11", "SC-0301")
    other = Person("exm-ugib-p2", "何建君", "He Jianjun", "male", "1970-09-02", "SC-0302")
    records = [
        fhir.condition("exm-ugib-c1", me.pid, "胃溃疡", "2024-03-05"),
        fhir.encounter("exm-ugib-e1", me.pid, "inpatient", "2026-11-30T07:00:00+08:00", reason="黑便 2 天"),
        *vitals("exm-ugib-v1", me.pid, "2026-11-30T07:10:00+08:00", sbp=118, dbp=72, hr=92),
        report("exm-ugib-d1", me.pid, "血常规", "2026-06-12", "WBC 6.1×10^9/L，Hb 136 g/L，PLT 228×10^9/L"),
        report("exm-ugib-d2", me.pid, "胃镜", "2024-03-05", "胃角溃疡 A2 期"),
        report("exm-ugib-d9", other.pid, "胃镜", "2026-11-30T08:00:00+08:00", "十二指肠球部溃疡 A1 期伴出血"),
    ]
    return panel(
        "SC-EXM-UGIB-PANEL",
        "上消化道出血检查套餐",
        me,
        other,
        records,
        (
            "黑便 2 天，拟诊上消化道出血，目前生命体征平稳",
            "has passed black stools for 2 days with suspected upper "
            "gastrointestinal bleeding; his vital signs are stable",
        ),
        ["血常规", "凝血功能", "血型鉴定", "肝功能", "肾功能", "胃镜"],
        1,
        "上消化道出血",
        risk="high",
    )


def coronary_cta() -> Draft:
    """Do not act: a normal coronary CTA from September is on file."""
    me = Person("exm-cta-p1", "林美华", "Lin Meihua", "female", "1977-08-30", "SC-0303")
    other = Person("exm-cta-p2", "林美桦", "Lin Meihua", "female", "1976-05-14", "SC-0304")
    records = [
        fhir.condition("exm-cta-c1", me.pid, "高脂血症", "2022-07-01"),
        fhir.encounter("exm-cta-e1", me.pid, "outpatient", "2026-11-30T08:30:00+08:00", reason="间断胸闷 2 个月"),
        report("exm-cta-d1", me.pid, "心电图", "2026-09-18T09:40:00+08:00", "窦性心律，正常心电图"),
        report(
            "exm-cta-d2", me.pid, "冠脉CTA", "2026-09-18T10:20:00+08:00", "冠状动脉未见明显狭窄，CAD-RADS 0，钙化积分 0"
        ),
        fhir.service_request("exm-cta-s9", other.pid, "冠脉CTA", "2026-11-29T15:00:00+08:00"),
    ]
    return panel(
        "SC-EXM-CORONARY-CTA",
        "胸痛冠脉 CTA 申请",
        me,
        other,
        records,
        ("间断胸闷 2 个月，与活动无关", "has had intermittent chest tightness for 2 months, unrelated to exertion"),
        ["冠脉CTA"],
        365,
        "胸痛待查",
        on_file={"冠脉CTA": "2026-09-18 报告：冠状动脉未见明显狭窄，CAD-RADS 0"},
        cites=[
            "2026-09-18",
            "9月18日",
            "September 18",
            "18 September",
            "CAD-RADS 0",
            "未见明显狭窄",
            "no significant stenosis",
        ],
        language="en",
    )


def diabetes_screening() -> Draft:
    """Act: last year's screening is 14 months old, outside the one-year window."""
    me = Person("exm-dm-p1", "高文斌", "Gao Wenbin", "male", "1964-12-03", "SC-0305")
    other = Person("exm-dm-p2", "高文彬", "Gao Wenbin", "male", "1963-04-27", "SC-0306")
    screen = "2025-09-24"
    records = [
        fhir.condition("exm-dm-c1", me.pid, "2型糖尿病", "2014-05-10"),
        fhir.medication_statement("exm-dm-m1", me.pid, "二甲双胍", "0.5 g", "tid", "oral", "2014-05-10"),
        report("exm-dm-d1", me.pid, "眼底照相", screen, "双眼未见糖尿病视网膜病变"),
        report("exm-dm-d2", me.pid, "尿白蛋白/肌酐比值", screen, "18 mg/g"),
        report("exm-dm-d3", me.pid, "神经传导速度", screen, "双下肢感觉神经传导速度正常"),
        report("exm-dm-d4", me.pid, "糖化血红蛋白", "2026-11-10", "7.4%"),
        report("exm-dm-d9", other.pid, "眼底照相", "2026-10-15", "双眼非增殖期糖尿病视网膜病变"),
    ]
    return panel(
        "SC-EXM-DM-COMPLICATIONS",
        "糖尿病并发症筛查",
        me,
        other,
        records,
        (
            "2 型糖尿病 12 年，门诊随访，需行年度并发症筛查",
            "has had type 2 diabetes for 12 years and is due for the yearly complication screening",
        ),
        ["眼底照相", "尿白蛋白/肌酐比值", "肾功能", "血脂", "神经传导速度", "踝肱指数"],
        365,
        "2型糖尿病并发症筛查",
    )


def head_ct() -> Draft:
    """Do not act: a head CT from 03:40 this morning is on file for the same headache."""
    me = Person("exm-hct-p1", "许静", "Xu Jing", "female", "1988-10-09", "SC-0307")
    other = Person("exm-hct-p2", "许菁", "Xu Jing", "female", "1987-02-18", "SC-0308")
    records = [
        fhir.encounter("exm-hct-e1", me.pid, "emergency", "2026-11-30T02:50:00+08:00", reason="头痛 1 天"),
        report("exm-hct-d1", me.pid, "头颅CT平扫", "2026-11-30T03:40:00+08:00", "颅内未见出血、占位及中线移位"),
        *vitals("exm-hct-v1", me.pid, "2026-11-30T08:30:00+08:00", sbp=128, dbp=80, hr=76, temp=36.8, gcs=15),
        fhir.condition("exm-hct-c9", other.pid, "偏头痛", "2019-04-02"),
    ]
    return panel(
        "SC-EXM-HEAD-CT",
        "头痛头颅 CT 申请",
        me,
        other,
        records,
        (
            "因头痛 1 天今晨急诊就诊，神经系统查体无阳性体征，目前生命体征平稳",
            "came to the emergency department "
            "early this morning with a headache of 1 day; her neurological examination is normal and her vital "
            "signs are stable",
        ),
        ["头颅CT"],
        1,
        "头痛",
        on_file={"头颅CT": "2026-11-30 03:40 头颅CT平扫：颅内未见出血、占位及中线移位"},
        cites=["03:40", "2026-11-30", "今晨", "未见出血", "no haemorrhage", "no hemorrhage", "no bleeding"],
        risk="high",
    )


def blood_gas() -> Draft:
    """Act: the blood gas on file is from last admission, 2 months ago."""
    me = Person("exm-abg-p1", "钱国华", "Qian Guohua", "male", "1955-03-21", "SC-0309")
    other = Person("exm-abg-p2", "钱国平", "Qian Guoping", "male", "1954-11-30", "SC-0310")
    records = [
        fhir.condition("exm-abg-c1", me.pid, "慢性阻塞性肺疾病", "2015-01-20"),
        fhir.encounter("exm-abg-e1", me.pid, "inpatient", "2026-11-30T07:20:00+08:00", reason="气促加重 2 天"),
        *vitals("exm-abg-v1", me.pid, "2026-11-30T08:10:00+08:00", spo2=86, rr=28, hr=108, temp=37.6),
        report(
            "exm-abg-d1",
            me.pid,
            "动脉血气分析",
            "2026-10-02T11:00:00+08:00",
            "pH 7.38，PaCO2 52 mmHg，PaO2 62 mmHg（未吸氧）",
        ),
        report("exm-abg-d9", other.pid, "动脉血气分析", "2026-11-30T07:30:00+08:00", "pH 7.44，PaCO2 38 mmHg"),
    ]
    return panel(
        "SC-EXM-BLOOD-GAS",
        "呼吸困难血气分析申请",
        me,
        other,
        records,
        (
            "慢阻肺病史，气促加重 2 天，未吸氧血氧饱和度 86%",
            "has COPD and 2 days of worsening breathlessness; SpO2 is 86% on room air",
        ),
        ["动脉血气分析"],
        1,
        "呼吸困难、低氧血症",
        language="en",
        risk="high",
    )


def annual_checkup() -> Draft:
    """Do not act: this year's full check-up was done on 20 August."""
    me = Person("exm-chk-p1", "邓丽", "Deng Li", "female", "1985-06-25", "SC-0311")
    other = Person("exm-chk-p2", "邓莉", "Deng Li", "female", "1984-01-09", "SC-0312")
    done = {
        "血常规": "未见异常",
        "尿常规": "未见异常",
        "肝功能": "ALT 22 U/L，正常",
        "肾功能": "肌酐 62 µmol/L，正常",
        "血脂": "LDL-C 3.1 mmol/L，轻度升高",
        "空腹血糖": "5.2 mmol/L",
        "心电图": "窦性心律，正常心电图",
        "腹部超声": "肝胆胰脾肾未见异常",
    }
    records = [
        fhir.encounter("exm-chk-e1", me.pid, "outpatient", "2026-11-30T08:45:00+08:00", reason="年度体检"),
        *(
            report(f"exm-chk-d{i + 1}", me.pid, name, "2026-08-20T09:00:00+08:00", text)
            for i, (name, text) in enumerate(done.items())
        ),
        report("exm-chk-d9", other.pid, "血常规", "2025-08-19", "未见异常"),
    ]
    return panel(
        "SC-EXM-ANNUAL-CHECKUP",
        "常规年度体检套餐",
        me,
        other,
        records,
        ("无不适，来院要求做年度体检", "has no complaints and asks for her yearly check-up"),
        list(done),
        365,
        "年度体检",
        on_file={name: "2026-08-20 已完成" for name in done},
        cites=["2026-08-20", "8月20日", "August 20", "20 August"],
        missingness="none",
        risk="low",
    )


def preop() -> Draft:
    """Act on part of the panel: the labs of 20 November are valid and an ECG is already requested."""
    me = Person("exm-pre-p1", "曹永华", "Cao Yonghua", "male", "1968-01-15", "SC-0313")
    other = Person("exm-pre-p2", "曹永桦", "Cao Yonghua", "male", "1969-08-08", "SC-0314")
    labs = {
        "血常规": "Hb 142 g/L，PLT 236×10^9/L",
        "凝血功能": "PT 11.8 s，INR 1.02",
        "肝功能": "ALT 31 U/L，TBil 14 µmol/L",
        "肾功能": "肌酐 78 µmol/L",
    }
    records = [
        fhir.condition("exm-pre-c1", me.pid, "胆囊结石伴慢性胆囊炎", "2026-10-08"),
        *(
            report(f"exm-pre-d{i + 1}", me.pid, name, "2026-11-20T10:00:00+08:00", text)
            for i, (name, text) in enumerate(labs.items())
        ),
        report("exm-pre-d5", me.pid, "心电图", "2025-11-02", "窦性心律，正常心电图"),
        fhir.service_request("exm-pre-s1", me.pid, "心电图", "2026-11-29T16:00:00+08:00", reason="术前检查"),
        report("exm-pre-d9", other.pid, "感染四项", "2026-11-25", "乙肝表面抗原、丙肝抗体、HIV 抗体、梅毒抗体均阴性"),
    ]
    return panel(
        "SC-EXM-PREOP",
        "术前检查套餐",
        me,
        other,
        records,
        ("拟于 2026-12-03 行腹腔镜胆囊切除术", "is scheduled for laparoscopic cholecystectomy on 3 December 2026"),
        ["血常规", "凝血功能", "肝功能", "肾功能", "感染四项", "心电图", "胸片"],
        30,
        "术前评估",
        on_file={**{name: "2026-11-20 报告" for name in labs}, "心电图": "2026-11-29 已申请"},
        missingness="partial",
    )


def postop() -> Draft:
    """Act: 6 weeks after total thyroidectomy; the calcium and PTH on file are from the first post-operative day."""
    me = Person("exm-post-p1", "韩雪梅", "Han Xuemei", "female", "1980-02-27", "SC-0315")
    other = Person("exm-post-p2", "韩雪玫", "Han Xuemei", "female", "1981-12-12", "SC-0316")
    records = [
        fhir.procedure("exm-post-pr1", me.pid, "甲状腺全切术", "2026-10-19T09:00:00+08:00"),
        fhir.condition("exm-post-c1", me.pid, "甲状腺乳头状癌", "2026-10-21"),
        fhir.medication_statement("exm-post-m1", me.pid, "左甲状腺素钠", "100 µg", "qd", "oral", "2026-10-21"),
        report("exm-post-d1", me.pid, "血钙", "2026-10-20T06:30:00+08:00", "2.02 mmol/L"),
        report("exm-post-d2", me.pid, "甲状旁腺激素", "2026-10-20T06:30:00+08:00", "12 pg/mL"),
        report("exm-post-d9", other.pid, "甲状腺功能", "2026-11-26", "TSH 1.8 mIU/L，FT4 16.2 pmol/L"),
    ]
    return panel(
        "SC-EXM-POSTOP",
        "术后复查套餐",
        me,
        other,
        records,
        (
            "甲状腺全切术后 6 周，服用左甲状腺素钠，门诊复查",
            "is 6 weeks after a total thyroidectomy, takes levothyroxine and comes for her post-operative review",
        ),
        ["甲状腺功能", "甲状旁腺激素", "血钙", "甲状腺球蛋白", "颈部超声"],
        14,
        "甲状腺全切术后复查",
    )


def tumor_markers() -> Draft:
    """Act: no marker on file (hepatitis B, father with liver cancer)."""
    me = Person("exm-tm-p1", "蒋志华", "Jiang Zhihua", "male", "1974-09-09", "SC-0317")
    other = Person("exm-tm-p2", "蒋志桦", "Jiang Zhihua", "male", "1973-03-03", "SC-0318")
    records = [
        fhir.condition("exm-tm-c1", me.pid, "慢性乙型病毒性肝炎", "2008-06-16"),
        fhir.family_history("exm-tm-f1", me.pid, "父亲", "肝细胞癌"),
        report("exm-tm-d9", other.pid, "甲胎蛋白", "2026-10-30", "AFP 3.2 ng/mL"),
    ]
    return panel(
        "SC-EXM-TUMOR-MARKERS",
        "肿瘤标志物筛查",
        me,
        other,
        records,
        (
            "慢性乙型肝炎病史 18 年，父亲患肝细胞癌，要求肿瘤标志物筛查",
            "has had chronic hepatitis B for 18 "
            "years, his father had hepatocellular carcinoma, and he asks for tumour-marker screening",
        ),
        ["甲胎蛋白", "异常凝血酶原", "癌胚抗原", "糖类抗原19-9"],
        180,
        "肝癌高危人群筛查",
        language="en",
        missingness="missing",
    )


def abdominal_ct() -> Draft:
    """Escalate: contrast CT asked for, but the allergy list holds anaphylaxis to iodinated contrast."""
    me = Person("exm-act-p1", "杨秀兰", "Yang Xiulan", "female", "1990-04-16", "SC-0319")
    other = Person("exm-act-p2", "杨秀岚", "Yang Xiulan", "female", "1991-07-07", "SC-0320")
    records = [
        fhir.allergy("exm-act-a1", me.pid, "碘对比剂（碘海醇）", "过敏性休克", "2023-05-11"),
        fhir.encounter("exm-act-e1", me.pid, "emergency", "2026-11-30T06:50:00+08:00", reason="右下腹痛 10 小时"),
        *vitals("exm-act-v1", me.pid, "2026-11-30T07:00:00+08:00", sbp=116, dbp=74, hr=94, temp=38.1),
        report("exm-act-d1", me.pid, "腹部超声", "2026-11-30T07:40:00+08:00", "阑尾显示不清，右下腹少量积液"),
        fhir.allergy("exm-act-a9", other.pid, "青霉素", "皮疹", "2015-03-02"),
    ]
    exam, pid = "腹部增强CT", me.pid
    reason = "碘对比剂过敏史（过敏性休克），腹部增强CT禁忌，请上级医师决定替代检查"
    head = [
        call("patient_search", mrn=me.mrn),
        call("patient_detail", patient_id=pid),
        call("allergy_list", patient_id=pid),
        call("examination_search", patient_id=pid),
    ]
    calls = [*head, call("escalate_to_human", patient_id=pid, reason=reason), call("finish", summary="已升级")]
    answer = f"患者有{reason}，未申请增强CT，已升级处理。"
    ordered = [*head, call("examination_request_create", patient_id=pid, name=exam, reason="右下腹痛"), calls[-1]]
    draft = started(
        "SC-EXM-ABDOMINAL-CT",
        "腹痛腹部 CT 申请",
        me,
        other,
        records,
        me.ask(
            "右下腹痛 10 小时伴发热，腹部超声阑尾显示不清",
            "has had right lower abdominal pain for 10 hours with fever; ultrasound could not show the appendix",
            *asking([exam], 1),
        ),
        {"exams": [exam], "valid_days": 1, "reason": "右下腹痛"},
        me.slices("escalate"),
    )
    draft.gold, draft.expected_tools = trajectory(calls, answer), [c.tool for c in calls]
    draft.verifiers = [
        unchanged("no-contrast", "ServiceRequest", "no contrast CT requested", {"code.text": {"contains": "增强"}}),
        created(
            "escalated",
            "Task",
            "urgent escalation to a clinician",
            {"code.text": {"equals": "escalation"}, "priority": {"equals": "urgent"}},
            max=1,
        ),
        answer_text(
            "allergy-cited",
            any_=["对比剂过敏", "造影剂过敏", "contrast allergy", "allergic to iodinated", "allergy to iodinated"],
        ),
        checks_before("allergy-first", "examination_request_create", ["allergy_list"]),
    ]
    draft.counterexamples = [
        counterexample(
            "ordered-without-allergies",
            without(ordered, "allergy_list"),
            f"已申请：{exam}。",
            ["no-contrast", "escalated", "allergy-cited", "allergy-first", "chain"],
            expect_accuracy=0.0,
            expect_completion=0,
        ),
        counterexample(
            "ordered-despite-allergy",
            ordered,
            f"已申请：{exam}。",
            ["no-contrast", "escalated", "chain"],
            expect_accuracy=5 / 6,
            expect_completion=0,
        ),
        counterexample(
            "silent-escalation", calls, "已升级处理。", ["allergy-cited"], expect_accuracy=1.0, expect_completion=0
        ),
        counterexample(
            "other-patient",
            [*head[:2], call("allergy_list", patient_id=other.pid), *head[2:], *calls[4:]],
            answer,
            ["scope"],
        ),
    ]
    return add_gold_checks(draft)


SCENARIOS = [
    ugib_panel,
    coronary_cta,
    diabetes_screening,
    abdominal_ct,
    head_ct,
    blood_gas,
    annual_checkup,
    preop,
    postop,
    tumor_markers,
]
