"""Calculator tools against published worked examples, their boundaries and bad input (synthetic data only).

Every expected value below was also worked by hand; the arithmetic is in the comment next to it.
"""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from forge_kernel.ehr import EHRImage, EHRView, fhir
from forge_kernel.spec import TaskPackage
from forge_kernel.tools import TOOLS, ToolError, ToolSession

NOW = "2026-11-30T09:00:00+08:00"


def calc(name: str, **args) -> dict:
    """Validate the arguments as the tool session does, then run the calculator."""
    tool = TOOLS[name]
    return tool.run(None, tool.args_model.model_validate(args))


# --- BMI: WS/T 428-2013 (China, adults): < 18.5 underweight, 18.5-23.9 normal, 24.0-27.9 overweight, >= 28 obese ---


def test_bmi_worked_example_is_obese_by_the_chinese_criteria():
    # 80.2 / 1.68^2 = 80.2 / 2.8224 = 28.42 -> 28.4: obese by WS/T 428 (>= 28), only overweight by WHO (25-29.9).
    r = calc("bmi_calculate", weight_kg=80.2, height_cm=168)
    assert (r["bmi"], r["category"], r["category_zh"], r["vs_normal"]) == (28.4, "obese", "肥胖", "above")
    assert "WS/T 428" in r["standard"]
    # Normal weight at 1.68 m: 18.5 x 2.8224 = 52.21 (rounded up 52.3), 23.9 x 2.8224 = 67.45 (rounded down 67.4).
    assert r["normal_weight_kg"] == [52.3, 67.4]


@pytest.mark.parametrize(
    ("weight", "category"),
    [
        # Height 100 cm makes BMI equal the weight; classification uses the BMI as reported (one decimal).
        (18.4, "underweight"),
        (18.5, "normal"),
        (23.94, "normal"),
        (23.96, "overweight"),
        (27.9, "overweight"),
        (28.0, "obese"),
    ],
)
def test_bmi_category_boundaries(weight, category):
    assert calc("bmi_calculate", weight_kg=weight, height_cm=100)["category"] == category


def test_bmi_underweight_and_its_normal_weight_range():
    # 44 / 1.6^2 = 44 / 2.56 = 17.19 -> 17.2, below 18.5; normal weight 18.5 x 2.56 = 47.36 -> 47.4 (up) to
    # 23.9 x 2.56 = 61.18 -> 61.1 (down).
    r = calc("bmi_calculate", weight_kg=44, height_cm=160)
    assert (r["bmi"], r["category"], r["vs_normal"], r["normal_weight_kg"]) == (
        17.2,
        "underweight",
        "below",
        [47.4, 61.1],
    )


@pytest.mark.parametrize(
    "args",
    [
        {"weight_kg": 0, "height_cm": 170},
        {"weight_kg": 70, "height_cm": 1.7},
        {"weight_kg": -5, "height_cm": 170},
        {"weight_kg": 70},
        {"weight_kg": 70, "height_cm": 170, "age": 40},
    ],
)
def test_bmi_bad_input_is_refused(args):
    with pytest.raises(ValidationError):
        calc("bmi_calculate", **args)


# --- eGFR: CKD-EPI 2021 (Inker et al., NEJM 2021;385:1737-49), race-free ---------------------------------------------


@pytest.mark.parametrize(
    ("creatinine", "unit", "age", "sex", "egfr", "stage"),
    [
        # NKF CKD-EPI 2021 calculator values (as quoted by pharmaverse/admiral's tests), checked by hand:
        # 1.09 mg/dL, 55 M: 142 x (1.09/0.9)^-1.200 x 0.9938^55 = 142 x 0.7947 x 0.7103 = 80.2 -> 80.
        (1.09, "mg/dL", 55, "male", 80, "G2"),
        # 85 umol/L = 0.9615 mg/dL, 65 F: 142 x (0.9615/0.7)^-1.200 x 0.9938^65 x 1.012 = 142 x 0.6832 x 0.6675 x 1.012
        # = 65.5 -> 66.
        (85, "umol/L", 65, "female", 66, "G2"),
        # kidney.org example 1.2 mg/dL, 55 M: 142 x (1.2/0.9)^-1.200 x 0.9938^55 = 142 x 0.7081 x 0.7103 = 71.4 -> 71.
        (1.2, "mg/dL", 55, "male", 71, "G2"),
        # Below kappa the alpha branch applies: 0.6 mg/dL, 30 F: 142 x (0.6/0.7)^-0.241 x 0.9938^30 x 1.012
        # = 142 x 1.0379 x 0.8298 x 1.012 = 123.8 -> 124.
        (0.6, "mg/dL", 30, "female", 124, "G1"),
        # SC-DA-EGFR: 156 umol/L = 1.765 mg/dL, 66 M: 142 x (1.765/0.9)^-1.200 x 0.9938^66 = 142 x 0.4457 x 0.6633
        # = 42.0 -> 42.
        (156, "µmol/L", 66, "male", 42, "G3b"),
        # 800 umol/L = 9.05 mg/dL, 70 M: 142 x (9.05/0.9)^-1.200 x 0.9938^70 = 142 x 0.0627 x 0.6471 = 5.8 -> 6.
        (800, "μmol/L", 70, "male", 6, "G5"),
    ],
)
def test_egfr_worked_examples(creatinine, unit, age, sex, egfr, stage):
    r = calc("egfr_calculate", creatinine=creatinine, unit=unit, age=age, sex=sex)
    assert (r["egfr"], r["stage"]) == (egfr, stage)
    assert r["equation"].startswith("CKD-EPI 2021")


