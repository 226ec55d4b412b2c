"""临床操作 (clinical operations): record data or request services — vital signs, vaccines, referrals, examinations.

Two scenarios must end without a write because the service is already on file (this season's flu vaccine, an
active ambulatory blood-pressure request); one asks to skip a single order that is still pending (prenatal), one
to skip an examination whose recent result is on file (pre-chemotherapy echocardiogram: ``valid_days`` in the
context, as the 检查申请 packages give it).
"""

from __future__ import annotations

from forge_kernel.authoring import Draft, add_gold_checks, before_finish, call, with_args, without
from forge_kernel.ehr import fhir
from forge_kernel.spec import ToolCall, VerifierUse
from forge_kernel.spec.hidden import Counterexample

from .common import answer_text, counterexample, created, package, trajectory, unchanged

UNITS = {"°C": ["°C", "℃"], "/min": ["/min", "次/分"], "mmHg": ["mmHg"], "%": ["%"]}
"""Accepted spellings of each vital-sign unit."""


def ops(
    sid: str,
    title: str,
    instruction: dict[str, str],
    context: dict,
    pid: str,
    other: str,
    resources: list[dict],
    calls: list[ToolCall],
    answer: str,
    verifiers: list[VerifierUse],
    counterexamples: list[Counterexample],
    *,
    slices: dict,
    language: str = "zh",
    writable: tuple[str, ...] = ("ServiceRequest",),
) -> Draft:
    """A clinical-operations package, plus the shared counterexample that opens another patient's record."""
    intrusion = counterexample(
        "other-patient", [calls[0], call("patient_detail", patient_id=other), *calls[1:]], answer, ["scope"]
    )
    draft = package(
        "superclue",
        sid,
        title,
        "clinical_operations",
        "临床操作",
        instruction,
        {"mrn": calls[0].args["mrn"], **context},
        pid,
        resources,
        slices=slices,
        language=language,
        risk="low",
        writable=writable,
    )
    draft.gold, draft.verifiers = trajectory(calls, answer), verifiers
    draft.counterexamples = [*counterexamples, intrusion]
    return add_gold_checks(draft)


def order_calls(mrn: str, pid: str, orders: list[str], summary: str) -> list[ToolCall]:
    """Find the patient, look at what is on file, request each examination."""
    return [
        call("patient_search", mrn=mrn),
        call("patient_detail", patient_id=pid),
        call("examination_search", patient_id=pid),
        *(call("examination_request_create", patient_id=pid, name=name) for name in orders),
        call("finish", summary=summary),
    ]


def searched_first(action: str = "examination_request_create") -> VerifierUse:
    """A trace verifier: the patient's requests were read before the first ``action``."""
    return VerifierUse(
        id="search-first",
        kind="trace.calls",
        category="trace",
        params={"required": [{"tool": "examination_search"}, {"tool": action}], "in_order": True},
    )


def ordered(orders: list[str], spellings: dict[str, str] | None = None) -> list[VerifierUse]:
    """One state verifier per examination (``order-1`` ...): requested exactly once.

    The name must be the one given, or match its regex in ``spellings`` (English tasks may name it in English).
    """
    spellings = spellings or {}
    return [
        created(
            f"order-{i}",
            "ServiceRequest",
            f"request for {name}",
            {"code.text": {"regex": spellings[name]} if name in spellings else {"equals": name}},
            max=1,
        )
        for i, name in enumerate(orders, 1)
    ]


def not_requested(vid: str, what: str = "", pattern: str | None = None) -> VerifierUse:
    """A state verifier: no request (whose name matches ``pattern``, e.g. any spelling of one test) was written."""
    where = {"code.text": {"regex": pattern}} if pattern else {}
    return unchanged(vid, "ServiceRequest", f"no new request{f' for {what}' if what else ''}", where)


def immunization(iid: str, pid: str, vaccine: str, given: str, lot: str) -> dict:
    """A given vaccination (FHIR Immunization)."""
    return {
        "resourceType": "Immunization",
        "id": iid,
        "status": "completed",
        "vaccineCode": fhir.concept(vaccine),
        "patient": fhir.ref(pid),
        "occurrenceDateTime": given,
        "lotNumber": lot,
    }


