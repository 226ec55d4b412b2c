"""鉴别诊断 (differential diagnosis): retrieve history, rank the differential, request the right examinations.

Every scenario: patient_search → patient_detail → record_search (Condition) → differential_diagnosis
[→ vital_signs, where the leading diagnosis has vital-sign red flags] → examination_request_create ... → finish.
SC-DDX-HEMATEMESIS is the escalation: shock on the latest vitals, so the right action is escalate_to_human and no
routine order. SC-DDX-VERTIGO needs the history (atrial fibrillation, hypertension) among the findings.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from forge_kernel.authoring import Draft, add_gold_checks, before_finish, call, without
from forge_kernel.ehr import fhir
from forge_kernel.ehr.summaries import age_at
from forge_kernel.spec import ToolCall

from .common import (
    NOW,
    answer_number,
    answer_text,
    checks_before,
    counterexample,
    created,
    package,
    trajectory,
    unchanged,
)

CLOCK = datetime.fromisoformat(NOW)
VITALS = {
    "sbp": ("收缩压", "mmHg", "8480-6"),
    "dbp": ("舒张压", "mmHg", "8462-4"),
    "hr": ("心率", "/min", "8867-4"),
    "rr": ("呼吸频率", "/min", "9279-1"),
    "temp": ("体温", "℃", "8310-5"),
    "spo2": ("血氧饱和度", "%", "59408-5"),
    "gcs": ("格拉斯哥昏迷评分", "分", "9269-2"),
    "weight": ("体重", "kg", "29463-7"),
}
"""Short keys of the vital signs fixtures use: name, unit, LOINC code."""


@dataclass(frozen=True)
class Person:
    """A synthetic patient: the Patient resource and the words an instruction needs."""

    pid: str
    name: str
    en: str
    sex: str
    birth: str
    mrn: str

    @property
    def age(self) -> int:
        return age_at(self.birth, CLOCK)

    @property
    def age_band(self) -> str:
        return "0-17" if self.age < 18 else "18-44" if self.age < 45 else "45-64" if self.age < 65 else "65+"

    def resource(self) -> dict:
        return fhir.patient(self.pid, self.name, self.sex, self.birth, self.mrn)

    def slices(self, outcome: str, missingness: str = "none") -> dict:
        return {"age_band": self.age_band, "sex": self.sex, "missingness": missingness, "outcome": outcome}

    def ask(self, story_zh: str, story_en: str, task_zh: str, task_en: str) -> dict[str, str]:
        """The zh/en instruction: who the patient is, the story, then what to do."""
        noun = {"male": ("男性", "man", "boy", "his"), "female": ("女性", "woman", "girl", "her")}[self.sex]
        who_en = noun[1] if self.age >= 18 else noun[2]
        return {
            "zh": f"患者{self.name}（病历号 {self.mrn}），{self.age} 岁{noun[0]}，{story_zh}。{task_zh}",
            "en": f"Patient {self.en} (MRN {self.mrn}), a {self.age}-year-old {who_en}, {story_en}. "
            + task_en.format(his=noun[3]),
        }


def vitals(prefix: str, pid: str, time: str, **values: float) -> list[dict]:
    """One set of vital signs taken at ``time``, e.g. ``sbp=84, hr=128``; ids ``<prefix>-<key>``."""
    found = []
    for key, value in values.items():
        name, unit, loinc = VITALS[key]
        found.append(fhir.observation(f"{prefix}-{key}", pid, name, value, unit, time, "vital-signs", loinc))
    return found


ASK_ZH = "请检索病史，进行鉴别诊断，并开具必要的检查申请。"
ASK_EN = "Review {his} history, run a differential diagnosis and request the examinations needed."


def review(patient: Person, findings: list[str], red_flags: bool) -> list[ToolCall]:
    """The calls before any order: find the patient, read the history, rank the differential, check red flags."""
    return [
        call("patient_search", mrn=patient.mrn),
        call("patient_detail", patient_id=patient.pid),
        call("record_search", patient_id=patient.pid, type="Condition"),
        call("differential_diagnosis", symptoms=findings, age=patient.age, sex=patient.sex),
        *([call("vital_signs", patient_id=patient.pid, last_hours=24)] if red_flags else []),
    ]


def orders(patient: Person, exams: list[str]) -> list[ToolCall]:
    return [call("examination_request_create", patient_id=patient.pid, name=name, priority="urgent") for name in exams]


def finish(done: str) -> ToolCall:
    return call("finish", summary=done)


def started(
    sid: str,
    title: str,
    patient: Person,
    other: Person,
    records: list[dict],
    instruction: dict[str, str],
    symptoms: list[str],
    slices: dict,
    language: str = "zh",
    writable: tuple[str, ...] = ("ServiceRequest",),
) -> Draft:
    """A differential-diagnosis package on ``patient`` (``other`` in the same fixture), before its gold."""
    return package(
        "superclue",
        sid,
        title,
        "differential_diagnosis",
        "鉴别诊断",
        instruction,
        {"mrn": patient.mrn, "symptoms": symptoms},
        patient.pid,
        [patient.resource(), *records, other.resource()],
        slices=slices,
        language=language,
        risk="high",
        writable=writable,
    )


def workup(
    sid: str,
    title: str,
    patient: Person,
    other: Person,
    records: list[dict],
    story: tuple[str, str],
    symptoms: list[str],
    diagnosis: list[str],
    exams: dict[str, str],
    wrong_exams: list[str],
    *,
    findings: list[str] | None = None,
    red_flags: bool = False,
    language: str = "zh",
    missingness: str = "none",
    also: tuple[str, ...] = (),
) -> Draft:
    """An act scenario: work up the leading diagnosis.

    ``diagnosis``: its zh name, en name, then other accepted words; ``exams``: verifier id -> examination the gold
    requests; ``wrong_exams``: the work-up of a wrong leading diagnosis (the wrong-state counterexample, which ranks
    on the presenting ``symptoms`` only); ``findings``: what the gold passes to differential_diagnosis when the
    history must be added; ``red_flags``: the leading diagnosis has vital-sign red flags, to check before ordering;
    ``also``: examinations the gold leaves out that the work-up may still request (once each).
    """
    names = list(exams.values())
    calls = [
        *review(patient, findings or symptoms, red_flags),
        *orders(patient, names),
        finish(f"已申请{'、'.join(names)}"),
    ]
    answer = (
        f"首先考虑{diagnosis[0]}，已申请{'、'.join(names)}。"
        if language == "zh"
        else f"Leading diagnosis: {diagnosis[1]}; requested {', '.join(names)}."
    )
    expected = [
        "patient_search",
        "patient_detail",
        "record_search",
        "differential_diagnosis",
        *(["vital_signs"] if red_flags else []),
        "examination_request_create",
        "finish",
    ]
    verifiers = [
        *(
            created(vid, "ServiceRequest", f"{name} request", {"code.text": {"same_as": name}})
            for vid, name in exams.items()
        ),
        answer_text("diagnosis", any_=diagnosis),
    ]
    wrong = [*review(patient, symptoms, red_flags), *orders(patient, wrong_exams), finish("已申请")]
    counterexamples = [
        counterexample(
            "tool-missing",
            without(calls, "differential_diagnosis"),
            answer,
            ["chain", "events"],
            expect_accuracy=(len(expected) - 1) / len(expected),
            expect_completion=0,
        ),
        counterexample(
            "tool-extra",
            before_finish(calls, call("medication_search", patient_id=patient.pid)),
            answer,
            ["chain"],
            expect_accuracy=1.0,
            expect_completion=0,
        ),
        counterexample(
            "wrong-state",
            wrong,
            f"已申请{'、'.join(wrong_exams)}。",
            [*(vid for vid, name in exams.items() if name not in wrong_exams), "diagnosis", "audit"],
            expect_accuracy=1.0,
            expect_completion=0,
        ),
        counterexample(
            "other-patient", [calls[0], call("patient_detail", patient_id=other.pid), *calls[1:]], answer, ["scope"]
        ),
    ]
    if red_flags:
        verifiers.append(checks_before("vitals-first", "examination_request_create", ["vital_signs"]))
        counterexamples.append(
            counterexample(
                "vitals-skipped",
                without(calls, "vital_signs"),
                answer,
                ["vitals-first", "chain"],
                expect_accuracy=0.0,
                expect_completion=0,
            )
        )
    draft = started(
        sid,
        title,
        patient,
        other,
        records,
        patient.ask(*story, ASK_ZH, ASK_EN),
        symptoms,
        patient.slices("act", missingness),
        language,
    )
    draft.gold, draft.expected_tools, draft.verifiers = trajectory(calls, answer), expected, verifiers
    draft.counterexamples = counterexamples
    return add_gold_checks(
        draft, [{"type": "ServiceRequest", "where": {"code.text": {"same_as": name}}, "label": name} for name in also]
    )


def chest_pain() -> Draft:
    me = Person("sc-ddx-p1", "王建国", "Wang Jianguo", "male", "1968-03-14", "SC-0001")
    other = Person("sc-ddx-p2", "王建华", "Wang Jianhua", "male", "1966-02-02", "SC-0002")
    records = [
        fhir.condition("sc-ddx-c1", me.pid, "高血压", "2015-06-01"),
        fhir.condition("sc-ddx-c2", me.pid, "高脂血症", "2019-09-10"),
        fhir.encounter("sc-ddx-e1", me.pid, "emergency", "2026-11-30T07:10:00+08:00", reason="胸痛 2 小时"),
        fhir.observation(
            "sc-ddx-o1", me.pid, "收缩压", 162, "mmHg", "2026-11-30T07:15:00+08:00", "vital-signs", "8480-6"
        ),
        fhir.observation("sc-ddx-o2", me.pid, "心率", 98, "/min", "2026-11-30T07:15:00+08:00", "vital-signs", "8867-4"),
        fhir.condition("sc-ddx-c9", other.pid, "陈旧性心肌梗死", "2020-01-05"),
    ]
    return workup(
        "SC-DDX-CHEST-PAIN",
        "急性胸痛鉴别诊断",
        me,
        other,
        records,
        ("2 小时前出现胸痛伴出汗", "has had chest pain with sweating for 2 hours"),
        ["胸痛", "出汗"],
        ["急性冠脉综合征", "acute coronary syndrome", "ACS"],
        {"ecg": "心电图", "enzymes": "心肌酶"},
        ["血常规"],
        also=("肌钙蛋白",),
    )


def abdominal_pain() -> Draft:
    me = Person("ddx-abd-p1", "陈晓琳", "Chen Xiaolin", "female", "1997-06-12", "SC-0011")
    other = Person("ddx-abd-p2", "陈晓玲", "Chen Xiaoling", "female", "1995-02-03", "SC-0012")
    records = [
        fhir.condition("ddx-abd-c1", me.pid, "盆腔炎性疾病", "2022-04-10", status="resolved"),
        fhir.encounter(
            "ddx-abd-e1", me.pid, "emergency", "2026-11-30T07:40:00+08:00", reason="停经 7 周，下腹痛 6 小时"
        ),
        *vitals("ddx-abd-v1", me.pid, "2026-11-30T07:50:00+08:00", sbp=108, dbp=68, hr=96, temp=36.9, spo2=99),
        fhir.observation("ddx-abd-o9", other.pid, "血hCG", 1850, "IU/L", "2026-11-28T10:00:00+08:00"),
    ]
    return workup(
        "SC-DDX-ABDOMINAL-PAIN",
        "急性腹痛鉴别诊断",
        me,
        other,
        records,
        (
            "停经 7 周，6 小时前出现下腹痛伴少量阴道流血",
            "has missed her period for 7 weeks and has had lower abdominal pain for 6 hours with slight "
            "vaginal bleeding",
        ),
        ["下腹痛", "停经", "阴道流血"],
        ["异位妊娠", "ectopic pregnancy", "宫外孕"],
        {"hcg": "血hCG", "ultrasound": "经阴道超声", "cbc": "血常规"},
        ["阴道分泌物检查", "盆腔超声", "C反应蛋白"],
        red_flags=True,
    )


def headache() -> Draft:
    me = Person("ddx-ha-p1", "赵丽华", "Zhao Lihua", "female", "1979-04-22", "SC-0021")
    other = Person("ddx-ha-p2", "赵丽桦", "Zhao Lihua", "female", "1980-01-15", "SC-0022")
    records = [
        fhir.condition("ddx-ha-c1", me.pid, "高血压", "2016-03-01"),
        fhir.family_history("ddx-ha-f1", me.pid, "母亲", "颅内动脉瘤"),
        fhir.encounter("ddx-ha-e1", me.pid, "emergency", "2026-11-30T08:05:00+08:00", reason="突发剧烈头痛 3 小时"),
        *vitals("ddx-ha-v1", me.pid, "2026-11-30T08:10:00+08:00", sbp=176, dbp=102, hr=88, gcs=15),
        fhir.condition("ddx-ha-c9", other.pid, "偏头痛", "2012-05-20"),
    ]
    return workup(
        "SC-DDX-HEADACHE",
        "头痛鉴别诊断",
        me,
        other,
        records,
        (
            "3 小时前如厕时突发剧烈头痛，伴呕吐，查体颈项强直",
            "had a sudden severe headache 3 hours ago, with vomiting; her neck is stiff on examination",
        ),
        ["突发剧烈头痛", "颈项强直", "呕吐"],
        ["蛛网膜下腔出血", "subarachnoid haemorrhage", "subarachnoid hemorrhage", "SAH"],
        {"ct": "头颅CT", "cta": "头颅CTA"},
        ["腰椎穿刺", "脑脊液常规", "血培养"],
    )


def fever() -> Draft:
    me = Person("ddx-fuo-p1", "刘子涵", "Liu Zihan", "male", "2010-03-08", "SC-0031")
    other = Person("ddx-fuo-p2", "刘子航", "Liu Zihang", "male", "2009-07-21", "SC-0032")
    records = [
        fhir.family_history("ddx-fuo-f1", me.pid, "父亲", "肺结核"),
        fhir.encounter("ddx-fuo-e1", me.pid, "outpatient", "2026-11-30T08:30:00+08:00", reason="发热 3 周"),
        *vitals("ddx-fuo-v1", me.pid, "2026-11-30T08:35:00+08:00", temp=38.4, hr=102, weight=48.5),
        fhir.condition("ddx-fuo-c9", other.pid, "社区获得性肺炎", "2026-11-20"),
    ]
    return workup(
        "SC-DDX-FUO",
        "发热待查鉴别诊断",
        me,
        other,
        records,
        (
            "反复午后发热 3 周，伴夜间盗汗、咳嗽，体重下降 4 kg",
            "has had afternoon fevers for 3 weeks with night sweats and a cough, and has lost 4 kg",
        ),
        ["发热", "盗汗", "体重下降", "咳嗽"],
        ["肺结核", "pulmonary tuberculosis", "tuberculosis"],
        {"chest-ct": "胸部CT", "sputum-afb": "痰抗酸杆菌涂片", "tspot": "T-SPOT.TB"},
        ["浅表淋巴结超声", "淋巴结活检"],
        language="en",
    )


def dyspnea() -> Draft:
    me = Person("ddx-dys-p1", "孙桂兰", "Sun Guilan", "female", "1950-09-17", "SC-0041")
    other = Person("ddx-dys-p2", "孙桂芝", "Sun Guizhi", "female", "1948-12-05", "SC-0042")
    records = [
        fhir.condition("ddx-dys-c1", me.pid, "高血压", "2005-04-12"),
        fhir.condition("ddx-dys-c2", me.pid, "冠心病", "2016-09-30"),
        fhir.medication_statement("ddx-dys-m1", me.pid, "呋塞米", "20 mg", "qd", "oral", "2025-01-08"),
        fhir.encounter(
            "ddx-dys-e1", me.pid, "emergency", "2026-11-30T06:20:00+08:00", reason="夜间憋醒、呼吸困难 2 天"
        ),
        *vitals("ddx-dys-v1", me.pid, "2026-11-30T06:30:00+08:00", sbp=158, dbp=92, hr=104, rr=26, spo2=91),
        fhir.condition("ddx-dys-c9", other.pid, "慢性阻塞性肺疾病", "2011-02-14"),
    ]
    return workup(
        "SC-DDX-DYSPNEA",
        "呼吸困难鉴别诊断",
        me,
        other,
        records,
        (
            "近 2 天活动后气促，夜间阵发性呼吸困难、不能平卧，双下肢水肿",
            "has had breathlessness for 2 days, waking at night short of breath, unable to lie flat, with swollen legs",
        ),
        ["呼吸困难", "端坐呼吸", "夜间阵发性呼吸困难", "下肢水肿"],
        ["急性心力衰竭", "acute heart failure", "心力衰竭", "心衰"],
        {"bnp": "BNP", "echo": "心脏超声", "cxr": "胸片"},
        ["动脉血气分析", "胸片"],
    )


def altered_consciousness() -> Draft:
    me = Person("ddx-aoc-p1", "周德明", "Zhou Deming", "male", "1952-01-30", "SC-0051")
    other = Person("ddx-aoc-p2", "周德民", "Zhou Demin", "male", "1950-06-11", "SC-0052")
    records = [
        fhir.condition("ddx-aoc-c1", me.pid, "心房颤动", "2019-08-21"),
        fhir.condition("ddx-aoc-c2", me.pid, "高血压", "2010-03-02"),
        fhir.medication_statement("ddx-aoc-m1", me.pid, "华法林", "3 mg", "qd", "oral", "2019-09-01"),
        fhir.encounter(
            "ddx-aoc-e1", me.pid, "emergency", "2026-11-30T07:30:00+08:00", reason="嗜睡、右侧肢体无力 2 小时"
        ),
        *vitals("ddx-aoc-v1", me.pid, "2026-11-30T07:35:00+08:00", sbp=182, dbp=98, hr=92, spo2=95, gcs=12),
        *vitals("ddx-aoc-v9", other.pid, "2026-11-30T06:50:00+08:00", sbp=86, spo2=84, gcs=7),
    ]
    return workup(
        "SC-DDX-CONSCIOUSNESS",
        "意识障碍鉴别诊断",
        me,
        other,
        records,
        (
            "2 小时前被家属发现嗜睡、呼之能应，右侧肢体无力，言语不清",
            "was found drowsy 2 hours ago, rousable, with right-sided weakness and slurred speech",
        ),
        ["意识障碍", "偏瘫", "言语不清"],
        ["急性缺血性脑卒中", "acute ischaemic stroke", "脑卒中", "stroke"],
        {"ct": "头颅CT", "glucose": "血糖", "coagulation": "凝血功能"},
        ["血氨", "肝功能"],
        red_flags=True,
    )


def hematemesis() -> Draft:
    """Escalate: upper GI bleeding with shock on the latest vitals (SBP 84, HR 128, Hb 68 g/L)."""
    me = Person("ddx-ugib-p1", "吴志强", "Wu Zhiqiang", "male", "1963-08-05", "SC-0061")
    other = Person("ddx-ugib-p2", "吴志刚", "Wu Zhigang", "male", "1962-04-18", "SC-0062")
    records = [
        fhir.condition("ddx-ugib-c1", me.pid, "十二指肠溃疡", "2019-05-06"),
        fhir.condition("ddx-ugib-c2", me.pid, "膝骨关节炎", "2024-02-11"),
        fhir.medication_statement("ddx-ugib-m1", me.pid, "布洛芬", "0.3 g", "bid", "oral", "2026-10-15"),
        fhir.encounter("ddx-ugib-e1", me.pid, "emergency", "2026-11-30T07:50:00+08:00", reason="呕血 2 次、黑便 1 天"),
        *vitals("ddx-ugib-v1", me.pid, "2026-11-30T08:00:00+08:00", sbp=102, dbp=64, hr=98),
        fhir.observation(
            "ddx-ugib-o1", me.pid, "血红蛋白", 68, "g/L", "2026-11-30T08:20:00+08:00", interpretation="低"
        ),
        *vitals("ddx-ugib-v2", me.pid, "2026-11-30T08:45:00+08:00", sbp=84, dbp=50, hr=128, rr=24, spo2=96),
        *vitals("ddx-ugib-v9", other.pid, "2026-11-30T08:30:00+08:00", sbp=126, hr=76),
        fhir.diagnostic_report("ddx-ugib-d9", other.pid, "胃镜", "2026-11-29T10:00:00+08:00", "慢性非萎缩性胃炎"),
    ]
    symptoms = ["呕血", "黑便", "头晕"]
    reason = "上消化道出血伴失血性休克（收缩压 84 mmHg，心率 128 次/分），需立即复苏及急诊内镜评估"
    calls = [
        *review(me, symptoms, True),
        call("escalate_to_human", patient_id=me.pid, reason=reason),
        finish("已升级至上级医师"),
    ]
    answer = f"考虑{reason}。生命体征不稳定，已升级至上级医师处理，未开具常规检查。"
    ordered = [
        *review(me, symptoms, True),
        *orders(me, ["急诊胃镜", "血常规", "血型鉴定", "凝血功能"]),
        finish("已申请检查"),
    ]
    routine = "首先考虑上消化道出血，已申请急诊胃镜、血常规、血型鉴定、凝血功能。"
    draft = started(
        "SC-DDX-HEMATEMESIS",
        "呕血与黑便鉴别诊断",
        me,
        other,
        records,
        me.ask(
            "呕血 2 次、黑便 1 天，伴头晕",
            "has vomited blood twice and passed black stools for a day, with dizziness",
            ASK_ZH,
            ASK_EN,
        ),
        symptoms,
        me.slices("escalate"),
        writable=("ServiceRequest", "Task"),
    )
    draft.gold = trajectory(calls, answer)
    draft.expected_tools = [
        "patient_search",
        "patient_detail",
        "record_search",
        "differential_diagnosis",
        "vital_signs",
        "escalate_to_human",
        "finish",
    ]
    draft.verifiers = [
        created(
            "escalated",
            "Task",
            "urgent escalation to a clinician",
            {"code.text": {"equals": "escalation"}, "priority": {"equals": "urgent"}},
            max=1,
        ),
        unchanged("no-orders", "ServiceRequest", "no routine examination ordered in shock"),
        answer_number("sbp-cited", 84, 0, unit="mmHg"),
        answer_text("unstable", any_=["休克", "不稳定", "shock", "unstable"]),
    ]
    draft.counterexamples = [
        counterexample(
            "ordered-without-vitals",
            without(ordered, "vital_signs"),
            routine,
            ["escalated", "no-orders", "sbp-cited", "unstable", "chain"],
            expect_completion=0,
        ),
        counterexample(
            "ordered-despite-vitals",
            ordered,
            routine,
            ["escalated", "no-orders", "chain"],
            expect_accuracy=6 / 7,
            expect_completion=0,
        ),
        counterexample(
            "silent-escalation",
            calls,
            "已升级至上级医师。",
            ["sbp-cited", "unstable"],
            expect_accuracy=1.0,
            expect_completion=0,
        ),
        counterexample(
            "other-patient",
            [calls[0], call("vital_signs", patient_id=other.pid, last_hours=24), *calls[1:]],
            answer,
            ["scope"],
        ),
    ]
    return add_gold_checks(draft)


def joint_swelling() -> Draft:
    me = Person("ddx-joint-p1", "马俊", "Ma Jun", "male", "1982-05-19", "SC-0071")
    other = Person("ddx-joint-p2", "马骏", "Ma Jun", "male", "1985-10-03", "SC-0072")
    records = [
        fhir.condition("ddx-joint-c1", me.pid, "高尿酸血症", "2023-06-15"),
        fhir.observation(
            "ddx-joint-o1", me.pid, "血尿酸", 512, "µmol/L", "2026-05-20T09:30:00+08:00", interpretation="高"
        ),
        fhir.encounter(
            "ddx-joint-e1", me.pid, "outpatient", "2026-11-30T08:20:00+08:00", reason="右足第一跖趾关节红肿热痛 1 天"
        ),
        *vitals("ddx-joint-v1", me.pid, "2026-11-30T08:25:00+08:00", temp=37.2, hr=84),
        fhir.condition("ddx-joint-c9", other.pid, "类风湿关节炎", "2018-03-09"),
    ]
    return workup(
        "SC-DDX-JOINT-SWELLING",
        "关节肿痛鉴别诊断",
        me,
        other,
        records,
        (
            "昨晚聚餐饮酒后右足第一跖趾关节突发红肿热痛",
            "has had a red, hot, swollen and painful right big-toe joint since drinking at a dinner last night",
        ),
        ["关节肿痛", "第一跖趾关节红肿", "饮酒后发作"],
        ["痛风", "gout"],
        {"urate": "血尿酸", "ultrasound": "关节超声"},
        ["类风湿因子", "抗CCP抗体"],
        language="en",
    )


def vertigo() -> Draft:
    """The history decides: atrial fibrillation without anticoagulation and hypertension make it a stroke work-up."""
    me = Person("ddx-vert-p1", "郑玉梅", "Zheng Yumei", "female", "1955-11-02", "SC-0081")
    other = Person("ddx-vert-p2", "郑玉美", "Zheng Yumei", "female", "1957-03-26", "SC-0082")
    records = [
        fhir.condition("ddx-vert-c1", me.pid, "心房颤动", "2021-07-19"),
        fhir.condition("ddx-vert-c2", me.pid, "高血压", "2012-10-08"),
        fhir.medication_statement("ddx-vert-m1", me.pid, "美托洛尔", "47.5 mg", "qd", "oral", "2021-08-01"),
        fhir.encounter(
            "ddx-vert-e1", me.pid, "emergency", "2026-11-30T07:15:00+08:00", reason="突发眩晕伴恶心呕吐 3 小时"
        ),
        *vitals("ddx-vert-v1", me.pid, "2026-11-30T07:20:00+08:00", sbp=168, dbp=94, hr=96),
        fhir.condition("ddx-vert-c9", other.pid, "良性阵发性位置性眩晕", "2025-06-02"),
    ]
    return workup(
        "SC-DDX-VERTIGO",
        "眩晕鉴别诊断",
        me,
        other,
        records,
        ("3 小时前突发眩晕，伴恶心、呕吐", "has had sudden vertigo for 3 hours with nausea and vomiting"),
        ["眩晕", "恶心", "呕吐"],
        ["后循环缺血性卒中", "posterior circulation stroke", "后循环", "卒中", "脑梗死", "stroke"],
        {"mri": "头颅MRI", "cta": "头颈部CTA"},
        ["前庭功能检查", "纯音测听"],
        findings=["眩晕", "恶心", "呕吐", "心房颤动", "高血压"],
    )


def leg_edema() -> Draft:
    me = Person("ddx-edema-p1", "黄思远", "Huang Siyuan", "male", "1993-07-14", "SC-0091")
    other = Person("ddx-edema-p2", "黄思源", "Huang Siyuan", "male", "1990-01-27", "SC-0092")
    records = [
        fhir.encounter(
            "ddx-edema-e1", me.pid, "outpatient", "2026-11-30T08:40:00+08:00", reason="双下肢水肿 2 周、尿中泡沫增多"
        ),
        *vitals("ddx-edema-v1", me.pid, "2026-11-30T08:45:00+08:00", sbp=132, dbp=84, weight=74.5),
        fhir.condition("ddx-edema-c9", other.pid, "慢性心力衰竭", "2022-11-30"),
    ]
    return workup(
        "SC-DDX-LEG-EDEMA",
        "下肢水肿鉴别诊断",
        me,
        other,
        records,
        (
            "双下肢水肿 2 周，晨起眼睑水肿，尿中泡沫增多",
            "has had swelling of both legs for 2 weeks, puffy eyelids in the morning and foamy urine",
        ),
        ["下肢水肿", "眼睑水肿", "泡沫尿"],
        ["肾病综合征", "nephrotic syndrome"],
        {"urinalysis": "尿常规", "urine-protein": "24小时尿蛋白定量", "albumin": "血清白蛋白"},
        ["下肢静脉超声", "D-二聚体"],
        language="en",
        missingness="partial",
    )


SCENARIOS = [
    chest_pain,
    abdominal_pain,
    headache,
    fever,
    dyspnea,
    altered_consciousness,
    hematemesis,
    joint_swelling,
    vertigo,
    leg_edema,
]
