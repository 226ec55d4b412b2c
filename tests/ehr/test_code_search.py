"""Code search by code, display text and synonyms (ehr/terminology.py) on Synthea-style records (synthetic data)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from forge_kernel.ehr import EHRImage, EHRView, search_hint, terminology

NOW = datetime(2026, 1, 1, tzinfo=UTC)
LOINC = "http://loinc.org"


def observation(oid: str, code: str, display: str, text: str | None = None, pid: str = "p1") -> dict:
    concept: dict = {"coding": [{"system": LOINC, "code": code, "display": display}]}
    if text:
        concept["text"] = text
    return {
        "resourceType": "Observation",
        "id": oid,
        "subject": {"reference": f"Patient/{pid}"},
        "effectiveDateTime": "2025-06-01T08:00:00Z",
        "code": concept,
    }


RECORDS = [
    {"resourceType": "Patient", "id": "p1"},
    {"resourceType": "Patient", "id": "p2"},
    observation("cr", "2160-0", "Creatinine [Mass/volume] in Serum or Plasma"),
    observation("cr-blood", "38483-4", "Creatinine [Mass/volume] in Blood"),
    observation("ck", "2157-6", "Creatine kinase [Enzymatic activity/volume] in Serum or Plasma"),
    observation(
        "egfr",
        "33914-3",
        "Glomerular filtration rate/1.73 sq M.predicted [Volume Rate/Area] in Serum or Plasma by "
        "Creatinine-based formula (MDRD)",
    ),
    observation("a1c", "4548-4", "Hemoglobin A1c/Hemoglobin.total in Blood"),
    observation("k", "6298-4", "Potassium [Moles/volume] in Blood"),
    observation("vitk", "1234-5", "Vitamin K1 [Mass/volume] in Serum or Plasma"),
    observation("hb", "718-7", "Hemoglobin [Mass/volume] in Blood", text="血红蛋白"),
    observation("pain", "72514-3", "Pain severity - 0-10 verbal numeric rating [Score] - Reported"),
    observation("protein", "2885-2", "Protein [Mass/volume] in Serum or Plasma"),
    observation("protein-urine", "20454-5", "Protein [Presence] in Urine by Test strip"),
    observation("sbp-other", "8480-6", "Systolic Blood Pressure", pid="p2"),
]


@pytest.fixture(scope="module")
def image() -> EHRImage:
    return EHRImage(RECORDS, NOW)


def found(image: EHRImage, query: str, patient: str = "p1") -> set[str]:
    return {key[1] for key in image.keys_for(patient, "Observation", code=query)}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("2160-0", {"cr"}),  # a code: exactly that code
        ("http://loinc.org|2160-0", {"cr"}),  # FHIR's system|code
        ("creatinine [mass/volume] in serum or plasma", {"cr"}),  # a display, any case
        (
            "\uff23\uff32\uff25\uff21\uff34\uff29\uff2e\uff29\uff2e\uff25 [Mass/volume] in Blood",
            {"cr-blood"},
        ),  # full width
        ("血红蛋白", {"hb"}),  # a text
    ],
)
def test_exact_codes_displays_and_texts_match(image, query, expected):
    assert found(image, query) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("creatinine", {"cr", "cr-blood"}),  # both creatinine codes, not creatine kinase
        ("肌酐", {"cr", "cr-blood"}),
        ("Cr", {"cr", "cr-blood"}),
        ("eGFR", {"egfr"}),
        ("估算肾小球滤过率", {"egfr"}),
        ("HbA1c", {"a1c"}),
        ("糖化血红蛋白", {"a1c"}),
        ("K", {"k"}),  # potassium only: not every display with a k in it, not vitamin K
        ("血钾", {"k"}),
        ("Hb", {"hb"}),
        ("hemoglobin", {"hb"}),  # not haemoglobin A1c
    ],
)
def test_synonyms_find_the_concept_and_nothing_else(image, query, expected):
    assert found(image, query) == expected


def test_the_patient_scope_holds_for_synonyms(image):
    assert found(image, "收缩压", "p2") == {"sbp-other"}
    assert found(image, "收缩压") == set()


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("pain severity", {"pain"}),  # every query word is a word of the display
        ("Pain", {"pain"}),
        ("vitamin k1", {"vitk"}),
        ("protein urine", {"protein-urine"}),  # one concept has both words
        ("protein", set()),  # two concepts have it: ambiguous, no match
        ("pain score reported", {"pain"}),
        ("pai", set()),  # a prefix is not a word
        ("Crea", set()),
        ("kinase creatine", {"ck"}),
    ],
)
def test_the_words_of_a_display_match_where_they_name_one_concept(image, query, expected):
    assert found(image, query) == expected


def test_short_words_never_match_by_words(image, monkeypatch):
    monkeypatch.setattr(terminology, "by_name", lambda: {})  # no synonyms: the words rule alone
    assert found(image, "Cr") == set()  # not creatine kinase, not creatinine
    assert found(image, "K") == set()  # not vitamin K


def test_without_the_synonym_tables_a_synonym_finds_nothing(monkeypatch):
    assert found(EHRImage(RECORDS, NOW), "eGFR") == {"egfr"}
    monkeypatch.setattr(terminology, "by_name", lambda: {})  # the mechanism broken
    monkeypatch.setattr(terminology, "by_code", lambda: {})
    terminology.index_terms.cache_clear()
    broken = EHRImage(RECORDS, NOW)
    terminology.index_terms.cache_clear()
    assert found(broken, "eGFR") == set()
    assert found(broken, "肌酐") == set()


def test_a_trials_own_records_match_by_synonym_too(image):
    view = EHRView(image)
    view.create(observation("new-cr", "2160-0", "Creatinine [Mass/volume] in Serum or Plasma"))
    assert {r["id"] for r in view.search("p1", "Observation", code="Cr")} == {"cr", "cr-blood", "new-cr"}
    assert {r["id"] for r in view.search("p1", "Observation", code="K")} == {"k"}


def test_a_search_that_finds_nothing_says_so_with_the_closest_displays(image):
    hint = search_hint(image, "p1", "Observation", "potasium")
    assert "potasium" in hint["message"]
    assert hint["closest"][0] == "potassium [moles/volume] in blood"
    ambiguous = search_hint(image, "p1", "Observation", "protein")
    assert ambiguous["candidates"] == [
        "protein [mass/volume] in serum or plasma",
        "protein [presence] in urine by test strip",
    ]


def test_no_name_or_code_belongs_to_two_concepts(monkeypatch):
    assert terminology.by_name()["cr"] == "肌酐"
    rows = terminology.concepts() | {"twin": terminology.Concept("twin", names={"cr"})}
    monkeypatch.setattr(terminology, "concepts", lambda: rows)
    with pytest.raises(ValueError, match="cr"):
        terminology.unique({}, "name")


def test_the_additions_repeat_no_code_of_the_shared_code_table():
    shared = {entry["code"] for entry in terminology.read("codes")["concepts"]}
    added = [code for row in terminology.read("lab_synonyms")["synonyms"] for code in row.get("codes", [])]
    assert len(added) == len(set(added)) and not set(added) & shared