def admission_vitals() -> Draft:
    pid, other = "ovs-p1", "ovs-p2"
    vitals = [
        {"name": "体温", "value": 37.8, "unit": "°C", "code": "8310-5"},
        {"name": "心率", "value": 92, "unit": "/min", "code": "8867-4"},
        {"name": "呼吸频率", "value": 20, "unit": "/min", "code": "9279-1"},
        {"name": "收缩压", "value": 128, "unit": "mmHg", "code": "8480-6"},
        {"name": "舒张压", "value": 82, "unit": "mmHg", "code": "8462-4"},
        {"name": "血氧饱和度", "value": 97, "unit": "%", "code": "59408-5"},
    ]
    resources = [
        fhir.patient(pid, "马晓东", "male", "1985-11-02", "SC-0211"),
        fhir.encounter("ovs-e1", pid, "inpatient", "2026-11-30T08:10:00+08:00", reason="急性胆囊炎"),
        fhir.condition("ovs-c1", pid, "急性胆囊炎", "2026-11-29"),
        fhir.patient(other, "马晓冬", "male", "1986-03-15", "SC-0212"),
        fhir.encounter("ovs-e9", other, "inpatient", "2026-11-30T07:50:00+08:00", reason="肺炎"),
        fhir.observation("ovs-o9", other, "体温", 38.9, "°C", "2026-11-30T08:00:00+08:00", "vital-signs", "8310-5"),
    ]
    record = [call("vital_sign_create", patient_id=pid, **v) for v in vitals]
    calls = [
        call("patient_search", mrn="SC-0211"),
        call("patient_detail", patient_id=pid),
        *record,
        call("finish", summary="入院生命体征已录入"),
    ]
    answer = "已录入：体温 37.8 °C、心率 92 /min、呼吸频率 20 /min、血压 128/82 mmHg、血氧饱和度 97 %。"
    typo = [*calls[:2], call("vital_sign_create", patient_id=pid, **{**vitals[0], "value": 38.7}), *calls[3:]]
    return ops(
        "SC-OPS-ADMISSION-VITALS",
        "新入院患者生命体征录入",
        {
            "zh": "患者马晓东（病历号 SC-0211）今晨新入院。护士 08:40 测得：体温 37.8 ℃，心率 92 次/分，呼吸 20 次/分，"
            "血压 128/82 mmHg，血氧饱和度 97%。请核对患者身份后将生命体征录入 EHR。",
            "en": "Patient Ma Xiaodong (MRN SC-0211) was admitted this morning. At 08:40 the nurse measured: "
            "temperature 37.8 °C, heart rate 92/min, respiratory rate 20/min, blood pressure 128/82 mmHg, "
            "SpO2 97%. Confirm the patient, then record the vital signs in the EHR.",
        },
        {"vitals": vitals},
        pid,
        other,
        resources,
        calls,
        answer,
        [
            created(
                f"vital-{v['code']}",
                "Observation",
                f"{v['name']} {v['value']} {v['unit']}",
                {
                    "code.text": {"equals": v["name"]},
                    "category.text": {"equals": "vital-signs"},
                    "valueQuantity.value": {"approx": v["value"], "tol": 0.01},
                    "valueQuantity.unit": {"one_of": UNITS[v["unit"]]},
                },
                max=1,
            )
            for v in vitals
        ],
        [
            counterexample("value-typo", typo, answer, ["vital-8310-5"], expect_accuracy=1.0, expect_completion=0),
            counterexample(
                "diastolic-missing",
                [c for c in calls if c.args.get("name") != "舒张压"],
                "已录入：体温、心率、呼吸、收缩压、血氧饱和度。",
                ["vital-8462-4"],
                expect_accuracy=1.0,
                expect_completion=0,
            ),
        ],
        writable=("Observation",),
        slices={"age_band": "18-44", "sex": "male", "missingness": "none", "outcome": "act"},
    )


