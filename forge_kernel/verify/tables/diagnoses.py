"""Diagnosis names as grading reads them (``diagnoses.yaml``; synthetic): which diagnoses a text names."""

from __future__ import annotations

from functools import lru_cache

from .terms import TEXTS_CACHED, first_names, mentioned


def diagnosis_vocabulary() -> dict[str, str]:
    """Compact diagnosis name or synonym -> the diagnosis's first name."""
    return first_names("diagnoses")


@lru_cache(maxsize=TEXTS_CACHED)
def diagnoses_in(text: str) -> tuple[str, ...]:
    """The diagnoses a text names, by their first names."""
    return tuple(mentioned(text, diagnosis_vocabulary()))
