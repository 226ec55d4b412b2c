"""answer.grounded: every patient fact an answer states was shown to the agent in its trial (zh and en). All
patients and values are synthetic."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from forge_kernel.ehr import EHRImage, EHRView, fhir
from forge_kernel.ehr.summaries import summarize
from forge_kernel.engine import Images
from forge_kernel.engine.grading import grade_trajectory
from forge_kernel.spec import AgentResult, Event, Package, SpecError, VerifierUse, find_packages, load_package
from forge_kernel.verify import GradeContext, bind
from forge_kernel.verify._facts import stated_facts
from forge_kernel.verify._shown import walk
from forge_kernel.verify.kinds import grounding
from tests.helpers import unit_package

ROOT = Path(__file__).resolve().parents[2]
NOW = "2026-11-30T09:00:00+08:00"
RESOURCES = [
    fhir.patient("p1", "测试甲", "female", "1956-12-14", "MRN-1"),
    fhir.observation("k", "p1", "血钾", 5.9, "mmol/L", "2026-11-28T07:30:00+08:00"),
    fhir.observation("anc", "p1", "中性粒细胞绝对计数", 1200, "/µL", "2026-11-27T07:30:00+08:00"),
    fhir.condition("htn", "p1", "原发性高血压 2 级", "2010-05-01"),
]
MEDICATIONS = {
    "medications": [
        {
            "id": "m1",
            "type": "MedicationStatement",
            "name": "氨氯地平",
            "time": "2019-03-01",
            "status": "active",
            "dosage": ["氨氯地平 5 mg qd oral"],
        }
    ]
}


@pytest.fixture(scope="module")
def package(tmp_path_factory) -> Package:
    instruction = {"zh": "列出近 24 小时的异常检验。", "en": "List abnormal labs of the last 24 hours."}
    return unit_package(
        tmp_path_factory.mktemp("pkg"), "UNIT-GROUNDED", "information_retrieval", RESOURCES, NOW, instruction
    )


def event(step: int, tool: str, result, kind: str = "read", ok: bool = True, **args) -> Event:
    return Event(
        step=step, tool=tool, args={"patient_id": "p1", **args}, kind=kind, ok=ok, result=result if ok else None
    )


LABS = event(1, "lab_results", {"items": [summarize(r) for r in RESOURCES[1:3]]})
HISTORY = event(2, "patient_history", {"conditions": [summarize(RESOURCES[3])]})
MEDS = event(3, "medication_search", MEDICATIONS)
READ_ALL = [LABS, HISTORY, MEDS]


def verdict(package, answer: str, events=READ_ALL, output: dict | None = None, **params):
    ctx = GradeContext(
        package,
        EHRView(EHRImage(RESOURCES, package.public.environment.now)),
        list(events),
        AgentResult(answer=answer, output=output or {}),
    )
    kind, validated = bind(VerifierUse(id="g", kind="answer.grounded", category="answer", params=params))
    return kind.check(ctx, validated)


# --- what is a fact --------------------------------------------------------------------------------------------


def kinds(text: str) -> list[tuple[str, str]]:
    return [(f.kind, f.written) for f in stated_facts(text)]


def test_values_dates_years_spans_drugs_and_diagnoses_are_facts():
    assert kinds("2024 年起血钾 5.9 mmol/L（2026-11-28），留置 49 h；服用氨氯地平；高血压。") == [
        ("date", "2026-11-28"),
        ("year", "2024"),
        ("value", "5.9 mmol/L"),
        ("duration", "49 h"),
        ("drug", "氨氯地平"),
        ("diagnosis", "高血压"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "目标 <130/80 mmHg",
        "at least 2–3 times a week",
        "正常范围 18.5–23.9",
        "当前在用药物 4 种",
        "9 weekly readings",
        "WS/T 428-2013",
        "LUNG-IO-301 v2.0",
        "复查于 22:00",
        "（11-26）",
        "未开具利伐沙班",
        "no DVT",
        "建议改用依折麦布",
        "符合糖尿病酮症酸中毒",
        "colchicine or a glucocorticoid are the alternatives",
    ],
)
def test_thresholds_references_counts_identifiers_and_denied_or_proposed_names_are_not(text):
    assert kinds(text) == []


def test_a_number_inside_a_diagnosis_name_is_not_a_value():
    assert kinds("type 2 diabetes") == [("diagnosis", "type 2 diabetes")]


# --- grounded facts pass, in other words and other units ---------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        "血钾 5.9 mmol/L ↑（2026-11-28）；中性粒细胞 1200 /µL；在用氨氯地平 5 mg qd；原发性高血压。",
        "Potassium 5.9 mmol/L on 28 Nov; ANC 1.2 x 10^9/L; on amlodipine; hypertension since 2010.",
        "K 5.90 mmol/L, ANC 1.2×10^9/L (3 days ago), 高血压 2 级",
        "近 24 小时无新结果；今天 2026-11-30 复核。",
    ],
)
def test_an_answer_stating_only_what_was_shown_passes_in_zh_and_en(package, answer):
    outcome = verdict(package, answer)
    assert outcome.passed, outcome.reason


def test_what_the_agent_wrote_never_grounds_its_answer_what_a_tool_showed_does(package):
    order = event(
        4,
        "medication_request_create",
        {"id": "medicationrequest-new-1", "status": "active", "medication": "阿托伐他汀", "dose": "20 mg"},
        kind="write",
        medication="阿托伐他汀",
        dose="20 mg",
        frequency="qn",
        route="oral",
    )
    answer = "已开具阿托伐他汀 20 mg qn。"
    outcome = verdict(package, answer, [*READ_ALL, order])  # the write's arguments and its echo ground nothing
    assert not outcome.passed and "阿托伐他汀 (drug)" in outcome.reason and "20 mg (value)" in outcome.reason
    looked_up = event(
        3, "drug_info", {"name": "阿托伐他汀", "usual_dose": "20 mg qn"}, kind="compute", name="阿托伐他汀"
    )
    assert verdict(package, answer, [*READ_ALL, looked_up, order]).passed


def test_a_span_of_time_between_instants_shown_is_grounded(package):
    assert verdict(package, "The potassium was drawn 49.5 h ago.").passed
    assert not verdict(package, "The potassium was drawn 60 h ago.").passed


# --- facts never shown fail, named ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer, named",
    [
        ("血钾 6.4 mmol/L", "6.4 mmol/L (value)"),
        ("Potassium 5.9 mg/dL", "5.9 mg/dL (value)"),
        ("血钾 5.9 mmol/L（2026-11-02）", "2026-11-02 (date)"),
        ("在用氨氯地平和华法林", "华法林 (drug)"),
        ("Diagnoses: hypertension and atrial fibrillation.", "atrial fibrillation (diagnosis)"),
        ("高血压，2015 年起", "2015 (year)"),
    ],
)
def test_a_fact_no_tool_returned_fails_naming_it(package, answer, named):
    outcome = verdict(package, answer)
    assert not outcome.passed and named in outcome.reason


def test_a_fact_returned_only_by_a_call_that_failed_is_not_shown(package):
    failed = replace(LABS, ok=False, result=None, error={"code": "timeout", "message": "t"})
    outcome = verdict(package, "血钾 5.9 mmol/L", [failed, HISTORY, MEDS])
    assert not outcome.passed and "5.9 mmol/L" in outcome.reason


def test_the_texts_of_the_structured_output_are_read_unless_told_not_to(package):
    output = {"summary": "血钾 6.4 mmol/L", "count": 17}
    assert not verdict(package, "见结构化输出", output=output).passed
    assert verdict(package, "见结构化输出", output=output, output_texts=False).passed


def test_the_unit_of_a_quantity_in_the_structured_output_is_no_fact_but_other_texts_are(package):
    fraction = {"change": {"value": -0.09, "unit": "1"}}  # the unit "1" of a fraction is not a value 1
    assert verdict(package, "见结构化输出", output=fraction).passed
    assert grounding.output_texts({**fraction, "dose": {"unit": "1 mg"}}) == ["1 mg"]  # beside no number: a text
    stated = {**fraction, "note": "血钾 6.4 mmol/L"}
    assert "6.4 mmol/L" in verdict(package, "见结构化输出", output=stated).reason


def test_a_grader_that_reads_every_text_of_the_output_fails_a_fraction_for_its_unit(package, monkeypatch):
    def every_text(output: dict) -> list[str]:  # the mechanism broken: a quantity's unit read as a text
        return [v for v in walk(output) if isinstance(v, str)]

    fraction = {"change": {"value": -0.09, "unit": "1"}}
    monkeypatch.setattr(grounding, "output_texts", every_text)
    outcome = verdict(package, "见结构化输出", output=fraction)
    assert not outcome.passed and "1 (value)" in outcome.reason


def test_the_kinds_of_fact_checked_can_be_narrowed(package):
    assert verdict(package, "在用华法林", facts=["value", "date"]).passed
    with pytest.raises(SpecError):
        bind(VerifierUse(id="g", kind="answer.grounded", category="answer", params={"facts": ["vibe"]}))


def test_without_the_check_an_invented_value_would_pass(package, monkeypatch):
    monkeypatch.setattr(grounding, "is_grounded", lambda fact, seen: True)
    assert verdict(package, "血钾 6.4 mmol/L").passed


# --- the bundled gold answers ------------------------------------------------------------------------------------


def test_every_bundled_package_checks_grounding_and_its_gold_and_valid_variants_are_grounded():
    images, failing = Images(), {}
    for folder in find_packages([str(ROOT / "task_packages")]):
        package = load_package(folder)
        uses = [use for use in package.hidden.verifiers if use.kind == "answer.grounded"]
        assert [use.severity for use in uses] == ["hard"], package.id
        for trajectory in [package.hidden.gold, *(v.trajectory for v in package.hidden.valid_variants)]:
            record = asyncio.run(grade_trajectory(package, trajectory, images))
            kind, params = bind(uses[0])
            outcome = kind.check(GradeContext(package, EHRView(images[package]), record.events, record.result), params)
            if not outcome.passed:
                failing[package.id] = outcome.reason
    assert not failing, failing