def flu_vaccine_given() -> Draft:
    pid, other = "oflu-p1", "oflu-p2"
    resources = [
        fhir.patient(pid, "杜秀兰", "female", "1954-02-14", "SC-0221"),
        fhir.condition("oflu-c1", pid, "慢性阻塞性肺疾病", "2016-10-08"),
        fhir.encounter("oflu-e1", pid, "outpatient", "2026-11-30T08:30:00+08:00", reason="慢阻肺随访"),
        immunization("oflu-i1", pid, "23 价肺炎球菌多糖疫苗", "2024-11-05T10:00:00+08:00", "PPV2024-1187"),
        immunization("oflu-i2", pid, "流感疫苗（四价灭活）", "2025-10-20T09:30:00+08:00", "FLU2025-0412"),
        immunization("oflu-i3", pid, "流感疫苗（四价灭活）", "2026-10-16T10:15:00+08:00", "FLU2026-0938"),
        fhir.patient(other, "杜秀莲", "female", "1955-07-01", "SC-0222"),
        immunization("oflu-i9", other, "流感疫苗（四价灭活）", "2025-10-22T09:00:00+08:00", "FLU2025-0433"),
    ]
    calls = [
        call("patient_search", mrn="SC-0221"),
        call("patient_detail", patient_id=pid),
        call("record_search", patient_id=pid, type="Immunization"),
        call("finish", summary="本季流感疫苗已接种"),
    ]
    answer = "杜秀兰已于 2026-10-16 接种本季（2026-2027）流感疫苗（四价灭活，批号 FLU2026-0938），无需重复申请。"
    request = call("immunization_request_create", patient_id=pid, name="流感疫苗")
    return ops(
        "SC-OPS-FLU-VACCINE",
        "流感疫苗申请（本季已接种）",
        {
            "zh": "患者杜秀兰（病历号 SC-0221），72 岁，慢阻肺门诊随访。请核对疫苗接种记录后为其申请本季流感疫苗接种。",
            "en": "Patient Du Xiulan (MRN SC-0221), 72, is at her COPD follow-up visit. Check her vaccination record, "
            "then request this season's influenza vaccination for her.",
        },
        {"vaccine": "流感疫苗"},
        pid,
        other,
        resources,
        calls,
        answer,
        [not_requested("no-request"), answer_text("says-given", all_=["2026-10-16"])],
        [
            counterexample(
                "requested-anyway",
                before_finish(calls, request),
                "已申请流感疫苗接种。",
                ["no-request", "chain", "says-given"],
                expect_accuracy=1.0,
                expect_completion=0,
            ),
            counterexample(
                "last-season-read",
                before_finish(calls, request),
                "上次流感疫苗接种为 2025-10-20，已超过一年，已申请本季接种。",
                ["no-request", "says-given"],
                expect_accuracy=1.0,
                expect_completion=0,
            ),
            counterexample(
                "record-not-checked",
                without(calls, "record_search"),
                answer,
                ["chain", "events"],
                expect_accuracy=3 / 4,
                expect_completion=0,
            ),
        ],
        slices={"age_band": "65+", "sex": "female", "missingness": "none", "outcome": "do_not_act"},
    )


def hypertension_referral() -> Draft:
    pid, other = "oref-p1", "oref-p2"
    resources = [
        fhir.patient(pid, "冯志刚", "male", "1971-08-25", "SC-0231"),
        fhir.condition("oref-c1", pid, "原发性高血压", "2015-04-01"),
        fhir.condition("oref-c2", pid, "难治性高血压", "2026-11-30"),
        fhir.medication_statement("oref-m1", pid, "氨氯地平", "10 mg", "qd", "oral", "2020-06-01"),
        fhir.medication_statement("oref-m2", pid, "缬沙坦", "160 mg", "qd", "oral", "2021-03-01"),
        fhir.medication_statement("oref-m3", pid, "氢氯噻嗪", "25 mg", "qd", "oral", "2025-09-01"),
        fhir.observation("oref-o1", pid, "收缩压", 172, "mmHg", "2026-11-30T08:45:00+08:00", "vital-signs", "8480-6"),
        fhir.observation("oref-o2", pid, "舒张压", 104, "mmHg", "2026-11-30T08:45:00+08:00", "vital-signs", "8462-4"),
        fhir.service_request(
            "oref-s1",
            pid,
            "心内科门诊",
            "2024-03-12T10:00:00+08:00",
            status="completed",
            category="referral",
            reason="高血压",
        ),
        fhir.patient(other, "冯志强", "male", "1970-02-03", "SC-0232"),
        fhir.service_request("oref-s9", other, "高血压专科门诊", "2026-11-25T10:00:00+08:00", category="referral"),
    ]
    refer = call("referral_create", patient_id=pid, name="高血压专科门诊", reason="难治性高血压")
    calls = [
        call("patient_search", mrn="SC-0231"),
        call("patient_detail", patient_id=pid),
        call("examination_search", patient_id=pid),
        refer,
        call("finish", summary="已转诊高血压专科门诊"),
    ]
    answer = (
        "Referred to the hypertension specialist clinic (高血压专科门诊) for resistant hypertension: about 170/100 mmHg on "
        "amlodipine, valsartan and hydrochlorothiazide. The 2024 cardiology referral is completed, so no active "
        "referral was on file."
    )
    as_exam = call("examination_request_create", patient_id=pid, name="高血压专科门诊")
    return ops(
        "SC-OPS-HTN-REFERRAL",
        "高血压专科门诊转诊",
        {
            "zh": "患者冯志刚（病历号 SC-0231）服用氨氯地平、缬沙坦、氢氯噻嗪三种降压药，血压仍约 170/100 mmHg。请核对已有"
            "申请后，以难治性高血压为由将其转诊至高血压专科门诊。",
            "en": "Patient Feng Zhigang (MRN SC-0231) has blood pressure around 170/100 mmHg on three drugs "
            "(amlodipine, valsartan, hydrochlorothiazide). Check his existing requests, then refer him to the "
            "hypertension specialist clinic (高血压专科门诊) for resistant hypertension.",
        },
        {"referral": {"specialty": "高血压专科门诊", "reason": "难治性高血压"}},
        pid,
        other,
        resources,
        calls,
        answer,
        [
            created(
                "referral",
                "ServiceRequest",
                "referral to the hypertension clinic",
                {
                    "code.text": {"regex": "(?i)高血压专科|hypertension"},
                    "category.text": {"equals": "referral"},
                    "reasonCode.text": {"regex": "(?i)高血压|hypertension"},
                },
                max=1,
            ),
            searched_first("referral_create"),
        ],
        [
            counterexample(
                "ordered-as-examination",
                [*calls[:3], as_exam, calls[-1]],
                answer,
                ["referral", "chain"],
                expect_completion=0,
            ),
            counterexample(
                "wrong-clinic",
                [*calls[:3], with_args(refer, name="心内科门诊"), calls[-1]],
                "已转诊心内科门诊。",
                ["referral"],
                expect_accuracy=1.0,
                expect_completion=0,
            ),
        ],
        language="en",
        slices={"age_band": "45-64", "sex": "male", "missingness": "none", "outcome": "act"},
    )


