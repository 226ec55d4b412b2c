"""Virtual EHR: FHIR R4 resources, indexes, frozen clock, copy-on-write views, JSON-Patch changes, diffs.

The names below are imported on first use."""

from .. import _lazy

_HOMES = {
    "fhir": (
        "DOSE",
        "assessment",
        "medication_request",
        "observation",
        "patient_mrn",
        "patient_name",
        "service_request",
        "task",
    ),
    "image": ("EHRImage", "Key", "codes_of", "codings_of", "parse_time", "patient_of", "time_of"),
    "patch": ("resource_key",),
    "terminology": ("TABLES", "lookup_key", "resource_matches", "search_hint"),
    "summaries": ("age_at", "concept_text", "summarize", "when"),
    "timeline": ("Change", "FieldChange", "ResourceDiff", "StateAt", "Timeline"),
    "view": ("EHRView",),
}

__all__ = [
    "Change",
    "DOSE",
    "EHRImage",
    "EHRView",
    "FieldChange",
    "Key",
    "ResourceDiff",
    "StateAt",
    "TABLES",
    "Timeline",
    "age_at",
    "assessment",
    "codes_of",
    "codings_of",
    "concept_text",
    "lookup_key",
    "medication_request",
    "observation",
    "parse_time",
    "patient_mrn",
    "patient_name",
    "patient_of",
    "resource_key",
    "resource_matches",
    "search_hint",
    "service_request",
    "summarize",
    "task",
    "time_of",
    "when",
]
__getattr__, __dir__ = _lazy(__name__, _HOMES, __all__)
