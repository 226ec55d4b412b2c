"""Drug tables keyed by ingredient: real (RxNorm-style) prescription strings resolve to the drugs of the table, an
unknown drug is named, and code search by synonym through the read tools (synthetic tables and data)."""

from __future__ import annotations

import pytest

from forge_kernel.ehr import fhir, terminology
from forge_kernel.tools import knowledge, table
from forge_kernel.verify.tables import allergy_classes, concept_of_code, drugs_in
from tests.tools.test_tools import RESOURCES, call, make_session

RXNORM = "http://www.nlm.nih.gov/research/umls/rxnorm"


@pytest.mark.parametrize(
    ("text", "drugs"),
    [
        ("Ibuprofen 400 MG Oral Tablet", ["布洛芬"]),
        ("lisinopril 10 MG Oral Tablet", ["赖诺普利"]),
        ("24 HR Metformin hydrochloride 500 MG Extended Release Oral Tablet", ["二甲双胍"]),
        ("Naproxen sodium 220 MG Oral Tablet", ["萘普生"]),  # a salt dropped
        ("Amoxicillin 250 MG / Clavulanate 125 MG Oral Tablet", ["阿莫西林克拉维酸钾"]),  # one row, two ingredients
        ("hydrochlorothiazide 12.5 MG / lisinopril 10 MG Oral Tablet", ["氢氯噻嗪", "赖诺普利"]),  # two rows
        ("NDA020503 200 ACTUAT Albuterol 0.09 MG/ACTUAT Metered Dose Inhaler", ["沙丁胺醇"]),  # a pack size dropped
        ("Insulin Lispro 100 UNT/ML Injectable Solution [Humalog]", ["胰岛素"]),  # a brand dropped
        ("\uff49\uff42\uff55\uff50\uff52\uff4f\uff46\uff45\uff4e", ["布洛芬"]),  # full width
        ("华法林", ["华法林"]),
    ],
)
def test_prescription_strings_resolve_to_their_ingredients_drugs(text, drugs):
    assert knowledge.resolve_drugs(text) == knowledge.Resolved(tuple(drugs), ())


def test_an_ingredient_the_table_lacks_is_unknown_and_named():
    found = knowledge.resolve_drugs("Hydrocodone Bitartrate 10 MG / Acetaminophen 325 MG Oral Tablet")
    assert found == knowledge.Resolved(("对乙酰氨基酚",), ("hydrocodone",))
    assert knowledge.resolve_drugs("unobtainium") == knowledge.Resolved((), ("unobtainium",))
    assert knowledge.resolve_drugs("Creatine kinase") == knowledge.Resolved((), ("creatine kinase",))


def test_drug_info_reads_a_prescription_string_and_gives_the_rxnorm_ingredient():
    info = call(make_session(), "drug_info", name="lisinopril 10 MG Oral Tablet")["result"]
    assert info["name"] == "赖诺普利" and info["rxnorm"] == {"lisinopril": "29046"}
    both = call(make_session(), "drug_info", name="hydrochlorothiazide 25 MG / lisinopril 20 MG Oral Tablet")
    assert [row["name"] for row in both["result"]["ingredients"]] == ["氢氯噻嗪", "赖诺普利"]
    unknown = call(make_session(), "drug_info", name="Hydrocodone Bitartrate 10 MG Oral Tablet")
    assert unknown["error"]["message"] == "unknown drug: hydrocodone"


def test_interactions_are_found_between_prescription_strings():
    out = call(make_session(), "drug_interaction_check", drugs=["warfarin sodium 5 MG Oral Tablet", "Ibuprofen 400 MG"])
    assert out["result"]["checked"] == ["华法林", "布洛芬"] and "unknown" not in out["result"]
    assert [(i["drugs"], i["severity"]) for i in out["result"]["interactions"]] == [(["华法林", "布洛芬"], "major")]
    ace = call(make_session(), "drug_interaction_check", drugs=["lisinopril 10 MG", "potassium chloride 20 MEQ"])
    assert [i["severity"] for i in ace["result"]["interactions"]] == ["major"]


def test_an_interaction_check_with_an_unknown_drug_names_it():
    out = call(make_session(), "drug_interaction_check", drugs=["warfarin", "Zyxorin 5 MG Oral Tablet"])["result"]
    assert out["interactions"] == [] and out["unknown"] == ["zyxorin"]
    assert out["message"] == "unknown drug: zyxorin"


def test_without_the_ingredient_reading_a_prescription_string_is_unknown(monkeypatch):
    monkeypatch.setattr(knowledge, "ingredient_names", lambda text: [])  # the mechanism broken
    knowledge.resolve_drugs.cache_clear()
    try:
        out = call(make_session(), "drug_interaction_check", drugs=["warfarin", "Ibuprofen 400 MG Oral Tablet"])
        assert out["result"]["interactions"] == [] and out["result"]["unknown"] == ["Ibuprofen 400 MG Oral Tablet"]
    finally:
        knowledge.resolve_drugs.cache_clear()


def test_every_drug_has_its_rxnorm_ingredients_and_they_agree_with_the_code_table():
    for drug in table("drugs"):
        assert drug["rxnorm"] and all(code.isdigit() for code in drug["rxnorm"].values()), drug["name"]
        assert knowledge.ingredient_index()[frozenset(drug["rxnorm"])] == drug["name"]
        for code in drug["rxnorm"].values():
            assert concept_of_code(RXNORM, code) in (None, f"drug:{drug['name']}"), drug["name"]


def test_the_allergy_check_reads_prescription_strings():
    assert drugs_in("lisinopril 10 MG Oral Tablet") == ("赖诺普利",)
    assert drugs_in("24 HR Metformin hydrochloride 500 MG Extended Release Oral Tablet") == ("二甲双胍",)
    assert "penicillins" in allergy_classes("amoxicillin 875 MG / clavulanate 125 MG Oral Tablet")
    assert "nsaids" in allergy_classes("Naproxen sodium 220 MG Oral Tablet")


LAB = fhir.observation("cr", "p1", "Creatinine", 1.1, "mg/dL", "2026-11-29T08:00:00+08:00", "laboratory", "2160-0")


@pytest.mark.parametrize("query", ["Cr", "肌酐", "creatinine", "2160-0"])
def test_the_read_tools_find_a_lab_by_any_of_its_names(monkeypatch, query):
    monkeypatch.setattr("tests.tools.test_tools.RESOURCES", [*RESOURCES, LAB])
    session = make_session()
    assert [r["id"] for r in call(session, "lab_results", patient_id="p1", name=query)["result"]["items"]] == ["cr"]
    assert call(session, "record_search", patient_id="p1", code=query)["result"]["total"] == 1


def test_a_read_that_finds_nothing_says_so_with_a_hint(monkeypatch):
    monkeypatch.setattr("tests.tools.test_tools.RESOURCES", [*RESOURCES, LAB])
    out = call(make_session(), "record_search", patient_id="p1", code="creatinin")["result"]
    assert out["total"] == 0 and out["closest"][0] == "creatinine"
    assert "creatinin" in out["message"]
    monkeypatch.setattr(terminology, "by_name", lambda: {})  # synonyms broken: Cr finds nothing
    assert call(make_session(), "lab_results", patient_id="p1", name="Cr")["result"]["total"] == 0
