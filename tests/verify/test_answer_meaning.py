"""Answers judged by meaning: negation and synonyms in answer.text, amounts and candidate values in answer.number,
typed matchers in answer.field. Each mechanism is shown rejecting what it guards against and accepting valid
alternatives."""

from __future__ import annotations

import pytest

from forge_kernel.ehr import EHRImage
from forge_kernel.spec import SpecError, VerifierUse
from forge_kernel.verify import bind
from tests.verify import test_verify
from tests.verify.test_verify import check, trial

med = test_verify.med  # a fixture: pytest finds it by this name


def said(med, answer="", output=None):
    return trial(med, EHRImage([], med.public.environment.now), [], answer=answer, output=output)


# --- answer.text: negation ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer, keyword, passed",
    [
        ("阿司匹林已停用。", "停用", True),
        ("阿司匹林未停用，仍在服用。", "停用", False),
        ("阿司匹林没有停用", "停用", False),
        ("患者否认高血压、糖尿病病史", "糖尿病", False),
        ("术前 7 天停药", "停药", True),
        ("出现不良反应后已停用", "停用", True),  # 不良 is no negation
        ("非小细胞肺癌 IVA 期", "肺癌", True),  # nor is 非小细胞
        ("Obese (BMI 31).", "obese", True),
        ("The patient is not obese.", "obese", False),
        ("non-obese", "obese", False),
        ("No fever or cough.", "cough", False),
        ("Not on warfarin, takes aspirin daily.", "aspirin", True),  # the comma ends the negation
        ("Pulmonary embolism was ruled out.", "pulmonary embolism", False),
        ("Pulmonary embolism cannot be ruled out.", "pulmonary embolism", True),
        ("肺栓塞已排除", "肺栓塞", False),
        ("不排除肺栓塞", "肺栓塞", True),
        ("Not due yet, but the dressing is soaked.", "soaked", True),  # "but" ends it
    ],
)
def test_a_keyword_counts_only_where_it_is_affirmed(med, answer, keyword, passed):
    outcome = check(said(med, answer), "answer.text", all=[keyword])
    assert outcome.passed is passed, outcome.reason


def test_a_denied_keyword_is_named_in_the_reason(med):
    outcome = check(said(med, "未停用"), "answer.text", all=["停用"])
    assert outcome.reason == "keyword missing: 停用 (only denied)"


def test_a_keyword_may_be_a_list_of_synonyms(med):
    params = {"all": [["停用", "停药", "stopped"], "阿司匹林"]}
    assert check(said(med, "阿司匹林：术前停药。"), "answer.text", **params).passed
    assert check(said(med, "阿司匹林 stopped on 11-23"), "answer.text", **params).passed
    outcome = check(said(med, "阿司匹林仍在服用"), "answer.text", **params)
    assert not outcome.passed and outcome.reason == "keyword missing: 停用 / 停药 / stopped"
    assert check(said(med, "stopped"), "answer.text", any=[["停药", "stopped"], "暂停"]).passed


def test_a_forbidden_phrase_fails_only_where_it_is_affirmed(med):
    params = {"none": ["ordered", "已申请"]}
    assert not check(said(med, "Replacement ordered."), "answer.text", **params).passed
    assert not check(said(med, "已申请更换"), "answer.text", **params).passed
    assert check(said(med, "Nothing was ordered: not due."), "answer.text", **params).passed
    assert check(said(med, "未申请，暂不更换"), "answer.text", **params).passed


def test_without_negation_a_topic_word_counts_denied_or_not(med):
    answer = "Data insufficient: no usable height on record."
    assert not check(said(med, answer), "answer.text", any=["height"]).passed
    assert check(said(med, answer), "answer.text", any=["height"], negation=False).passed


@pytest.mark.parametrize(
    "answer, keyword, passed",
    [
        ("血钾 5.9 mmol/L", "5.9", True),
        ("血钾 15.9 mmol/L", "5.9", False),
        ("血钾 5.95 mmol/L", "5.9", False),
        ("62.0 -> 56.4 kg", "62", True),
        ("620 kg", "62", False),
        ("奥美拉唑 20mg qd", "20 mg", True),
        ("Child-Pugh B 级", "B级", True),
        ("ＢＭＩ ２８．４", "bmi 28.4", True),  # full-width, any case  # noqa: RUF001
        ("an inappropriate response", "appropriate", False),
        ("decreasing steadily", "decreas", True),
    ],
)
def test_keywords_match_as_words_and_numbers_not_inside_longer_ones(med, answer, keyword, passed):
    assert check(said(med, answer), "answer.text", all=[keyword]).passed is passed


# --- answer.number -----------------------------------------------------------------------------------------------


