"""The CodeableConcepts that say what a FHIR resource is, as look-ups and code searches read them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def main_concepts(resource: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The CodeableConcepts that say what a resource is: its code, medication, vaccine or (document) type."""
    for field in ("code", "medicationCodeableConcept", "vaccineCode", "type"):
        concept = resource.get(field)
        if isinstance(concept, list):
            concept = concept[0] if concept else None
        if isinstance(concept, dict):
            yield concept


def searched_concepts(resource: dict[str, Any]) -> list[dict[str, Any]]:
    """The concepts a code search finds a resource by: its main ones and its components' (a search for 8480-6,
    systolic pressure, finds the blood pressure panel that holds it)."""
    components = [c.get("code") for c in resource.get("component") or [] if isinstance(c, dict)]
    return [*main_concepts(resource), *(c for c in components if isinstance(c, dict))]
