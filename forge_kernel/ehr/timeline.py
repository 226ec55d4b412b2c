"""A trial's EHR step by step: the state after any step and the diff between any two, from its recorded changes.

Built once from the JSON-Patch operations the trial recorded (each with the value it replaced) and a way to look
up a resource's initial version; every resource the trial touched gets its version after each step that changed
it, so ``state(n)``, ``resource(key, n)`` and ``diff(a, b)`` cost microseconds and never rebuild the EHR.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from .image import Key
from .patch import apply_op, clone, diff_ops, escape, resource_key


@dataclass(frozen=True, slots=True)
class Change:
    """One JSON-Patch operation a trial made, at the step that made it."""

    step: int
    op: Literal["add", "remove", "replace"]
    path: str
    """``/Type/id/field/...`` (RFC 6901 escaped)."""
    value: Any = None
    replaced: Any = None
    """What the operation overwrote (None for an add)."""

    @property
    def key(self) -> Key:
        return resource_key(self.path)

    @classmethod
    def of(cls, step: int, op: dict[str, Any]) -> Change:
        return cls(step, op["op"], op["path"], op.get("value"), op.get("replaced"))

    def as_op(self) -> dict[str, Any]:
        op = {"op": self.op, "path": self.path}
        if self.op != "remove":
            op["value"] = self.value
        if self.op != "add":
            op["replaced"] = self.replaced
        return op


@dataclass(frozen=True, slots=True)
class FieldChange:
    path: str
    """JSON Pointer inside the resource ("/" for the whole resource)."""
    before: Any
    after: Any


@dataclass(frozen=True, slots=True)
class ResourceDiff:
    rtype: str
    rid: str
    status: Literal["added", "changed", "removed"]
    fields: tuple[FieldChange, ...]


class Timeline:
    """The EHR of one trial at every step. ``initial(key)`` gives a resource as the trial found it (or None)."""

    def __init__(self, changes: Iterable[Change], initial: Callable[[Key], dict[str, Any] | None]):
        self.changes = sorted(changes, key=lambda c: c.step)
        self.initial = initial
        self.last_step = max((c.step for c in self.changes), default=0)
        self._versions: dict[Key, tuple[list[int], list[dict[str, Any] | None]]] = {}
        docs: dict[Key, dict[str, Any]] = {}
        for change in self.changes:
            key = change.key
            if key not in docs:
                base = initial(key)
                docs[key] = {key[0]: {key[1]: clone(base)}} if base is not None else {key[0]: {}}
                self._versions[key] = ([0], [base])
            apply_op(docs[key], change.as_op())
            steps, versions = self._versions[key]
            current = clone(docs[key][key[0]].get(key[1]))
            if steps[-1] == change.step:
                versions[-1] = current
            else:
                steps.append(change.step)
                versions.append(current)

    @classmethod
    def of(cls, ops: Iterable[tuple[int, dict[str, Any]]], initial: Callable[[Key], dict[str, Any] | None]) -> Timeline:
        """From (step, JSON-Patch operation) pairs, as an EHRView records them."""
        return cls((Change.of(step, op) for step, op in ops), initial)

    @property
    def touched(self) -> list[Key]:
        """Every resource the trial wrote, in the order it first wrote them."""
        return list(self._versions)

    def history(self, key: Key) -> tuple[dict[str, Any] | None, list[tuple[int, dict[str, Any] | None]]]:
        """A written resource as the trial found it, then (step, version) after each step that changed it."""
        steps, versions = self._versions[key]
        return versions[0], list(zip(steps[1:], versions[1:]))

    def written_by(self, step: int) -> list[Key]:
        """The resources the trial had written at or before ``step``."""
        return [key for key, (steps, _) in self._versions.items() if steps[1] <= step]

    def resource(self, key: Key, step: int) -> dict[str, Any] | None:
        """A resource as it stood after ``step`` (0 = before the first call)."""
        found = self._versions.get(key)
        if found is None:
            return self.initial(key)
        steps, versions = found
        return versions[bisect_right(steps, step) - 1]

    def state(self, step: int) -> StateAt:
        """The EHR after ``step``, as a read-only mapping of (type, id) to resource."""
        return StateAt(self, step)

    def diff(self, step_a: int, step_b: int) -> list[ResourceDiff]:
        """What changed after ``step_a`` up to and including ``step_b`` (a > b gives the changes undone)."""
        diffs = []
        for key in self._versions:
            before, after = self.resource(key, step_a), self.resource(key, step_b)
            if before == after:
                continue
            status: Literal["added", "changed", "removed"] = (
                "added" if before is None else "removed" if after is None else "changed"
            )
            root = f"/{escape(key[0])}/{escape(key[1])}"
            fields = tuple(
                FieldChange(op["path"][len(root) :] or "/", op.get("replaced"), op.get("value"))
                for op in diff_ops(root, before, after)
            )
            diffs.append(ResourceDiff(key[0], key[1], status, fields))
        return diffs


class StateAt:
    """The EHR after one step: the trial's versions of what it touched, the initial state for the rest (read-only)."""

    def __init__(self, timeline: Timeline, step: int):
        self.timeline, self.step = timeline, step

    def get(self, key: Key) -> dict[str, Any] | None:
        return self.timeline.resource(key, self.step)

    def __getitem__(self, key: Key) -> dict[str, Any]:
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found

    def touched(self) -> dict[Key, dict[str, Any]]:
        """The resources the trial had written by this step (created or changed) and that still exist."""
        return {key: doc for key in self.timeline.written_by(self.step) if (doc := self.get(key)) is not None}
