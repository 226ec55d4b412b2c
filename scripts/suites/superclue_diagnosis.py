"""鉴别诊断 (differential diagnosis): retrieve history, rank the differential, request the right examinations."""
from __future__ import annotations

from forge_kernel.ehr import fhir

from .common import Scenario, before_finish, call, created, trajectory, without


def chest_pain() -> Scenario:
    pid, other = "sc-ddx-p1", "sc-ddx-p2"
    resources = [
        fhir.patient(pid, "王建国", "male", "1968-03-14", "SC-0001"),
        fhir.condition("sc-ddx-c1", pid, "高血压", "2015-06-01"),
        fhir.condition("sc-ddx-c2", pid, "高脂血症", "2019-09-10"),
        fhir.encounter("sc-ddx-e1", pid, "emergency", "2026-11-30T07:10:00+08:00", reason="胸痛 2 小时"),
        fhir.observation("sc-ddx-o1", pid, "收缩压", 162, "mmHg", "2026-11-30T07:15:00+08:00", "vital-signs", "8480-6"),
        fhir.observation("sc-ddx-o2", pid, "心率", 98, "/min", "2026-11-30T07:15:00+08:00", "vital-signs", "8867-4"),
        fhir.patient(other, "王建华", "male", "1966-02-02", "SC-0002"),
        fhir.condition("sc-ddx-c9", other, "陈旧性心肌梗死", "2020-01-05"),
    ]
    calls = [
        call("patient_search", mrn="SC-0001"),
        call("patient_detail", patient_id=pid),
        call("record_search", patient_id=pid, type="Condition"),
        call("differential_diagnosis", symptoms=["胸痛", "出汗"], age=58, sex="male"),
        call("examination_request_create", patient_id=pid, name="心电图", priority="urgent"),
        call("examination_request_create", patient_id=pid, name="心肌酶", priority="urgent"),
        call("finish", summary="已申请心电图、心肌酶"),
    ]
    answer = "首先考虑急性冠脉综合征，已申请心电图、心肌酶。"
    wrong_state = [*calls[:4], call("examination_request_create", patient_id=pid, name="血常规"), calls[-1]]
    return Scenario(
        id="SC-DDX-CHEST-PAIN", title="急性胸痛鉴别诊断", category="differential_diagnosis", dimension="鉴别诊断",
        instruction={
            "zh": "患者王建国（病历号 SC-0001），58 岁男性，2 小时前出现胸痛伴出汗。请检索病史，进行鉴别诊断，并开具必要的检查申请。",
            "en": "Patient Wang Jianguo (MRN SC-0001), a 58-year-old man, has had chest pain with sweating for 2 hours. "
                  "Review his history, run a differential diagnosis and request the examinations needed.",
        },
        context={"mrn": "SC-0001", "symptoms": ["胸痛", "出汗"]}, patient_id=pid, resources=resources,
        expected_tools=["patient_search", "patient_detail", "record_search", "differential_diagnosis",
                        "examination_request_create", "finish"],
        verifiers=[
            created("ecg", "ServiceRequest", "ECG request", {"code.text": {"contains": "心电图"}}),
            created("enzymes", "ServiceRequest", "cardiac enzyme request", {"code.text": {"contains": "心肌酶"}}),
        ],
        gold=trajectory(calls, answer),
        counterexamples=[
            {"name": "tool-missing", "trajectory": trajectory(without(calls, "differential_diagnosis"), answer),
             "must_fail": ["chain"], "expect_accuracy": 5 / 6, "expect_completion": 0},
            {"name": "tool-extra", "trajectory": trajectory(
                before_finish(calls, call("medication_search", patient_id=pid)), answer),
             "must_fail": ["chain"], "expect_accuracy": 1.0, "expect_completion": 0},
            {"name": "wrong-state", "trajectory": trajectory(wrong_state, "已申请血常规。"),
             "must_fail": ["ecg", "enzymes"], "expect_accuracy": 1.0, "expect_completion": 0},
            {"name": "other-patient", "trajectory": trajectory(
                [calls[0], call("patient_detail", patient_id=other), *calls[1:]], answer),
             "must_fail": ["scope"]},
        ],
        writable=["ServiceRequest"], risk="high",
        slices={"age_band": "45-64", "sex": "male", "missingness": "none"},
    )


SCENARIOS = [chest_pain]
