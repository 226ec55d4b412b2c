# The face's names for editors and type checkers, written from _HOMES by scripts/face_stubs.py: do not edit.
from .codes import (
    concept_of_code as concept_of_code,
    concept_of_written_code as concept_of_written_code,
    display_of as display_of,
)
from .diagnoses import diagnosis_vocabulary as diagnosis_vocabulary
from .drugs import (
    allergy_classes as allergy_classes,
    classes_of as classes_of,
    contraindications as contraindications,
    cross_reacting as cross_reacting,
    drug_vocabulary as drug_vocabulary,
    drugs_in as drugs_in,
    exposures as exposures,
)
from .synonyms import order_identity as order_identity, synonym_key as synonym_key
from .terms import (
    CJK as CJK,
    TEXTS_CACHED as TEXTS_CACHED,
    compact as compact,
    first_names as first_names,
    mentioned as mentioned,
    term_pattern as term_pattern,
)