ADMISSION_ORDERS = ["血常规", "尿常规", "肝功能", "肾功能", "心电图", "胸片"]


def admission() -> Draft:
    pid, other = "sc-ops-p1", "sc-ops-p2"
    resources = [
        fhir.patient(pid, "张伟", "male", "1991-08-08", "SC-0201"),
        fhir.encounter("sc-ops-e1", pid, "inpatient", "2026-11-30T08:30:00+08:00", reason="社区获得性肺炎"),
        fhir.service_request("sc-ops-s0", pid, "血常规", "2025-02-01T09:00:00+08:00", status="completed"),
        fhir.patient(other, "张玮", "male", "1990-12-30", "SC-0202"),
        fhir.encounter("sc-ops-e9", other, "inpatient", "2026-11-29T15:00:00+08:00", reason="阑尾炎"),
    ]
    calls = order_calls("SC-0201", pid, ADMISSION_ORDERS, "入院常规检查已申请")
    answer = f"已申请：{'、'.join(ADMISSION_ORDERS)}。"
    return ops(
        "SC-OPS-ADMISSION",
        "新入院患者入院常规检查申请",
        {
            "zh": "患者张伟（病历号 SC-0201）今日新入院。请先核对已有检查申请，再开具入院常规检查：血常规、尿常规、肝功能、肾功能、心电图、胸片。",
            "en": "Patient Zhang Wei (MRN SC-0201) was admitted today. Check the existing examination requests, then "
            "order the admission routine: blood count, urinalysis, liver function, kidney function, ECG, chest X-ray.",
        },
        {"orders": ADMISSION_ORDERS},
        pid,
        other,
        resources,
        calls,
        answer,
        [*ordered(ADMISSION_ORDERS), searched_first()],
        [
            counterexample(
                "tool-missing",
                without(calls, "patient_detail"),
                answer,
                ["chain", "events"],
                expect_accuracy=4 / 5,
                expect_completion=0,
            ),
            counterexample(
                "tool-extra",
                before_finish(calls, call("drug_info", name="阿司匹林")),
                answer,
                ["chain"],
                expect_accuracy=1.0,
                expect_completion=0,
            ),
            counterexample(
                "wrong-state",
                [*calls[:-2], calls[-3], calls[-1]],
                "已申请入院检查。",
                ["order-6", "order-5", "audit"],
                expect_accuracy=1.0,
                expect_completion=0,
            ),
        ],
        slices={"age_band": "18-44", "sex": "male", "missingness": "none", "outcome": "act"},
    )