def test_egfr_unit_spellings_agree():
    values = {
        calc("egfr_calculate", creatinine=156, unit=u, age=66, sex="male")["egfr"]
        for u in ("umol/L", "µmol/L", "μmol/L")
    }
    assert values == {42}


def test_egfr_stage_is_read_from_the_reported_whole_number():
    # 1.34 mg/dL, 63 M: 142 x (1.34/0.9)^-1.200 x 0.9938^63 = 142 x 0.6203 x 0.6758 = 59.5, reported 60: G2, not G3a.
    r = calc("egfr_calculate", creatinine=1.34, unit="mg/dL", age=63, sex="male")
    assert r["egfr"] == 60 and r["stage"] == "G2"


@pytest.mark.parametrize(
    "args",
    [
        {"creatinine": 1.0, "unit": "mg/dL", "age": 17, "sex": "male"},  # adults only
        {"creatinine": 1.0, "unit": "mg/dL", "age": 50, "sex": "unknown"},
        {"creatinine": 0, "unit": "mg/dL", "age": 50, "sex": "male"},
        {"creatinine": 1.0, "unit": "mmol/L", "age": 50, "sex": "male"},
    ],
)
def test_egfr_bad_arguments_are_refused(args):
    with pytest.raises(ValidationError):
        calc("egfr_calculate", **args)


@pytest.mark.parametrize(("creatinine", "unit"), [(156, "mg/dL"), (1.2, "umol/L")])
def test_egfr_refuses_a_creatinine_that_only_makes_sense_in_the_other_unit(creatinine, unit):
    with pytest.raises(ToolError) as err:
        calc("egfr_calculate", creatinine=creatinine, unit=unit, age=60, sex="male")
    assert err.value.code == "invalid_args" and "unit" in err.value.message


# --- Child-Pugh (Pugh et al., Br J Surg 1973;60:646-9) ----------------------------------------------------------------


def test_child_pugh_worked_example():
    # SC-DA-CHILD-PUGH: bilirubin 45.6 umol/L (34.2-51.3) 2, albumin 29 g/L (28-35) 2, INR 1.9 (1.7-2.3) 2,
    # mild ascites 2, no encephalopathy 1 -> 9, class B (7-9).
    r = calc(
        "child_pugh_score",
        bilirubin=45.6,
        bilirubin_unit="µmol/L",
        albumin=29,
        albumin_unit="g/L",
        inr=1.9,
        ascites="mild",
        encephalopathy="none",
    )
    assert r["points"] == {"bilirubin": 2, "albumin": 2, "inr": 2, "ascites": 2, "encephalopathy": 1}
    assert (r["total"], r["class"]) == (9, "B")


