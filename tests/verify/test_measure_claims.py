"""What an answer says of a measurement, judged against the record shown (synthetic data only): a status word
beside a value outside (or inside) the reference range the record gives fails ``answer.consistent`` naming the
sentence, a trend word against the series shown fails (a series called stable that moved clearly among them), in
either language; valid wordings pass, and with the record's range, the cue table or a rule of stability taken away
the wrong ones pass again."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from forge_kernel.ehr import summaries
from forge_kernel.engine import Images
from forge_kernel.engine.selftest import mutation_test, selftest_package
from forge_kernel.spec import load_package
from forge_kernel.verify import _measures
from forge_kernel.verify._measures import measure_claims, readings, record_disagreement
from forge_kernel.verify._shown import read
from forge_kernel.verify.kinds import answer as answer_kinds
from tests.helpers import ROOT, trial

RANGE = {"low": 3.5, "high": 5.5, "unit": "mmol/L"}
SHOWN = [
    {
        "items": [
            {"name": "血钾（外院）", "value": {"value": 5.9, "unit": "mmol/L"}, "time": "2026-11-28", "range": RANGE},
            {"name": "白细胞", "value": {"value": 13.6, "unit": "10^9/L"}, "time": "2026-11-26", "range": {"high": 10}},
            {"name": "白细胞", "value": {"value": 9.8, "unit": "10^9/L"}, "time": "2026-11-29", "range": {"high": 10}},
            {"name": "C反应蛋白", "value": {"value": 86, "unit": "mg/L"}, "time": "2026-11-26"},
            {"name": "C反应蛋白", "value": {"value": 32, "unit": "mg/L"}, "time": "2026-11-29"},
            {"name": "空腹血糖", "value": {"value": 4.2, "unit": "mmol/L"}, "time": "2026-11-28"},
        ]
    },
    {
        "name": "收缩压",
        "unit": "mmHg",
        "first": {"time": "2026-11-20", "value": 168},
        "last": {"time": "2026-11-27", "value": 136},
    },
]


def disagreement(answer: str, results: list = SHOWN) -> str | None:
    """What the record check says of the answer, the results being what the trial's reads returned."""
    return record_disagreement(answer, lambda: read(results).named)


@pytest.mark.parametrize(
    ("answer", "named"),
    [
        (
            "血钾 5.9 mmol/L，正常。",
            "says 血钾 '正常' ('血钾 5.9 mmol/L,正常。'), but 5.9 mmol/L (2026-11-28; range 3.5–5.5) is high",
        ),
        ("另有血钾 5.9 mmol/L（外院结果），在正常范围内。", "says 血钾 '在正常范围内'"),
        ("Potassium 5.9 mmol/L, within normal limits.", "says 血钾 'within normal limits'"),
        ("血钾正常。", "says 血钾 '正常' ('血钾正常。'), but 5.9 mmol/L"),
        (
            "白细胞 9.8，偏高。",
            "says 白细胞 '偏高' ('白细胞 9.8,偏高。'), but 9.8 10^9/L (2026-11-29; range –10) is normal",
        ),
        ("WBC 13600/µL, normal.", "says 白细胞 'normal'"),  # another unit, the same reading
        (
            "CRP 呈上升趋势。",
            "says C反应蛋白 '呈上升趋势' ('CRP 呈上升趋势。'), but the series shown fell from 86 mg/L to 32 mg/L",
        ),
        ("Systolic pressure is rising.", "says 收缩压 'rising'"),
        (
            "CRP 基本稳定。",
            "says C反应蛋白 '基本稳定' ('CRP 基本稳定。'), but the series shown ranges from 32 mg/L (2026-11-29) to "
            "86 mg/L (2026-11-26)",
        ),
        (
            "WBC remained stable.",
            "says 白细胞 'remained stable' ('WBC remained stable.'), but the series shown has 9.8 10^9/L (2026-11-29; "
            "range –10) within the record's range and 13.6 10^9/L (2026-11-26; range –10) high by it",
        ),
        (
            "血钾 4.2 mmol/L。",
            "says 血钾 '4.2 mmol/L' ('血钾 4.2 mmol/L。'), but 4.2 mmol/L is a 空腹血糖 reading, not a 血钾 one",
        ),
        ("Potassium of 4.2.", "says 血钾 '4.2'"),  # a number of another measurement, bare
    ],
)
def test_a_status_or_trend_the_record_contradicts_fails_named(answer, named):
    found = disagreement(answer)
    assert found is not None and found.startswith(named), found


