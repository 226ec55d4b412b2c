"""临床操作 (clinical operations): write data or request services."""
from __future__ import annotations

from forge_kernel.ehr import fhir

from .common import Scenario, before_finish, call, created, trajectory, without


ADMISSION_ORDERS = ["血常规", "尿常规", "肝功能", "肾功能", "心电图", "胸片"]


def admission() -> Scenario:
    pid, other = "sc-ops-p1", "sc-ops-p2"
    resources = [
        fhir.patient(pid, "张伟", "male", "1991-08-08", "SC-0201"),
        fhir.encounter("sc-ops-e1", pid, "inpatient", "2026-11-30T08:30:00+08:00", reason="社区获得性肺炎"),
        fhir.service_request("sc-ops-s0", pid, "血常规", "2025-02-01T09:00:00+08:00", status="completed"),
        fhir.patient(other, "张玮", "male", "1990-12-30", "SC-0202"),
        fhir.encounter("sc-ops-e9", other, "inpatient", "2026-11-29T15:00:00+08:00", reason="阑尾炎"),
    ]
    calls = [
        call("patient_search", mrn="SC-0201"),
        call("patient_detail", patient_id=pid),
        call("examination_search", patient_id=pid),
        *(call("examination_request_create", patient_id=pid, name=name) for name in ADMISSION_ORDERS),
        call("finish", summary="入院常规检查已申请"),
    ]
    answer = f"已申请：{'、'.join(ADMISSION_ORDERS)}。"
    return Scenario(
        id="SC-OPS-ADMISSION", title="新入院患者入院常规检查申请", category="clinical_operations", dimension="临床操作",
        instruction={
            "zh": "患者张伟（病历号 SC-0201）今日新入院。请先核对已有检查申请，再开具入院常规检查：血常规、尿常规、肝功能、肾功能、心电图、胸片。",
            "en": "Patient Zhang Wei (MRN SC-0201) was admitted today. Check the existing examination requests, then "
                  "order the admission routine: blood count, urinalysis, liver function, kidney function, ECG, chest X-ray.",
        },
        context={"mrn": "SC-0201", "orders": ADMISSION_ORDERS}, patient_id=pid, resources=resources,
        expected_tools=["patient_search", "patient_detail", "examination_search", "examination_request_create",
                        "finish"],
        verifiers=[
            *(created(f"order-{i + 1}", "ServiceRequest", f"request for {name}", {"code.text": {"equals": name}},
                      max=1) for i, name in enumerate(ADMISSION_ORDERS)),
            {"id": "search-first", "kind": "trace.calls", "category": "trace",
             "params": {"required": [{"tool": "examination_search"}, {"tool": "examination_request_create"}],
                        "in_order": True}},
        ],
        gold=trajectory(calls, answer),
        counterexamples=[
            {"name": "tool-missing", "trajectory": trajectory(without(calls, "patient_detail"), answer),
             "must_fail": ["chain"], "expect_accuracy": 4 / 5, "expect_completion": 0},
            {"name": "tool-extra", "trajectory": trajectory(before_finish(calls, call("drug_info", name="阿司匹林")),
                                                            answer),
             "must_fail": ["chain"], "expect_accuracy": 1.0, "expect_completion": 0},
            {"name": "wrong-state", "trajectory": trajectory(
                [*calls[:-2], calls[-3], calls[-1]], "已申请入院检查。"),
             "must_fail": ["order-6", "order-5"], "expect_accuracy": 1.0, "expect_completion": 0},
            {"name": "other-patient", "trajectory": trajectory(
                [calls[0], call("examination_search", patient_id=other), *calls[1:]], answer),
             "must_fail": ["scope"]},
        ],
        writable=["ServiceRequest"], risk="low",
        slices={"age_band": "18-44", "sex": "male", "missingness": "none"},
    )


SCENARIOS = [admission]