@pytest.mark.parametrize(
    ("args", "total", "grade"),
    [
        (
            {
                "bilirubin": 1.0,
                "bilirubin_unit": "mg/dL",
                "albumin": 4.0,
                "albumin_unit": "g/dL",
                "inr": 1.0,
                "ascites": "none",
                "encephalopathy": "none",
            },
            5,
            "A",
        ),
        (
            {
                "bilirubin": 5.0,
                "bilirubin_unit": "mg/dL",
                "albumin": 2.0,
                "albumin_unit": "g/dL",
                "inr": 3.0,
                "ascites": "moderate_severe",
                "encephalopathy": "grade_3_4",
            },
            15,
            "C",
        ),
        # 1 + 1 + 1 + 2 + 1 = 6: still A; one more point (INR 1.7) makes 7, B.
        ({"bilirubin": 20, "albumin": 40, "inr": 1.2, "ascites": "mild", "encephalopathy": "none"}, 6, "A"),
        ({"bilirubin": 20, "albumin": 40, "inr": 1.7, "ascites": "mild", "encephalopathy": "none"}, 7, "B"),
        # 2 + 2 + 2 + 2 + 2 = 10: C.
        ({"bilirubin": 40, "albumin": 30, "inr": 2.0, "ascites": "mild", "encephalopathy": "grade_1_2"}, 10, "C"),
    ],
)
def test_child_pugh_totals_and_classes(args, total, grade):
    r = calc("child_pugh_score", **args)
    assert (r["total"], r["class"]) == (total, grade)


@pytest.mark.parametrize(
    ("item", "args", "points"),
    [
        # Bilirubin < 2 mg/dL (34.2 umol/L) 1, 2-3 (34.2-51.3) 2, > 3 3.
        ("bilirubin", {"bilirubin": 1.99, "bilirubin_unit": "mg/dL"}, 1),
        ("bilirubin", {"bilirubin": 2.0, "bilirubin_unit": "mg/dL"}, 2),
        ("bilirubin", {"bilirubin": 3.0, "bilirubin_unit": "mg/dL"}, 2),
        ("bilirubin", {"bilirubin": 3.01, "bilirubin_unit": "mg/dL"}, 3),
        ("bilirubin", {"bilirubin": 34.1}, 1),
        ("bilirubin", {"bilirubin": 34.2}, 2),
        ("bilirubin", {"bilirubin": 51.3}, 2),
        ("bilirubin", {"bilirubin": 51.4}, 3),
        # Albumin > 3.5 g/dL (35 g/L) 1, 2.8-3.5 2, < 2.8 3.
        ("albumin", {"albumin": 35.1}, 1),
        ("albumin", {"albumin": 35}, 2),
        ("albumin", {"albumin": 28}, 2),
        ("albumin", {"albumin": 27.9}, 3),
        ("albumin", {"albumin": 3.5, "albumin_unit": "g/dL"}, 2),
        # INR < 1.7 1, 1.7-2.3 2, > 2.3 3.
        ("inr", {"inr": 1.69}, 1),
        ("inr", {"inr": 1.7}, 2),
        ("inr", {"inr": 2.3}, 2),
        ("inr", {"inr": 2.31}, 3),
    ],
)
def test_child_pugh_item_boundaries(item, args, points):
    base = {"bilirubin": 20, "albumin": 40, "inr": 1.0, "ascites": "none", "encephalopathy": "none"}
    assert calc("child_pugh_score", **(base | args))["points"][item] == points


@pytest.mark.parametrize(
    "bad", [{"ascites": "severe"}, {"encephalopathy": "grade_2"}, {"inr": 0}, {"albumin_unit": "mg/dL"}]
)
def test_child_pugh_bad_input_is_refused(bad):
    base = {"bilirubin": 20, "albumin": 40, "inr": 1.0, "ascites": "none", "encephalopathy": "none"}
    with pytest.raises(ValidationError):
        calc("child_pugh_score", **(base | bad))


# --- Wells score for PE (Wells et al., Thromb Haemost 2000;83:416-20) -------------------------------------------------


@pytest.mark.parametrize(
    ("items", "total", "three", "two"),
    [
        # SC-DA-WELLS: DVT signs 3 + PE most likely 3 + HR > 100 1.5 + surgery in 4 weeks 1.5 = 9.0: high (> 6),
        # likely (> 4).
        (
            ["clinical_signs_dvt", "pe_most_likely", "heart_rate_over_100", "immobilization_or_recent_surgery"],
            9.0,
            "high",
            "PE likely",
        ),
        ([], 0.0, "low", "PE unlikely"),
        (["heart_rate_over_100"], 1.5, "low", "PE unlikely"),  # < 2 low
        (["hemoptysis", "malignancy"], 2.0, "moderate", "PE unlikely"),  # 2 is moderate
        (["clinical_signs_dvt", "hemoptysis"], 4.0, "moderate", "PE unlikely"),  # <= 4 unlikely
        (["clinical_signs_dvt", "previous_dvt_or_pe"], 4.5, "moderate", "PE likely"),  # > 4 likely
        (
            ["clinical_signs_dvt", "heart_rate_over_100", "previous_dvt_or_pe"],
            6.0,
            "moderate",
            "PE likely",
        ),  # 6 moderate
        (["pe_most_likely", "heart_rate_over_100", "hemoptysis", "malignancy"], 6.5, "high", "PE likely"),  # > 6 high
        (
            [
                "clinical_signs_dvt",
                "pe_most_likely",
                "heart_rate_over_100",
                "immobilization_or_recent_surgery",
                "previous_dvt_or_pe",
                "hemoptysis",
                "malignancy",
            ],
            12.5,
            "high",
            "PE likely",
        ),  # 3 + 3 + 1.5 x 3 + 1 + 1
    ],
)
def test_wells_totals_and_tiers(items, total, three, two):
    r = calc("wells_score", **{item: True for item in items})
    assert (r["total"], r["three_tier"], r["two_tier"]) == (total, three, two)
    assert sorted(r["items"]) == sorted(items)