def test_an_answer_offering_several_candidate_values_fails(med):
    params = {"value": 28.4, "tol": 0.1, "unit": "kg/m²"}
    assert check(said(med, "BMI 28.4 kg/m²（身高 168 cm，体重 80.2 kg）"), "answer.number", **params).passed
    outcome = check(said(med, "BMI 26.0 kg/m²、28.4 kg/m² 或 31.2 kg/m²"), "answer.number", **params)
    assert not outcome.passed and outcome.reason.startswith("several candidate values: 28.4 and 26")
    assert not check(said(med, "BMI 28.4 或 29.0"), "answer.number", value=28.4, tol=0.1).passed
    assert check(said(med, "BMI 28.4（约 28.4）"), "answer.number", value=28.4, tol=0.1).passed  # the same value twice


def test_the_unit_picks_the_candidates_and_thresholds_are_not_values(med):
    answer = "收缩压 84 mmHg，心率 128 次/分；收缩压 < 90 mmHg 提示休克"
    assert check(said(med, answer), "answer.number", value=84, unit="mmHg").passed
    assert not check(said(med, "收缩压 84 mmHg，复测 96 mmHg"), "answer.number", value=84, unit="mmHg").passed
    assert not check(said(med, answer), "answer.number", value=84).passed  # no unit: 128 is a candidate too
    threshold = "The cannula has been in for 48 h; the rule allows up to 96 h (more than 72 h: check daily)."
    assert check(said(med, threshold), "answer.number", value=48, tol=1, unit="h").passed


def test_another_unit_of_the_dimension_matches_only_when_convertible(med):
    ctx = said(med, "二甲双胍 0.5 g bid")
    assert check(ctx, "answer.number", value=500, unit="mg", convertible=True).passed
    outcome = check(ctx, "answer.number", value=500, unit="mg")
    assert not outcome.passed and "no number within 500" in outcome.reason
    assert check(said(med, "二甲双胍 500mg bid"), "answer.number", value=500, unit="mg").passed
    assert not check(said(med, "二甲双胍 5 mL"), "answer.number", value=500, unit="mg", convertible=True).passed


def test_a_pattern_scopes_the_candidates_and_reads_the_unit_after_them(med):
    answer = "eGFR 38 mL/min/1.73m² (58 in May, 49 in August)"
    assert check(said(med, answer), "answer.number", value=38, pattern=r"eGFR\D{0,8}(\d+)").passed
    assert not check(said(med, answer), "answer.number", value=38, tol=0.5).passed
    grams = check(
        said(med, "剂量 0.5 g"),
        "answer.number",
        value=500,
        unit="mg",
        convertible=True,
        pattern=r"剂量\s*(\d+(?:\.\d+)?)",
    )
    assert grams.passed


@pytest.mark.parametrize(
    "answer, passed",
    [
        ("阴离子间隙 28.5 mmol/L 升高，Δ比值 1.14", True),
        ("阴离子间隙 28.5 mmol/L 或 35.6 mmol/L", False),
        ("阴离子间隙 28.5 或者 31.0", False),
        ("anion gap 28.5 or 35.6 mmol/L", False),
        ("阴离子间隙 28.5、30.1、32.4 mmol/L", False),
    ],
)
def test_values_offered_as_alternatives_where_a_pattern_reads_are_candidates_too(med, answer, passed):
    pattern = r"(?:阴离子间隙|anion gap)[^0-9]{0,8}?(\d+(?:\.\d+)?)"
    assert check(said(med, answer), "answer.number", value=28.5, tol=0.2, pattern=pattern).passed is passed


def test_an_ascii_arrow_is_no_threshold(med):
    assert check(
        said(med, "Weight 62.0 -> 56.4 kg"), "answer.number", value=56.4, tol=0.05, pattern=r"->\s*(\d+(?:\.\d+)?)"
    ).passed
    assert not check(
        said(med, "Weight 62.0 > 56.4 kg"), "answer.number", value=56.4, tol=0.05, pattern=r">\s*(\d+(?:\.\d+)?)"
    ).passed


# --- answer.field: typed matchers --------------------------------------------------------------------------------


def field(med, output, **params):
    return check(said(med, output=output), "answer.field", **params)


def test_a_number_field_with_unit_and_tolerance(med):
    number = {"value": 28.4, "tol": 0.1, "unit": "kg/m²"}
    for good in (28.4, "28.4 kg/m²", {"value": 28.45, "unit": "kg/m²"}):
        assert field(med, {"bmi": good}, path="bmi", number=number).passed, good
    for bad in (29.0, "28.4 或 31.0", [28.4, 31.0], "n/a", True):
        assert not field(med, {"bmi": bad}, path="bmi", number=number).passed, bad
    several = field(med, {"bmi": [28.4, 31.0]}, path="bmi", number=number)
    assert several.reason == "output.bmi: several candidate values: 28.4 and 31 kg/m²"
    dose = {"value": 500, "unit": "mg", "convertible": True}
    assert field(med, {"dose": "0.5 g"}, path="dose", number=dose).passed
    assert not field(med, {"dose": "0.5 g"}, path="dose", number={"value": 500, "unit": "mg"}).passed


