"""The initial EHR state of a package: immutable resources with indexes by patient, type, code and date."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, tzinfo
from typing import Any

from ._concepts import main_concepts, searched_concepts
from .terminology import index_terms, matching_keys, signature

Key = tuple[str, str]
"""(resource type, id)"""

DATE_FIELDS = (
    "effectiveDateTime",
    "issued",
    "authoredOn",
    "onsetDateTime",
    "performedDateTime",
    "recordedDate",
    "occurrenceDateTime",
    "timingDateTime",
    "date",
    "created",
    "recorded",
    "started",
    "birthDate",
)
PERIOD_FIELDS = ("effectivePeriod", "period", "performedPeriod", "timingPeriod", "occurrencePeriod", "billablePeriod")


def patient_of(resource: dict[str, Any]) -> str | None:
    """The id of the patient a resource belongs to."""
    if resource["resourceType"] == "Patient":
        pid: str = resource["id"]
        return pid
    for field in ("subject", "patient", "for", "beneficiary"):
        ref = resource.get(field)
        if isinstance(ref, dict) and str(ref.get("reference", "")).startswith("Patient/"):
            referred: str = ref["reference"][8:]
            return referred
    return None


def codings_of(resource: dict[str, Any]) -> set[tuple[str, str]]:
    """The (system, code) pairs of a resource's main concept."""
    return {
        (str(c.get("system", "")), str(c["code"]))
        for concept in main_concepts(resource)
        for c in concept.get("coding", [])
        if c.get("code")
    }


def codes_of(resource: dict[str, Any]) -> set[str]:
    """Lower-cased codes and texts of a resource's main concept, for code look-ups."""
    found: set[str] = set()
    for concept in main_concepts(resource):
        if concept.get("text"):
            found.add(concept["text"].lower())
        for coding in concept.get("coding", []):
            for part in ("code", "display"):
                if coding.get(part):
                    found.add(str(coding[part]).lower())
    return found


def parse_time(value: str, tz: tzinfo = UTC) -> float:
    """POSIX seconds of a FHIR date or dateTime; a value without a zone is read in ``tz``."""
    parsed = datetime.fromisoformat(value if len(value) > 7 else f"{value}-01" if len(value) == 7 else f"{value}-01-01")
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=tz)
    return parsed.timestamp()


def time_of(resource: dict[str, Any], tz: tzinfo = UTC) -> float | None:
    """When a resource happened (its clinical date), in POSIX seconds."""
    for field in DATE_FIELDS:
        if isinstance(resource.get(field), str):
            return parse_time(resource[field], tz)
    for field in PERIOD_FIELDS:
        period = resource.get(field)
        if isinstance(period, dict) and period.get("start"):
            return parse_time(period["start"], tz)
    return None


class EHRImage:
    """Immutable resources keyed by (type, id) with indexes; share it across trials, never mutate it."""

    def __init__(self, resources: Iterable[dict[str, Any]], now: datetime):
        self.now = now
        self.tz = now.tzinfo or UTC
        self.resources: dict[Key, dict[str, Any]] = {}
        self.patient_ids: list[str] = []
        self.future: set[Key] = set()
        """Resources whose time (``time_of``) is after ``now``: beyond the edge of the trial's world."""
        slots: dict[tuple[str, str], list[tuple[float, Key]]] = defaultdict(list)
        codes: dict[tuple[str, str, str], list[Key]] = defaultdict(list)
        for resource in resources:
            key = (resource["resourceType"], resource["id"])
            self.resources[key] = resource
            if key[0] == "Patient":
                self.patient_ids.append(key[1])
            patient = patient_of(resource)
            if patient is None:
                continue
            when = time_of(resource, self.tz)
            slots[(patient, key[0])].append((float("-inf") if when is None else when, key))
            if when is not None and when > now.timestamp():
                self.future.add(key)
            for term in index_terms(signature(searched_concepts(resource))):
                codes[(patient, key[0], term)].append(key)
        self._slots = {k: sorted(v) for k, v in slots.items()}
        self._times = {k: [t for t, _ in v] for k, v in self._slots.items()}
        self._codes = dict(codes)

    def keys_for(
        self, patient: str, rtype: str, since: float | None = None, until: float | None = None, code: str | None = None
    ) -> Iterator[Key]:
        """Keys of a patient's resources of a type, oldest first, filtered by time window and code (a code, display,
        text or synonym: ``terminology`` says how)."""
        slot = self._slots.get((patient, rtype), [])
        times = self._times.get((patient, rtype), [])
        lo = 0 if since is None else bisect_left(times, since)
        if since is None and until is not None:
            lo = bisect_right(times, float("-inf"))  # an undated record is outside any window
        hi = len(slot) if until is None else bisect_right(times, until)
        if code is None:
            return (key for _, key in slot[lo:hi])
        wanted = matching_keys(self, patient, rtype, code)
        return (key for _, key in slot[lo:hi] if key in wanted)