@pytest.mark.parametrize(
    "answer",
    [
        "血钾 5.9 mmol/L ↑（外院结果，未标记异常但高于正常上限 5.5 mmol/L）。",
        "Potassium 5.9 mmol/L (high), above the upper limit of normal of 5.5 mmol/L.",
        "白细胞 13.6×10^9/L ↑（11-26，11-29 复查 9.8 已正常）。",
        "C反应蛋白 86 mg/L（11-26），11-29 降至 32 mg/L。",
        "收缩压由 168 降至 136 mmHg，呈下降趋势。",
        "血钾 5.9 mmol/L，予生理盐水，normal saline 500 mL。",  # a cue inside a name claims nothing
        "血钾未见升高？需复查。若血钾正常则继续观察。",  # denied and hypothetical
        "血钠 124 mmol/L，正常。",  # no sodium was shown: grounding's business, not this check's
        "空腹血糖 4.2 mmol/L，血钾 5.9 mmol/L。",  # each value its own measurement's
        "血钾 5.9 mmol/L，血糖 4.2。",  # 血糖 is not 空腹血糖: no attribution is read
    ],
)
def test_a_status_or_trend_that_agrees_with_the_record_passes(answer):
    assert disagreement(answer) is None


POTASSIUM = [
    {"name": "血钾", "value": {"value": v, "unit": "mmol/L"}, "time": f"2026-11-2{day}", "range": RANGE}
    for day, v in enumerate((5.4, 5.6, 5.5))
]
CREATININE = [
    {
        "name": "肌酐",
        "value": {"value": v, "unit": "µmol/L"},
        "time": f"2026-11-2{day}",
        "range": {"low": 57, "high": 111},
    }
    for day, v in enumerate((120, 150, 138))
]


@pytest.mark.parametrize(
    ("answer", "results"),
    [
        ("血钾 5.4–5.6 mmol/L，基本稳定。", POTASSIUM),  # 5.6 is at the upper limit of 5.5, not past it
        ("Potassium stable around 5.5 mmol/L.", POTASSIUM),
        ("肌酐 120–150 µmol/L，持平。", CREATININE),  # a change under half, all of it past the range
        ("Systolic pressure steady.", SHOWN),  # 168 to 136 mmHg: how much change is stable is left to the reader
        ("白细胞不稳定，需复查。", SHOWN),  # unstable claims no stability
        ("WBC 13.6 → 9.8, patient stable.", SHOWN),  # the patient, not the measurement
        ("血钾 5.9 mmol/L，病情稳定。", SHOWN),
    ],
)
def test_a_series_called_stable_that_was_stable_or_not_a_measurement_passes(answer, results):
    assert disagreement(answer, results) is None


def test_a_series_called_stable_that_moved_clearly_fails():
    moved = [
        {**POTASSIUM[0], "value": {"value": 4.0, "unit": "mmol/L"}},
        {**POTASSIUM[1], "value": {"value": 5.9, "unit": "mmol/L"}},
    ]
    found = disagreement("血钾基本稳定。", moved)
    assert found is not None and "4 mmol/L (2026-11-20; range 3.5–5.5) within the record's range" in found, found
    assert disagreement(
        "肌酐 120–190 µmol/L，持平。",
        [*CREATININE, {**CREATININE[0], "value": {"value": 190, "unit": "µmol/L"}, "time": "2026-11-28"}],
    )