def test_wells_unknown_item_is_refused():
    with pytest.raises(ValidationError):
        calc("wells_score", leg_pain=True)


# --- Blood gas: normal pH 7.35-7.45, PaCO2 35-45 mmHg, HCO3 22-26 mmol/L ----------------------------------------------
# Compensation rules as in Narins & Emmett, Medicine 1980;59:161-87: metabolic acidosis, Winter's formula
# PaCO2 = 1.5 x HCO3 + 8 +/- 2 (Albert, Dell & Winters, Ann Intern Med 1967;66:312-22); metabolic alkalosis
# PaCO2 = 0.7 x HCO3 + 21 +/- 2; respiratory: HCO3 +1 (acute) / +3.5 (chronic) per 10 mmHg PaCO2 rise, -2 / -4 per
# 10 mmHg fall. Anion gap Na - (Cl + HCO3), reference 8-16 mmol/L; albumin correction +2.5 per g/dL below 4.0
# (Figge et al., Crit Care Med 1998).


def gas(**args) -> dict:
    return calc("blood_gas_interpret", **args)


def test_blood_gas_dka_high_gap_acidosis_with_expected_compensation():
    # SC-DA-BLOOD-GAS: pH 7.22, HCO3 9.5 -> metabolic acidosis; Winter 1.5 x 9.5 + 8 = 22.25, range 20.25-24.25 holds
    # PaCO2 23; AG 135 - 97 - 9.5 = 28.5 (> 16); delta ratio (28.5 - 12) / (24 - 9.5) = 16.5 / 14.5 = 1.14.
    r = gas(ph=7.22, paco2=23, hco3=9.5, sodium=135, chloride=97, albumin=40)
    assert r["primary"] == ["metabolic_acidosis"] and r["additional"] == []
    assert r["compensation"]["assessment"] == "appropriate"
    assert (r["compensation"]["low"], r["compensation"]["high"]) == (20.2, 24.2)
    gap = r["anion_gap"]
    assert (gap["value"], gap["corrected"], gap["status"], gap["delta_ratio"]) == (28.5, 28.5, "high", 1.14)
    assert gap["delta_meaning"] == "pure high-gap metabolic acidosis"
    assert r["consistency"]["consistent"]
    assert "代谢性酸中毒" in r["summary_zh"] and "代偿在预期范围内" in r["summary_zh"]


def test_blood_gas_metabolic_acidosis_with_respiratory_acidosis():
    # pH 7.10, HCO3 12: Winter 1.5 x 12 + 8 = 26 +/- 2 -> 24-28; PaCO2 40 is above: a respiratory acidosis as well.
    r = gas(ph=7.10, paco2=40, hco3=12)
    assert r["primary"] == ["metabolic_acidosis"] and r["additional"] == ["respiratory_acidosis"]
    assert r["compensation"]["assessment"] == "additional disorder"


def test_blood_gas_metabolic_alkalosis():
    # pH 7.50, HCO3 36: expected PaCO2 0.7 x 36 + 21 = 46.2 +/- 2 -> 44.2-48.2; PaCO2 48 is in range.
    r = gas(ph=7.50, paco2=48, hco3=36)
    assert r["primary"] == ["metabolic_alkalosis"] and r["compensation"]["assessment"] == "appropriate"
    assert (r["compensation"]["low"], r["compensation"]["high"]) == (44.2, 48.2)


