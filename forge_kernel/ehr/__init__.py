"""Virtual EHR: FHIR R4 resources, indexes, frozen clock, copy-on-write views, JSON-Patch changes, diffs."""
from .diff import FieldChange, ResourceDiff, resource_at, state_diff
from .image import EHRImage, patient_of
from .view import EHRView

__all__ = ["EHRImage", "EHRView", "FieldChange", "ResourceDiff", "patient_of", "resource_at", "state_diff"]