def test_without_either_rule_of_stability_a_moving_series_called_stable_passes(monkeypatch):
    assert disagreement("CRP 稳定。") and disagreement("WBC stable.")
    monkeypatch.setattr(_measures, "STABLE_RATIO", float("inf"))  # CRP 86 to 32: no reading past a range
    assert disagreement("CRP 稳定。") is None and disagreement("WBC stable.")
    monkeypatch.setattr(_measures, "CLEARLY_OUTSIDE", float("inf"))  # WBC 13.6 (past 10) to 9.8
    assert disagreement("WBC stable.") is None


@contextmanager
def read_afresh() -> Iterator[None]:
    """The answers' claims read afresh inside (the cues changed), and again after."""
    _measures.measure_claims.cache_clear()
    try:
        yield
    finally:
        _measures.measure_claims.cache_clear()


@contextmanager
def cues_claiming_nothing(monkeypatch, kind: str) -> Iterator[None]:
    """The measure cues with every cue of ``kind`` claiming nothing, the answers' claims read afresh."""
    real = _measures.measure_cues()
    kinds = {cue: ("none" if k == kind else k) for cue, k in real.kinds.items()}
    monkeypatch.setattr(
        _measures, "measure_cues", lambda: _measures.MeasureCues(real.names, real.words, kinds, real.hypothetical)
    )
    with read_afresh():
        yield


def test_without_the_stable_cues_a_moving_series_called_stable_passes(monkeypatch):
    with cues_claiming_nothing(monkeypatch, "stable"):
        assert disagreement("CRP 稳定。") is None and disagreement("WBC remained stable.") is None


def test_a_record_without_a_range_is_not_judged_by_status():
    unranged = [{"name": "血钾", "value": {"value": 5.9, "unit": "mmol/L"}, "time": "2026-11-28"}]
    assert disagreement("血钾 5.9 mmol/L，正常。", unranged) is None


def test_the_fhir_reference_range_reaches_the_agent_and_the_grader():
    observation = {
        "resourceType": "Observation",
        "id": "o1",
        "code": {"text": "血钾"},
        "valueQuantity": {"value": 5.9, "unit": "mmol/L"},
        "referenceRange": [{"low": {"value": 3.5, "unit": "mmol/L"}, "high": {"value": 5.5, "unit": "mmol/L"}}],
    }
    row = summaries.summarize(observation)
    assert row["range"] == RANGE
    assert [r.status for r in readings(read([row]).named)["血钾"]] == ["high"]


def test_claims_are_read_per_measurement_and_word():
    said = measure_claims("白细胞 13.6 ↑，复查 9.8 已正常；CRP 下降。")
    assert [(s.concept, s.word, s.number and s.number.value) for s in said] == [
        ("白细胞", "value", 13.6),
        ("白细胞", "high", 13.6),
        ("白细胞", "normal", 9.8),
        ("C反应蛋白", "falling", None),
    ]


ABNORMAL_LABS = ROOT / "task_packages" / "superclue" / "SC-IR-ABNORMAL-LABS"


def selftest_failures() -> list[str]:
    return [
        f"{r.kind} {r.case}" for r in asyncio.run(selftest_package(load_package(ABNORMAL_LABS), Images())) if not r.ok
    ]


def test_the_bundled_misread_statuses_trend_and_value_fail_consistent():
    assert selftest_failures() == []  # each counterexample fails as named, the English variant passes


def test_without_the_record_s_range_the_potassium_called_normal_passes(monkeypatch):
    monkeypatch.setattr(summaries, "reference_range", lambda resource: None)  # the range never reaches the record
    # (the English variant's "upper limit of normal of 5.5" is then a value no record showed: ungrounded)
    assert selftest_failures() == ["counterexample potassium-called-normal", "valid variant statuses-in-english"]


def test_without_the_trend_cues_the_reversed_trend_passes(monkeypatch):
    with cues_claiming_nothing(monkeypatch, "rising"):
        assert selftest_failures() == ["counterexample crp-trend-reversed"]