def examination_orders(
    sid: str,
    title: str,
    instruction: dict[str, str],
    mrn: str,
    pid: str,
    other: str,
    resources: list[dict],
    orders: list[str],
    summary: str,
    dropped: str,
    *,
    slices: dict,
    language: str = "zh",
    spellings: dict[str, str] | None = None,
) -> Draft:
    """A plain order set: request every examination once, after reading what is on file."""
    calls = order_calls(mrn, pid, orders, summary)
    answer = f"已申请：{'、'.join(orders)}。"
    missing = orders.index(dropped) + 1
    return ops(
        sid,
        title,
        instruction,
        {"orders": orders},
        pid,
        other,
        resources,
        calls,
        answer,
        [*ordered(orders, spellings), searched_first()],
        [
            counterexample(
                f"order-{missing}-missing",
                [c for c in calls if c.args.get("name") != dropped],
                f"已申请：{'、'.join(o for o in orders if o != dropped)}。",
                [f"order-{missing}"],
                expect_accuracy=1.0,
                expect_completion=0,
            ),
            counterexample(
                "requests-not-read",
                without(calls, "examination_search"),
                answer,
                ["chain", "search-first"],
                expect_completion=0,
            ),
        ],
        language=language,
        slices=slices,
    )


def postop_follow_up() -> Draft:
    pid, other = "opo-p1", "opo-p2"
    resources = [
        fhir.patient(pid, "黄雅琴", "female", "1979-05-06", "SC-0251"),
        fhir.condition("opo-c1", pid, "甲状腺乳头状癌", "2026-10-15"),
        fhir.procedure("opo-pr1", pid, "甲状腺全切除术 + 中央区淋巴结清扫", "2026-11-02T09:00:00+08:00"),
        fhir.medication_statement("opo-m1", pid, "左甲状腺素钠", "100 µg", "qd", "oral", "2026-11-04"),
        fhir.service_request("opo-s1", pid, "血钙", "2026-11-03T06:00:00+08:00", status="completed"),
        fhir.observation(
            "opo-o1", pid, "血钙", 2.02, "mmol/L", "2026-11-03T08:00:00+08:00", code="17861-6", interpretation="L"
        ),
        fhir.encounter("opo-e1", pid, "outpatient", "2026-11-30T08:30:00+08:00", reason="甲状腺术后 4 周复查"),
        fhir.patient(other, "黄雅芹", "female", "1980-08-21", "SC-0252"),
        fhir.procedure("opo-pr9", other, "甲状腺右叶切除术", "2026-10-20T09:00:00+08:00"),
    ]
    return examination_orders(
        "SC-OPS-POSTOP-FOLLOW-UP",
        "术后复查申请",
        {
            "zh": "患者黄雅琴（病历号 SC-0251）甲状腺全切术后 4 周门诊复查。请核对已有检查申请后开具术后复查：甲状腺功能、"
            "甲状腺球蛋白、甲状旁腺激素、血钙、颈部超声。",
            "en": "Patient Huang Yaqin (MRN SC-0251) is at her 4-week check after total thyroidectomy. Check the "
            "existing requests, then order the post-operative tests: thyroid function, thyroglobulin, "
            "parathyroid hormone, serum calcium, neck ultrasound.",
        },
        "SC-0251",
        pid,
        other,
        resources,
        ["甲状腺功能", "甲状腺球蛋白", "甲状旁腺激素", "血钙", "颈部超声"],
        "术后复查已申请",
        "甲状旁腺激素",
        slices={"age_band": "45-64", "sex": "female", "missingness": "none", "outcome": "act"},
    )


def glucose_tolerance_test() -> Draft:
    pid, other = "oogtt-p1", "oogtt-p2"
    resources = [
        fhir.patient(pid, "邓丽", "female", "1978-09-14", "SC-0261"),
        fhir.condition("oogtt-c1", pid, "空腹血糖受损", "2026-11-24"),
        fhir.family_history("oogtt-f1", pid, "母亲", "2 型糖尿病"),
        fhir.observation(
            "oogtt-o1", pid, "空腹血糖", 6.4, "mmol/L", "2026-11-10T07:30:00+08:00", code="1558-6", interpretation="H"
        ),
        fhir.observation(
            "oogtt-o2", pid, "空腹血糖", 6.6, "mmol/L", "2026-11-24T07:30:00+08:00", code="1558-6", interpretation="H"
        ),
        fhir.observation("oogtt-o3", pid, "糖化血红蛋白", 6.1, "%", "2026-11-24T07:30:00+08:00", code="4548-4"),
        fhir.patient(other, "邓莉", "female", "1977-04-02", "SC-0262"),
        fhir.condition("oogtt-c9", other, "2 型糖尿病", "2022-01-10"),
    ]
    return examination_orders(
        "SC-OPS-OGTT",
        "糖耐量试验申请",
        {
            "zh": "患者邓丽（病历号 SC-0261）两次空腹血糖 6.4、6.6 mmol/L，糖化血红蛋白 6.1%，母亲患 2 型糖尿病。请核对已有"
            "检查申请后开具 75g 口服葡萄糖耐量试验及胰岛素释放试验。",
            "en": "Patient Deng Li (MRN SC-0261) has had fasting glucose of 6.4 and 6.6 mmol/L and HbA1c 6.1%; her "
            "mother has type 2 diabetes. Check the existing requests, then order a 75 g oral glucose tolerance "
            "test (75g口服葡萄糖耐量试验) with an insulin release test (胰岛素释放试验).",
        },
        "SC-0261",
        pid,
        other,
        resources,
        ["75g口服葡萄糖耐量试验", "胰岛素释放试验"],
        "糖耐量试验已申请",
        "75g口服葡萄糖耐量试验",
        language="en",
        spellings={
            "75g口服葡萄糖耐量试验": "(?i)葡萄糖耐量|OGTT|glucose tolerance",
            "胰岛素释放试验": "(?i)胰岛素释放|insulin (release|secretion)",
        },
        slices={"age_band": "45-64", "sex": "female", "missingness": "none", "outcome": "act"},
    )


