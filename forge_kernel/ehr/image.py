"""The initial EHR state of a package: immutable resources with indexes by patient, type, code and date; a shared
image's records are indexed once per process and time zone, and layered under each package's own."""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime, tzinfo
from itertools import chain
from typing import Any, Protocol
from weakref import WeakKeyDictionary

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


class Records:
    """Resources keyed by (type, id) with their indexes in one time zone: immutable, and shared by every EHRImage
    built over them (a shared image's are built once per time zone, ``shared_records``)."""

    def __init__(self, resources: Iterable[dict[str, Any]], tz: tzinfo):
        self.resources: dict[Key, dict[str, Any]] = {}
        self.patient_ids: list[str] = []
        self.when: dict[Key, float] = {}
        """The time (``time_of``) of each dated resource that belongs to a patient."""
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
            when = time_of(resource, tz)
            if when is not None:
                self.when[key] = when
            slots[(patient, key[0])].append((float("-inf") if when is None else when, key))
            for term in index_terms(signature(searched_concepts(resource))):
                codes[(patient, key[0], term)].append(key)
        self.slots = {k: sorted(v) for k, v in slots.items()}
        self.times = {k: [t for t, _ in v] for k, v in self.slots.items()}
        self.codes = dict(codes)
        self.latest = max(self.when.values(), default=float("-inf"))
        self.charted = {patient for patient, rtype in self.slots if rtype != "Patient"}
        """The patients with records of their own besides the Patient resource."""


class Shared(Protocol):
    """A shared image as the spec layer reads it: its resources (references resolved), never changed."""

    resources: list[dict[str, Any]]


_SHARED: WeakKeyDictionary[Shared, dict[tzinfo, Records]] = WeakKeyDictionary()


def shared_records(image: Shared, tz: tzinfo) -> Records:
    """The records of a shared image in a time zone, indexed once while the image lives."""
    by_zone = _SHARED.setdefault(image, {})
    if tz not in by_zone:
        by_zone[tz] = Records(image.resources, tz)
    return by_zone[tz]


class Layered(Mapping[Key, dict[str, Any]]):
    """A package's own resources over its shared image's, looked up without copying either (no key is in both)."""

    def __init__(self, own: dict[Key, dict[str, Any]], base: dict[Key, dict[str, Any]]):
        self.own, self.base = own, base

    def __getitem__(self, key: Key) -> dict[str, Any]:
        found = self.own.get(key)
        return self.base[key] if found is None else found

    def get(self, key: Key, default: Any = None) -> Any:
        found = self.own.get(key)
        return self.base.get(key, default) if found is None else found

    def __contains__(self, key: object) -> bool:
        return key in self.own or key in self.base

    def __iter__(self) -> Iterator[Key]:
        return chain(self.own, self.base)

    def __len__(self) -> int:
        return len(self.own) + len(self.base)


class Future:
    """The resources of an image dated after its clock (beyond the edge of the trial's world), tested per key."""

    def __init__(self, image: EHRImage):
        self.image = image

    def __contains__(self, key: object) -> bool:
        return self.image.time(key) > self.image.edge  # type: ignore[arg-type]  # any key: absent is undated

    def __bool__(self) -> bool:
        return any(r.latest > self.image.edge for r in self.image.layers)


class EHRImage:
    """A package's initial EHR: its own resources over its shared image's (``shared``, when it names one), with
    indexes; the shared image's records are built once and reused, never copied. Share it across trials, never
    mutate it."""

    def __init__(self, resources: Iterable[dict[str, Any]], now: datetime, shared: Shared | None = None):
        self.now = now
        self.tz = now.tzinfo or UTC
        self.edge = now.timestamp()
        own = Records(resources, self.tz)
        base = shared_records(shared, self.tz) if shared is not None else None
        self.layers = [own] if base is None else [base] if not own.resources else [base, own]
        self.resources: Mapping[Key, dict[str, Any]] = (
            self.layers[0].resources if len(self.layers) == 1 else Layered(own.resources, self.layers[0].resources)
        )
        self.patient_ids = [pid for layer in self.layers for pid in layer.patient_ids]
        self.future = Future(self)
        """Resources whose time (``time_of``) is after ``now``: beyond the edge of the trial's world."""
        self._merged: dict[tuple[str, str], tuple[list[tuple[float, Key]], list[float]]] = {}

    def time(self, key: Key) -> float:
        """When a resource happened (``time_of``), -inf when undated or not a patient's."""
        for layer in self.layers:
            if key in layer.when:
                return layer.when[key]
        return float("-inf")

    def charted(self, patient: str) -> bool:
        """Whether a patient has records of their own besides the Patient resource."""
        return any(patient in layer.charted for layer in self.layers)

    def coded(self, patient: str, rtype: str, term: str) -> list[Key]:
        """Keys of a patient's records of a type indexed under a term (``terminology.index_terms``)."""
        if len(self.layers) == 1:
            return self.layers[0].codes.get((patient, rtype, term), [])
        return [key for layer in self.layers for key in layer.codes.get((patient, rtype, term), ())]

    def _slot(self, patient: str, rtype: str) -> tuple[list[tuple[float, Key]], list[float]]:
        """(time, key) of a patient's records of a type, oldest first, and their times: the shared image's own
        lists when the package adds none, else merged once."""
        slot_key = (patient, rtype)
        having = [layer for layer in self.layers if slot_key in layer.slots]
        if len(having) < 2:
            return (having[0].slots[slot_key], having[0].times[slot_key]) if having else ([], [])
        if slot_key not in self._merged:
            merged = list(heapq.merge(*(layer.slots[slot_key] for layer in having)))
            self._merged[slot_key] = merged, [t for t, _ in merged]
        return self._merged[slot_key]

    def keys_for(
        self,
        patient: str,
        rtype: str,
        since: float | None = None,
        until: float | None = None,
        code: str | None = None,
        clip: bool = False,
    ) -> Iterator[Key]:
        """Keys of a patient's resources of a type, oldest first, filtered by time window and code (a code, display,
        text or synonym: ``terminology`` says how); with ``clip``, none after the clock (undated ones kept)."""
        slot, times = self._slot(patient, rtype)
        lo = 0 if since is None else bisect_left(times, since)
        if since is None and until is not None:
            lo = bisect_right(times, float("-inf"))  # an undated record is outside any window
        hi = len(slot) if until is None else bisect_right(times, until)
        if clip:
            hi = min(hi, bisect_right(times, self.edge))
        if code is None:
            return (key for _, key in slot[lo:hi])
        wanted = matching_keys(self, patient, rtype, code)
        return (key for _, key in slot[lo:hi] if key in wanted)