def mutants_of(package_dir: Path, *operators: str) -> list[tuple[str, str, str, str, str]]:
    """(operator, target, note, status, detail) of the package's mutants of these operators."""
    report = asyncio.run(mutation_test(load_package(package_dir), Images()))
    return [
        (r.mutant.operator, r.mutant.target, r.mutant.note, r.status, r.detail)
        for r in report.results
        if r.mutant.operator in operators
    ]


def called_stable() -> list[tuple[str, str, str]]:
    """(target, status, detail) of SC-IR-ABNORMAL-LABS's called-stable mutants."""
    return [(target, status, detail) for _, target, _, status, detail in mutants_of(ABNORMAL_LABS, "called-stable")]


def test_the_called_stable_mutant_names_a_moving_series_and_only_the_consistency_check_rejects_it():
    assert called_stable() == [("白细胞", "rejected", "fails consistent")]  # 13.6 (past 10) to 9.8


def test_without_the_stable_cues_the_called_stable_mutant_survives(monkeypatch):
    with cues_claiming_nothing(monkeypatch, "stable"):
        assert called_stable() == [("白细胞", "survived", "passes")]


EGFR_PACKAGE = ROOT / "task_packages" / "superclue" / "SC-DA-EGFR"
OBESE = ("bmi_calculate", {"weight_kg": 80.2, "height_cm": 168})  # 28.4 kg/m2: 肥胖 by WS/T 428-2013
G3B = ("egfr_calculate", {"creatinine": 156, "unit": "µmol/L", "age": 66, "sex": "male"})  # 42: G3b
G2 = ("egfr_calculate", {"creatinine": 90, "unit": "µmol/L", "age": 66, "sex": "male"})  # 81: G2


def consistent_after(call: tuple[str, dict], answer: str):
    """answer.consistent on a trial that made one calculator call (the patient of SC-DA-EGFR) and gave the answer."""
    package = load_package(EGFR_PACKAGE)
    ctx = trial(package, Images()[package], [call], answer=answer)
    return answer_kinds.consistent(ctx, answer_kinds.ConsistentParams())


@pytest.mark.parametrize(
    ("call", "answer", "named"),
    [
        (
            OBESE,
            "BMI 28.4 kg/m²，正常。",
            "says BMI '正常' ('BMI 28.4 kg/m2,正常。'), but 28.4 kg/m2 (range 18.5–23.9) is high",
        ),
        (OBESE, "Body mass index 28.4, within normal limits.", "says BMI 'within normal limits'"),
        (
            G3B,
            "eGFR 42 mL/min/1.73m²，肾功能正常。",
            "says 估算肾小球滤过率 '正常' ('eGFR 42 mL/min/1.73m2,肾功能正常。'), but 42",
        ),
        (G3B, "eGFR 42, normal.", "says 估算肾小球滤过率 'normal'"),
    ],
)
def test_a_status_the_calculator_s_standard_contradicts_fails_named(call, answer, named):
    outcome = consistent_after(call, answer)
    assert not outcome.passed and outcome.reason.startswith(named), outcome.reason


@pytest.mark.parametrize(
    ("call", "answer"),
    [
        (OBESE, "BMI 28.4 kg/m²，偏高，属肥胖（WS/T 428-2013）；正常范围 18.5–23.9。"),
        (G3B, "eGFR 42 mL/min/1.73m²，CKD 分期 G3b（中至重度下降），肾功能减退。"),
        (G3B, "eGFR 42, decreased."),
        (G2, "eGFR 81 mL/min/1.73m²，肾功能正常。"),  # G2: normal for many an older patient, not judged
        (G2, "eGFR 81, mildly decreased."),
    ],
)
def test_a_status_the_calculator_s_standard_allows_passes(call, answer):
    outcome = consistent_after(call, answer)
    assert outcome.passed, outcome.reason