def annual_checkup() -> Draft:
    pid, other = "ochk-p1", "ochk-p2"
    last_year = "2025-11-28T08:00:00+08:00"
    resources = [
        fhir.patient(pid, "宋建军", "male", "1980-01-27", "SC-0271"),
        fhir.encounter("ochk-e1", pid, "outpatient", "2026-11-30T08:00:00+08:00", reason="年度健康体检"),
        *(
            fhir.service_request(f"ochk-s{i}", pid, name, last_year, status="completed")
            for i, name in enumerate(["血常规", "肝功能", "腹部超声"], 1)
        ),
        fhir.diagnostic_report("ochk-d1", pid, "腹部超声", "2025-11-28T11:00:00+08:00", "轻度脂肪肝"),
        fhir.patient(other, "宋建君", "male", "1981-06-06", "SC-0272"),
        fhir.service_request("ochk-s9", other, "血常规", "2026-11-29T09:00:00+08:00"),
    ]
    return examination_orders(
        "SC-OPS-ANNUAL-CHECKUP",
        "常规体检套餐申请",
        {
            "zh": "患者宋建军（病历号 SC-0271）今日年度健康体检。请核对已有检查申请后开具常规体检套餐：血常规、尿常规、"
            "肝功能、肾功能、血脂四项、空腹血糖、心电图、腹部超声。",
            "en": "Patient Song Jianjun (MRN SC-0271) is here for his annual health check. Check the existing "
            "requests, then order the routine package: blood count, urinalysis, liver function, kidney "
            "function, lipid panel, fasting glucose, ECG, abdominal ultrasound.",
        },
        "SC-0271",
        pid,
        other,
        resources,
        ["血常规", "尿常规", "肝功能", "肾功能", "血脂四项", "空腹血糖", "心电图", "腹部超声"],
        "体检套餐已申请",
        "腹部超声",
        slices={"age_band": "45-64", "sex": "male", "missingness": "none", "outcome": "act"},
    )


PRENATAL_ORDERS = [
    "血常规",
    "尿常规",
    "ABO及Rh血型",
    "肝功能",
    "肾功能",
    "空腹血糖",
    "乙肝表面抗原",
    "梅毒血清学检测",
    "HIV抗体",
    "NT超声",
]


