"""Virtual EHR: FHIR R4 resources, indexes, frozen clock, copy-on-write views, JSON-Patch changes, diffs."""
from .image import EHRImage, patient_of
from .timeline import Change, FieldChange, ResourceDiff, StateAt, Timeline
from .view import EHRView

__all__ = ["Change", "EHRImage", "EHRView", "FieldChange", "ResourceDiff", "StateAt", "Timeline", "patient_of"]
