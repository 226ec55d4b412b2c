"""A trial's copy-on-write view of an EHRImage; every write is recorded as JSON-Patch operations."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .image import EHRImage, Key, patient_of, time_of
from .patch import apply_op, clone, diff_ops, escape, resource_key
from .terminology import resource_matches


class EHRView:
    """Reads fall through to the shared image; writes land in an overlay. Returned resources are read-only."""

    def __init__(self, image: EHRImage):
        self.image = image
        self.now = image.now
        self.step = 0
        """The step that writes are attributed to (set by the tool session)."""
        self.changes: list[tuple[int, dict[str, Any]]] = []
        """(step, JSON-Patch operation) for every write, in order."""
        self._overlay: dict[Key, dict[str, Any] | None] = {}
        """Resources this trial created or changed (None: removed); searched over, not indexed."""
        self._serial = 0

    def get(self, rtype: str, rid: str) -> dict[str, Any] | None:
        key = (rtype, rid)
        if key in self._overlay:
            return self._overlay[key]
        return self.image.resources.get(key)

    def search(
        self, patient: str, rtype: str, since: float | None = None, until: float | None = None, code: str | None = None
    ) -> list[dict[str, Any]]:
        """A patient's resources of one type, oldest first, by time window and code (of the resource or of one of
        its components). Nothing after the clock's ``now`` is found: the edge of the trial's world."""
        keys = self.image.keys_for(patient, rtype, since, until, code, clip=True)
        found = [self.image.resources[key] for key in keys if key not in self._overlay]
        written = [
            r
            for key, r in self._overlay.items()
            if r and key[0] == rtype and patient_of(r) == patient and self._fits(r, since, until, code)
        ]
        if not written:
            return found
        return sorted(found + written, key=self._when)

    def _when(self, resource: dict[str, Any]) -> float:
        when = time_of(resource, self.image.tz)
        return float("-inf") if when is None else when

    def _fits(self, resource: dict[str, Any], since: float | None, until: float | None, code: str | None) -> bool:
        when = time_of(resource, self.image.tz)
        if when is not None and when > self.now.timestamp():
            return False
        if since is not None and (when is None or when < since):
            return False
        if until is not None and (when is None or when > until):
            return False
        return code is None or resource_matches(resource, code)

    def next_id(self, rtype: str) -> str:
        """A deterministic id for a new resource of this trial."""
        self._serial += 1
        return f"{rtype.lower()}-new-{self._serial}"

    def create(self, resource: dict[str, Any]) -> dict[str, Any]:
        """Add a resource (an id is assigned when missing); returns the stored copy."""
        resource = clone(resource)
        if "id" not in resource:
            resource["id"] = self.next_id(resource["resourceType"])
        key = (resource["resourceType"], resource["id"])
        if self.get(*key) is not None:
            raise ValueError(f"{key[0]}/{key[1]} exists")
        self._record(key, None, resource)
        return resource

    def update(self, resource: dict[str, Any]) -> dict[str, Any]:
        """Replace an existing resource; the patch records each field it replaced."""
        resource = clone(resource)
        key = (resource["resourceType"], resource["id"])
        old = self.get(*key)
        if old is None:
            raise KeyError(f"{key[0]}/{key[1]}")
        self._record(key, old, resource)
        return resource

    def _record(self, key: Key, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        for op in diff_ops(f"/{escape(key[0])}/{escape(key[1])}", old, new):
            self.changes.append((self.step, op))
        self._overlay[key] = new

    def replay(self, changes: list[tuple[int, dict[str, Any]]]) -> None:
        """Rebuild a view's writes from recorded changes (for regrading without re-running tools)."""
        touched: dict[Key, dict[str, Any]] = {}
        for step, op in changes:
            key = resource_key(op["path"])
            if key not in touched:
                base = self.get(*key)
                touched[key] = {key[0]: {key[1]: clone(base)}} if base is not None else {key[0]: {}}
            if op["op"] == "add" and op["path"].count("/") == 2:
                self._serial += 1  # keep ids of later creates from clashing with replayed ones
            apply_op(touched[key], op)
            self.changes.append((step, op))
        for key, doc in touched.items():
            self._overlay[key] = doc[key[0]].get(key[1])

    def touched(self) -> Iterator[tuple[Key, dict[str, Any] | None, dict[str, Any] | None]]:
        """(key, initial version, final version) of every resource this trial wrote."""
        seen: dict[Key, None] = {}
        for _, op in self.changes:
            seen.setdefault(resource_key(op["path"]))
        for key in seen:
            yield key, self.image.resources.get(key), self.get(*key)
