"""Field-by-field differences of the EHR between any two steps of a trial."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from .image import EHRImage
from .patch import apply_op, clone, diff_ops, escape, resource_key


@dataclass(frozen=True)
class FieldChange:
    path: str
    """JSON Pointer inside the resource."""
    before: Any
    after: Any


@dataclass(frozen=True)
class ResourceDiff:
    rtype: str
    rid: str
    status: Literal["added", "changed", "removed"]
    fields: tuple[FieldChange, ...]


def resource_at(image: EHRImage, changes: list[tuple[int, dict]], key: tuple[str, str], step: int) -> dict | None:
    """A resource as it stood after ``step`` (0 = the initial state)."""
    base = image.resources.get(key)
    doc = {key[0]: {key[1]: clone(base)}} if base is not None else {key[0]: {}}
    for at, op in changes:
        if at <= step and resource_key(op["path"]) == key:
            apply_op(doc, op)
    return doc[key[0]].get(key[1])


def state_diff(image: EHRImage, changes: list[tuple[int, dict]], step_a: int, step_b: int) -> list[ResourceDiff]:
    """What changed in the EHR after ``step_a`` up to and including ``step_b``."""
    lo, hi = sorted((step_a, step_b))
    keys = dict.fromkeys(resource_key(op["path"]) for at, op in changes if lo < at <= hi)
    diffs = []
    for key in keys:
        before = resource_at(image, changes, key, step_a)
        after = resource_at(image, changes, key, step_b)
        if before == after:
            continue
        status = "added" if before is None else "removed" if after is None else "changed"
        root = f"/{escape(key[0])}/{escape(key[1])}"
        fields = tuple(
            FieldChange(op["path"][len(root):] or "/", op.get("replaced"), op.get("value"))
            for op in diff_ops(root, before, after)
        )
        diffs.append(ResourceDiff(key[0], key[1], status, fields))
    return diffs