@pytest.mark.parametrize(
    ("args", "primary", "phase"),
    [
        # Acute respiratory acidosis: PaCO2 60 -> acute HCO3 24 + 0.1 x 20 = 26, chronic 24 + 0.35 x 20 = 31; HCO3 26.
        ({"ph": 7.26, "paco2": 60, "hco3": 26}, "respiratory_acidosis", "acute"),
        # Chronic (COPD): PaCO2 68 -> acute 26.8, chronic 24 + 0.35 x 28 = 33.8; HCO3 35 is chronic.
        ({"ph": 7.34, "paco2": 68, "hco3": 35}, "respiratory_acidosis", "chronic"),
        # Acute respiratory alkalosis: PaCO2 25 -> acute 24 - 0.2 x 15 = 21, chronic 24 - 0.4 x 15 = 18; HCO3 21.5.
        ({"ph": 7.55, "paco2": 25, "hco3": 21.5}, "respiratory_alkalosis", "acute"),
    ],
)
def test_blood_gas_respiratory_disorders_acute_and_chronic(args, primary, phase):
    r = gas(**args)
    assert r["primary"] == [primary] and r["additional"] == []
    assert r["compensation"]["phase"] == phase


def test_blood_gas_respiratory_acidosis_with_too_little_bicarbonate_adds_a_metabolic_acidosis():
    # PaCO2 60: even acute compensation expects HCO3 26 (range from 24); a normal-looking 23 is too low: a metabolic
    # acidosis as well. (6.1 + log10(23 / 1.8) = 7.21.)
    r = gas(ph=7.21, paco2=60, hco3=23)
    assert r["primary"] == ["respiratory_acidosis"] and r["additional"] == ["metabolic_acidosis"]


def test_blood_gas_mixed_acidosis_has_two_primaries_and_no_single_compensation():
    r = gas(ph=7.05, paco2=60, hco3=16)
    assert sorted(r["primary"]) == ["metabolic_acidosis", "respiratory_acidosis"] and r["mixed"]
    assert r["compensation"] is None and r["summary_zh"].startswith("混合性")


def test_blood_gas_normal_values_and_a_hidden_high_gap_acidosis():
    assert gas(ph=7.40, paco2=40, hco3=24, sodium=140, chloride=104)["primary"] == []
    # Normal pH, PaCO2 and HCO3, but AG 145 - 100 - 24 = 21: a metabolic acidosis hidden by an alkalosis.
    r = gas(ph=7.40, paco2=40, hco3=24, sodium=145, chloride=100)
    assert r["primary"] == [] and r["additional"] == ["metabolic_acidosis"] and r["anion_gap"]["value"] == 21


def test_blood_gas_compensated_metabolic_acidosis_at_normal_ph():
    # pH 7.37 (acid side of 7.40), HCO3 18 low and PaCO2 33 low: metabolic acidosis, Winter 35 +/- 2 holds 33.
    r = gas(ph=7.37, paco2=33, hco3=18)
    assert r["ph_status"] == "normal pH" and r["primary"] == ["metabolic_acidosis"]
    assert r["compensation"]["assessment"] == "appropriate"


def test_blood_gas_albumin_corrects_the_anion_gap():
    # AG 140 - 110 - 18 = 12 looks normal; albumin 20 g/L adds 0.25 x (40 - 20) = 5 -> 17, raised.
    r = gas(ph=7.33, paco2=35, hco3=18, sodium=140, chloride=110, albumin=20)
    assert (r["anion_gap"]["value"], r["anion_gap"]["corrected"], r["anion_gap"]["status"]) == (12, 17, "high")
    assert gas(ph=7.33, paco2=35, hco3=18, sodium=140, chloride=110)["anion_gap"]["status"] == "normal"


def test_blood_gas_delta_ratio_above_two_means_a_metabolic_alkalosis_too():
    # AG 140 - 90 - 18 = 32; delta ratio (32 - 12) / (24 - 18) = 3.33.
    gap = gas(ph=7.33, paco2=35, hco3=18, sodium=140, chloride=90)["anion_gap"]
    assert gap["delta_ratio"] == 3.33 and gap["delta_meaning"] == "with a metabolic alkalosis"


def test_blood_gas_flags_values_that_do_not_fit_henderson_hasselbalch():
    # 6.1 + log10(15 / (0.03 x 40)) = 6.1 + log10(12.5) = 7.20, far from the reported 7.40.
    r = gas(ph=7.40, paco2=40, hco3=15)
    assert r["consistency"] == {"henderson_hasselbalch_ph": 7.2, "consistent": False}