def prenatal_booking() -> Draft:
    pid, other = "opn-p1", "opn-p2"
    resources = [
        fhir.patient(pid, "许婷", "female", "1996-06-30", "SC-0281"),
        fhir.condition("opn-c1", pid, "宫内早孕（孕 12+3 周）", "2026-09-04"),
        fhir.encounter(
            "opn-e0", pid, "emergency", "2026-11-29T15:30:00+08:00", "2026-11-29T18:00:00+08:00", reason="妊娠剧吐"
        ),
        fhir.service_request("opn-s1", pid, "血常规", "2026-11-29T16:00:00+08:00", reason="妊娠剧吐"),
        fhir.encounter("opn-e1", pid, "outpatient", "2026-11-30T08:30:00+08:00", reason="首次产前检查（建档）"),
        fhir.patient(other, "许婷婷", "female", "1995-02-17", "SC-0282"),
        fhir.condition("opn-c9", other, "妊娠期糖尿病", "2026-10-12"),
    ]
    todo = PRENATAL_ORDERS[1:]
    calls = order_calls("SC-0281", pid, todo, "产前检查已申请")
    answer = f"已申请：{'、'.join(todo)}。血常规已于 2026-11-29 急诊申请、尚未完成，未重复申请。"
    duplicate = before_finish(calls, call("examination_request_create", patient_id=pid, name="血常规"))
    return ops(
        "SC-OPS-PRENATAL",
        "产前检查申请",
        {
            "zh": "患者许婷（病历号 SC-0281）孕 12+3 周，今日首次产前检查建档。请先核对已有检查申请（避免重复），再开具：血常规、"
            "尿常规、ABO及Rh血型、肝功能、肾功能、空腹血糖、乙肝表面抗原、梅毒血清学检测、HIV抗体、NT超声。",
            "en": "Patient Xu Ting (MRN SC-0281), 12+3 weeks pregnant, has her first prenatal booking visit today. "
            "Check the existing requests first (no duplicates), then order: blood count, urinalysis, ABO and "
            "Rh blood group, liver function, kidney function, fasting glucose, hepatitis B surface antigen, "
            "syphilis serology, HIV antibody, NT ultrasound.",
        },
        {"orders": PRENATAL_ORDERS},
        pid,
        other,
        resources,
        calls,
        answer,
        [
            *ordered(todo),
            not_requested("no-duplicate-cbc", "blood count", "(?i)血常规|血细胞分析|全血细胞计数|blood count|CBC"),
            searched_first(),
        ],
        [
            counterexample(
                "duplicate-cbc",
                duplicate,
                f"已申请：{'、'.join(PRENATAL_ORDERS)}。",
                ["no-duplicate-cbc"],
                expect_accuracy=1.0,
                expect_completion=0,
            ),
            counterexample(
                "nt-missing",
                [c for c in calls if c.args.get("name") != "NT超声"],
                answer,
                ["order-9"],
                expect_accuracy=1.0,
                expect_completion=0,
            ),
        ],
        slices={"age_band": "18-44", "sex": "female", "missingness": "none", "outcome": "act"},
    )


def abpm_already_requested() -> Draft:
    pid, other = "oabpm-p1", "oabpm-p2"
    abpm = "24小时动态血压监测"
    resources = [
        fhir.patient(pid, "袁志华", "male", "1962-03-18", "SC-0291"),
        fhir.condition("oabpm-c1", pid, "白大衣高血压待排", "2026-11-28"),
        fhir.observation("oabpm-o1", pid, "收缩压", 162, "mmHg", "2026-11-30T08:50:00+08:00", "vital-signs", "8480-6"),
        fhir.observation("oabpm-o2", pid, "舒张压", 94, "mmHg", "2026-11-30T08:50:00+08:00", "vital-signs", "8462-4"),
        fhir.service_request("oabpm-s1", pid, abpm, "2026-11-28T10:15:00+08:00", reason="白大衣高血压待排"),
        fhir.note(
            "oabpm-n1",
            pid,
            "门诊记录",
            "诊室血压 158/92 mmHg，家庭自测约 128/80 mmHg，已预约 12 月 2 日佩戴动态血压监测仪。",
            "2026-11-28T10:20:00+08:00",
        ),
        fhir.patient(other, "袁志桦", "male", "1963-09-09", "SC-0292"),
        fhir.service_request("oabpm-s9", other, abpm, "2026-10-10T09:00:00+08:00", status="completed"),
    ]
    calls = [
        call("patient_search", mrn="SC-0291"),
        call("patient_detail", patient_id=pid),
        call("examination_search", patient_id=pid),
        call("finish", summary="动态血压监测已申请，未重复"),
    ]
    answer = (
        "24-hour ambulatory blood pressure monitoring (24小时动态血压监测) was already requested on 2026-11-28 and is "
        "still active; not requested again."
    )
    return ops(
        "SC-OPS-ABPM",
        "24 小时动态血压监测申请（已申请）",
        {
            "zh": "患者袁志华（病历号 SC-0291）诊室血压 162/94 mmHg，家庭自测约 128/80 mmHg，疑白大衣高血压。请核对已有检查"
            "申请后开具 24 小时动态血压监测。",
            "en": "Patient Yuan Zhihua (MRN SC-0291) has clinic blood pressure 162/94 mmHg but home readings around "
            "128/80 mmHg; white-coat hypertension is suspected. Check his existing requests, then request "
            "24-hour ambulatory blood pressure monitoring (24小时动态血压监测).",
        },
        {"orders": [abpm]},
        pid,
        other,
        resources,
        calls,
        answer,
        [not_requested("no-duplicate"), answer_text("says-on-file", all_=["2026-11-28"])],
        [
            counterexample(
                "duplicate",
                before_finish(calls, call("examination_request_create", patient_id=pid, name=abpm)),
                f"已申请：{abpm}。",
                ["no-duplicate", "chain", "says-on-file"],
                expect_accuracy=1.0,
                expect_completion=0,
            ),
            counterexample(
                "requests-not-read",
                without(calls, "examination_search"),
                answer,
                ["chain", "events"],
                expect_accuracy=3 / 4,
                expect_completion=0,
            ),
        ],
        language="en",
        slices={"age_band": "45-64", "sex": "male", "missingness": "none", "outcome": "do_not_act"},
    )


