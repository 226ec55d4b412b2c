"""Grading vocabularies (synthetic, for evaluation only): the YAML tables beside these modules, read with the
YAML 1.2 reader and checked by models, plus the tools' drug and dose-term tables. The names below are imported on
first use."""

from ... import _lazy

_HOMES = {
    "codes": ("concept_of_code", "concept_of_written_code", "display_of"),
    "diagnoses": ("diagnosis_vocabulary",),
    "drugs": (
        "allergy_classes",
        "classes_of",
        "contraindications",
        "cross_reacting",
        "drug_vocabulary",
        "drugs_in",
        "exposures",
    ),
    "synonyms": ("order_identity", "synonym_key"),
    "terms": ("CJK", "TEXTS_CACHED", "compact", "first_names", "mentioned", "term_pattern"),
}

__all__ = [
    "CJK",
    "TEXTS_CACHED",
    "allergy_classes",
    "classes_of",
    "compact",
    "concept_of_code",
    "concept_of_written_code",
    "contraindications",
    "cross_reacting",
    "diagnosis_vocabulary",
    "display_of",
    "drug_vocabulary",
    "drugs_in",
    "exposures",
    "first_names",
    "mentioned",
    "order_identity",
    "synonym_key",
    "term_pattern",
]
__getattr__, __dir__ = _lazy(__name__, _HOMES, __all__)