def test_a_date_field_with_tolerance_in_days(med):
    assert field(med, {"stopped": "2026-11-23"}, path="stopped", date={"value": "2026-11-23"}).passed
    assert field(med, {"stopped": "2026年11月23日"}, path="stopped", date={"value": "2026-11-23"}).passed
    assert field(
        med, {"stopped": "2026-11-24T08:00:00+08:00"}, path="stopped", date={"value": "2026-11-23", "tol_days": 1}
    ).passed
    assert not field(med, {"stopped": "2026-11-25"}, path="stopped", date={"value": "2026-11-23", "tol_days": 1}).passed
    assert not field(med, {"stopped": "11月23日"}, path="stopped", date={"value": "2026-11-23"}).passed  # no year
    assert not field(
        med, {"stopped": ["2026-11-23", "2026-10-01"]}, path="stopped", date={"value": "2026-11-23"}
    ).passed


def test_choice_and_boolean_fields(med):
    assert field(med, {"eligibility": "Ineligible"}, path="eligibility", choice=["ineligible"]).passed
    assert not field(med, {"eligibility": "eligible"}, path="eligibility", choice=["ineligible"]).passed
    assert field(med, {"in_scope": False}, path="in_scope", boolean=False).passed
    for bad in ("false", 0, None, True):
        assert not field(med, {"in_scope": bad}, path="in_scope", boolean=False).passed, bad
    assert not field(med, {"level": True}, path="level", choice=[1]).passed  # a boolean is not the number 1


def test_a_list_field_as_a_set_or_by_what_it_contains(med):
    meds = {"medications": ["amlodipine", "二甲双胍片 0.5 g bid", "阿托伐他汀"]}
    exactly = {"equals": ["氨氯地平", "二甲双胍", ["阿托伐他汀", "atorvastatin"]]}
    assert field(med, meds, path="medications", items=exactly).passed  # any order, drug aliases, longer texts
    missing = field(med, meds, path="medications", items={"equals": ["氨氯地平", "二甲双胍", "阿托伐他汀", "阿卡波糖"]})
    assert not missing.passed and "missing item(s): 阿卡波糖" in missing.reason
    extra = field(med, meds, path="medications", items={"equals": ["氨氯地平", "二甲双胍"]})
    assert not extra.passed and "not expected: 阿托伐他汀" in extra.reason
    assert field(med, meds, path="medications", items={"contains": ["metformin"]}).passed
    assert not field(med, meds, path="medications", items={"contains": ["metformin"], "none": ["atorvastatin"]}).passed


def test_a_text_field_with_negation_and_synonyms(med):
    text = {"all": [["停用", "stopped"]]}
    assert field(med, {"status": "已停用"}, path="status", text=text).passed
    assert not field(med, {"status": "未停用"}, path="status", text=text).passed


def test_a_path_selects_list_items_by_a_key(med):
    output = {
        "assessments": [
            {"protocol_id": "LUNG-IO-301", "protocol_version": "2.0", "eligibility": "ineligible"},
            {"protocol_id": "LUNG-EGFR-202", "protocol_version": "1.0", "eligibility": "eligible"},
        ]
    }
    assert not field(med, output, path="assessments.eligibility", choice=["eligible"]).passed  # every value judged
    assert field(med, output, path="assessments.eligibility", match={"equals": "eligible"}).passed  # any value
    assert field(med, output, path="assessments[protocol_id=LUNG-EGFR-202].eligibility", choice=["eligible"]).passed
    assert field(med, output, path="assessments[protocol_version=2.0].eligibility", choice=["ineligible"]).passed
    absent = field(med, output, path="assessments[protocol_id=LUNG-KRAS-105].eligibility", choice=["eligible"])
    assert not absent.passed and "absent" in absent.reason


@pytest.mark.parametrize(
    "params, where",
    [
        ({"path": "a"}, "verifiers.v.params"),
        ({"path": "a", "boolean": True, "choice": ["x"]}, "verifiers.v.params"),
        ({"path": "a[b]", "boolean": True}, "verifiers.v.params.path"),
        ({"path": "a", "date": {"value": "not a date"}}, "verifiers.v.params.date.value"),
        ({"path": "a", "number": {"value": 1, "tol": -1}}, "verifiers.v.params.number.tol"),
    ],
)
def test_bad_field_params_are_spec_errors(params, where):
    with pytest.raises(SpecError) as err:
        bind(VerifierUse(id="v", kind="answer.field", category="answer", params=params), "verifiers/x/T.yaml")
    assert err.value.field.startswith(where)