def test_blood_gas_without_chloride_has_no_anion_gap():
    assert gas(ph=7.22, paco2=23, hco3=9.5, sodium=135)["anion_gap"] is None


@pytest.mark.parametrize("bad", [{"ph": 9.0}, {"paco2": 0}, {"hco3": -1}, {"sodium": 10}])
def test_blood_gas_bad_input_is_refused(bad):
    with pytest.raises(ValidationError):
        gas(**({"ph": 7.4, "paco2": 40, "hco3": 24} | bad))


# --- Trend summary: the patient's Observations through the trial's view, under the package policy ---------------------


def sbp(oid: str, pid: str, value: float, time: str, unit: str = "mmHg") -> dict:
    return fhir.observation(oid, pid, "收缩压", value, unit, time, "vital-signs", "8480-6")


RESOURCES = [
    fhir.patient("p1", "测试甲", "female", "1970-05-01", "MRN-1"),
    fhir.patient("p2", "测试乙", "male", "1980-01-01", "MRN-2"),
    sbp("o0", "p1", 160, "2026-10-21T09:00:00+08:00"),  # 40 days ago
    sbp("o1", "p1", 150, "2026-11-09T09:00:00+08:00"),  # 21 days ago
    sbp("o2", "p1", 140, "2026-11-19T09:00:00+08:00"),
    sbp("o3", "p1", 130, "2026-11-29T09:00:00+08:00"),  # 1 day ago
    sbp("o9", "p2", 190, "2026-11-29T09:00:00+08:00"),
    fhir.observation("w1", "p1", "体重", 60, "kg", "2026-11-20T09:00:00+08:00", "vital-signs"),
    fhir.observation("w2", "p1", "体重", 132, "lb", "2026-11-28T09:00:00+08:00", "vital-signs"),
]


def trend(**args) -> dict:
    package = TaskPackage.model_validate(
        {
            "id": "UNIT-TREND",
            "version": "1",
            "title": "t",
            "suite": "unit",
            "category": "data_analysis",
            "environment": {
                "ehr_image": "unit",
                "ehr_version": "1",
                "fixtures": ["ehr.json"],
                "now": NOW,
                "patient_id": "p1",
            },
            "task": {"instruction": {"zh": "测试", "en": "test"}},
            "tools": ["trend_summary"],
        }
    )
    session = ToolSession(package, EHRView(EHRImage(RESOURCES, package.environment.now)))
    return asyncio.run(session.call("trend_summary", **args))


def test_trend_summary_inside_the_window():
    # 150, 140, 130 at days 0, 10, 20: change -20 (-13.3 %), mean 140, least-squares slope -1.0 per day.
    r = trend(patient_id="p1", name="收缩压", days=28)["result"]
    assert (r["n"], r["first"]["value"], r["last"]["value"], r["min"]["value"], r["max"]["value"]) == (
        3,
        150,
        130,
        130,
        150,
    )
    assert (r["mean"], r["change"], r["change_percent"], r["slope_per_day"], r["span_days"]) == (
        140,
        -20,
        -13.3,
        -1.0,
        20.0,
    )
    assert r["unit"] == "mmHg" and r["first"]["time"].startswith("2026-11-09")


def test_trend_summary_without_a_window_takes_everything_on_file_and_finds_codes():
    r = trend(patient_id="p1", name="8480-6")["result"]
    assert (r["n"], r["first"]["value"], r["change"]) == (4, 160, -30)


def test_trend_summary_of_an_empty_window_says_so():
    r = trend(patient_id="p1", name="收缩压", days=0.5)["result"]
    assert r["n"] == 0 and "message" in r and "mean" not in r


def test_trend_summary_with_one_reading_has_no_slope():
    assert trend(patient_id="p1", name="收缩压", days=2)["result"]["slope_per_day"] is None


def test_trend_summary_is_patient_scoped():
    reply = trend(patient_id="p2", name="收缩压", days=28)
    assert not reply["ok"] and reply["error"]["code"] == "denied"


def test_trend_summary_refuses_mixed_units():
    reply = trend(patient_id="p1", name="体重")
    assert reply["error"]["code"] == "mixed_units"


@pytest.mark.parametrize("bad", [{"name": ""}, {"days": 0}, {"days": 5000}])
def test_trend_summary_bad_input(bad):
    assert trend(**({"patient_id": "p1", "name": "收缩压"} | bad))["error"]["code"] == "invalid_args"
