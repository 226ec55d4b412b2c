"""Diagnosis names as grading reads them (``diagnoses.yaml``; synthetic): which diagnoses a text names."""

from __future__ import annotations

from functools import cache, lru_cache

from ...spec import Strict
from .terms import TEXTS_CACHED, compact, mentioned, read_table


class DiagnosisFile(Strict):
    diagnoses: list[list[str]]
    """Each diagnosis: its name, then the other names it goes by."""


@cache
def diagnosis_vocabulary() -> dict[str, str]:
    """Compact diagnosis name or synonym -> the diagnosis's first name."""
    rows = read_table("diagnoses", DiagnosisFile).diagnoses
    return {compact(term): row[0] for row in rows for term in row}


@lru_cache(maxsize=TEXTS_CACHED)
def diagnoses_in(text: str) -> tuple[str, ...]:
    """The diagnoses a text names, by their first names."""
    return tuple(mentioned(text, diagnosis_vocabulary()))