def test_without_the_calculators_results_a_bmi_called_normal_passes(monkeypatch):
    assert not consistent_after(OBESE, "BMI 28.4 kg/m²，正常。").passed
    monkeypatch.setattr(answer_kinds, "computed_records", lambda results: [])  # the results never reach the check
    assert consistent_after(OBESE, "BMI 28.4 kg/m²，正常。").passed


PROTOCOL = {"id": "LUNG-EGFR-202", "criteria": [{"id": "I4", "text": "ANC ≥ 1.5 ×10^9/L within 14 days"}]}
ANC = {"name": "中性粒细胞绝对计数", "value": {"value": 4.2, "unit": "10^9/L"}, "time": "2026-11-27"}
SERIES = {
    "name": "心率",
    "unit": "/min",
    "first": {"time": "2026-11-28", "value": 84},
    "last": {"time": "2026-11-29", "value": 104},
    "min": {"time": "2026-11-28", "value": 84},
    "max": {"time": "2026-11-29", "value": 104},
    "mean": 95.5,
}


RIGHT_AFTER = re.compile(r"[\s:：=]*")
"""Linking words taken away: a value is read as given for a measurement only right after its name."""
CONDITIONAL = [
    "如血钾升至 6.4 mmol/L，立即停药。",  # a value linked by words, in a hypothetical or denied clause
    "If the ANC is 1.5 ×10^9/L at the next count, hold the dose.",
    "未见血钾升至 6.4 mmol/L。",
]


@pytest.mark.parametrize(
    ("answer", "named"),
    [
        ("ANC 1.5 ×10^9/L, eligible.", "says 中性粒细胞绝对计数 '1.5 ×10^9/L' ('ANC 1.5 ×10^9/L, eligible.'), but the"),
        ("中性粒细胞计数 1.5，符合入组。", "says 中性粒细胞绝对计数 '1.5'"),  # bare: read in the record's unit
        ("Potassium 6.4 mmol/L.", "says 血钾 '6.4 mmol/L' ('Potassium 6.4 mmol/L.'), but the 血钾 shown is 5.9 mmol/L"),
        ("Heart rate 120 /min.", "says 心率 '120 /min'"),
        ("The ANC was within range at 1.5 ×10^9/L.", "says 中性粒细胞绝对计数 '1.5 ×10^9/L'"),  # linked words
        ("中性粒细胞计数目前为 1.5，符合入组。", "says 中性粒细胞绝对计数 '1.5'"),
        ("Potassium level was elevated at 6.4 mmol/L.", "says 血钾 '6.4 mmol/L'"),
        ("心率升至 120 /min。", "says 心率 '120 /min'"),  # a trend word naming the value reached
        ("Heart rate rose to 120 /min.", "says 心率 '120 /min'"),
        ("ANC (1.5 ×10^9/L) allows enrolment.", "says 中性粒细胞绝对计数 '1.5 ×10^9/L'"),  # in brackets
        ("血钾（6.4 mmol/L）需复查。", "says 血钾 '6.4 mmol/L'"),
    ],
)
def test_a_value_none_of_the_measurement_s_readings_shown_is_fails_named(answer, named):
    """The threshold 1.5 was returned by a call (the protocol), so the grounding check alone passes "ANC 1.5": the
    patient's ANC shown is 4.2."""
    found = disagreement(answer, [*SHOWN, PROTOCOL, ANC, SERIES])
    assert found is not None and found.startswith(named), found