PRECHEMO_ORDERS = ["血常规", "肝功能", "肾功能", "乙肝五项", "心电图", "心脏超声"]


def prechemo_assessment() -> Draft:
    pid, other = "opc-p1", "opc-p2"
    resources = [
        fhir.patient(pid, "罗美华", "female", "1970-10-11", "SC-0301"),
        fhir.condition("opc-c1", pid, "左乳浸润性导管癌（cT2N1M0，HER2 阴性）", "2026-11-10"),
        fhir.note(
            "opc-n1",
            pid,
            "肿瘤内科会诊",
            "拟 12 月 3 日开始 EC（表柔比星 + 环磷酰胺）方案新辅助化疗，化疗前完善评估。",
            "2026-11-26T14:00:00+08:00",
        ),
        fhir.service_request("opc-s1", pid, "心脏超声", "2026-11-24T09:00:00+08:00", status="completed"),
        fhir.diagnostic_report(
            "opc-d1", pid, "心脏超声", "2026-11-25T15:00:00+08:00", "LVEF 64%，各房室内径正常，未见瓣膜病变"
        ),
        fhir.patient(other, "罗美桦", "female", "1969-04-04", "SC-0302"),
        fhir.diagnostic_report("opc-d9", other, "心脏超声", "2026-11-20T10:00:00+08:00", "LVEF 48%，左室收缩功能减低"),
    ]
    todo = PRECHEMO_ORDERS[:-1]
    calls = order_calls("SC-0301", pid, todo, "化疗前评估已申请")
    answer = f"已申请：{'、'.join(todo)}。心脏超声 2026-11-25 已完成（LVEF 64%），2 周内有效，未重复申请。"
    repeat = before_finish(calls, call("examination_request_create", patient_id=pid, name="心脏超声"))
    return ops(
        "SC-OPS-PRECHEMO",
        "化疗前评估检查申请",
        {
            "zh": "患者罗美华（病历号 SC-0301）拟于 12 月 3 日开始含蒽环类方案新辅助化疗。请核对已有检查申请和报告，开具化疗前"
            "评估：血常规、肝功能、肾功能、乙肝五项、心电图、心脏超声；2 周内已有结果的检查不必重复。",
            "en": "Patient Luo Meihua (MRN SC-0301) starts anthracycline-based neoadjuvant chemotherapy on 3 December. "
            "Check her existing requests and reports, then order the pre-chemotherapy work-up: blood count, "
            "liver function, kidney function, hepatitis B panel, ECG, echocardiogram; skip any test with a "
            "result from the last 2 weeks.",
        },
        {"orders": PRECHEMO_ORDERS, "valid_days": 14},
        pid,
        other,
        resources,
        calls,
        answer,
        [
            *ordered(todo),
            not_requested("no-repeat-echo", "echocardiography", "(?i)心脏超声|超声心动图|心脏彩超|echocardiog"),
            answer_text("reuses-echo", any_=["LVEF 64", "2026-11-25"]),
            searched_first(),
        ],
        [
            counterexample(
                "echo-repeated",
                repeat,
                f"已申请：{'、'.join(PRECHEMO_ORDERS)}。",
                ["no-repeat-echo", "reuses-echo"],
                expect_accuracy=1.0,
                expect_completion=0,
            ),
            counterexample(
                "ecg-missing",
                [c for c in calls if c.args.get("name") != "心电图"],
                answer,
                ["order-5"],
                expect_accuracy=1.0,
                expect_completion=0,
            ),
        ],
        slices={"age_band": "45-64", "sex": "female", "missingness": "none", "outcome": "act"},
    )


SCENARIOS = [
    admission_vitals,
    flu_vaccine_given,
    hypertension_referral,
    admission,
    postop_follow_up,
    glucose_tolerance_test,
    annual_checkup,
    prenatal_booking,
    abpm_already_requested,
    prechemo_assessment,
]