@pytest.mark.parametrize(
    "answer",
    [
        "ANC 4.2 ×10^9/L; ANC 4200/µL; ANC 4.",  # as shown, converted, rounded
        "中性粒细胞绝对计数 ≥ 1.5 ×10^9/L 方可入组，本例 4.2。",  # a threshold
        "Potassium 5.9 mmol/L (6 when rounded): potassium 6 mmol/L.",
        "Heart rate 84-104 /min, mean heart rate 95.5 /min.",  # a range of readings, and the series' mean
        "eGFR 30-44 剂量减半。",  # a band of a rule, not a reading
        "血钾 106 mg/dL。",  # a unit that cannot be converted into the reading's: left to the grounding check
        "血钠 124 mmol/L。",  # no sodium shown: the grounding check's business
        "The ANC was within range at 4.2 ×10^9/L; heart rate rose to 104 /min.",  # linked, and readings
        "ANC (4.2 ×10^9/L) allows enrolment; ANC (normal 1.5–7.0) is not the question.",  # a reading, a band
        "心率上升 20 /min。",  # a change, not a value reached
        "ANC well above the protocol's minimum of 1.5.",  # words that link no value
        "ANC, which the protocol requires to be 1.5 or more, is 4.2.",  # a threshold, and a comma
        "ANC 4.2, the protocol asks 1.5.",  # another number between
        *CONDITIONAL,
    ],
)
def test_a_value_that_is_a_reading_or_no_reading_passes(answer):
    assert disagreement(answer, [*SHOWN, PROTOCOL, ANC, SERIES]) is None


def test_without_the_linking_words_a_value_linked_to_its_measurement_by_words_passes(monkeypatch):
    answer = "The ANC was within range at 1.5 ×10^9/L."
    assert disagreement(answer, [PROTOCOL, ANC])
    monkeypatch.setattr(_measures, "linked", lambda: RIGHT_AFTER)
    with read_afresh():
        assert disagreement(answer, [PROTOCOL, ANC]) is None


@pytest.mark.parametrize("answer", CONDITIONAL)
def test_without_the_conditional_rule_a_hypothetical_or_denied_linked_value_fails(monkeypatch, answer):
    monkeypatch.setattr(_measures, "conditional", lambda *span: False)
    with read_afresh():
        assert disagreement(answer, [*SHOWN, PROTOCOL, ANC])


def test_without_the_readings_compared_a_threshold_given_as_the_patient_s_value_passes(monkeypatch):
    assert disagreement("ANC 1.5 ×10^9/L.", [PROTOCOL, ANC])
    monkeypatch.setattr(_measures, "same_number", lambda *numbers: True)  # every value taken for a reading
    assert disagreement("ANC 1.5 ×10^9/L.", [PROTOCOL, ANC]) is None


ELIGIBLE = ROOT / "task_packages" / "forge-nsclc" / "TP-ELIGIBLE-v1"


def elsewhere() -> list[tuple[str, str, str, str]]:
    """(operator, note, status, detail) of TP-ELIGIBLE-v1's mutants giving a value from elsewhere."""
    found = mutants_of(ELIGIBLE, "value-from-elsewhere", "value-linked-from-elsewhere")
    return [(operator, note, status, detail) for operator, _, note, status, detail in found]


def test_the_value_from_elsewhere_mutants_give_a_protocol_threshold_and_only_the_consistency_check_rejects_them():
    """The gold's "ANC 4.2" becomes "ANC 1.5", the threshold LUNG-EGFR-202's protocol wrote, and "ANC is currently
    1.5": grounded, not the patient's."""
    assert elsewhere() == [
        ("value-from-elsewhere", "answer gives 1.5", "rejected", "fails consistent"),
        ("value-linked-from-elsewhere", "answer gives is currently 1.5", "rejected", "fails consistent"),
    ]


def test_with_every_value_taken_for_a_reading_the_value_from_elsewhere_mutants_survive(monkeypatch):
    monkeypatch.setattr(_measures, "same_number", lambda *numbers: True)
    assert [status for _, _, status, _ in elsewhere()] == ["survived", "survived"]


def test_without_the_linking_words_the_linked_value_from_elsewhere_mutant_survives(monkeypatch):
    monkeypatch.setattr(_measures, "linked", lambda: RIGHT_AFTER)
    with read_afresh():
        found = elsewhere()
    assert [(operator, status) for operator, _, status, _ in found] == [
        ("value-from-elsewhere", "rejected"),
        ("value-linked-from-elsewhere", "survived"),
    ]
