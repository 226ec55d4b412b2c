"""Edits of the gold solution: a counterexample or a valid variant written as what it changes, not as a copy.

Every call an edit names is a call of the gold, by its index in ``gold.calls`` (0-based, as in field paths) or as
``<tool>#<n>``, the n-th gold call of that tool (as ``forge selftest --mutants`` names it), whatever the other edits
do; so edits can be read, and are applied, in any order. ``apply_edits`` expands them into a full trajectory.
"""

from __future__ import annotations

import copy
from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator

from .package import Strict
from .trajectory_file import ToolCall, TrajectoryFile

EditOp = Literal["drop", "replace", "insert", "set", "add", "delete"]
RESULT_FIELDS = ("answer", "output", "status", "confidence")
"""The parts of the final result a path may start with (any other first segment names a gold call)."""


class Edit(Strict):
    """One change to the gold: drop / replace / insert a call, or set / add / delete a value at a path."""

    op: EditOp = Field(
        description=(
            "drop: leave out the call `at`; replace: put `call` in its place; insert: add `call` before the call `at` "
            "(at the end without `at`); set: change the value at `path`; add: a new key at `path`; delete: remove it."
        )
    )
    at: int | str | None = Field(None, description="A gold call: its index in gold.calls (0-based) or `<tool>#<n>`.")
    call: ToolCall | None = Field(None, description="The new call, for replace and insert.")
    path: str | None = Field(
        None,
        description=(
            "For set, add, delete: `answer`, `output.<dotted path>`, or `<call>.<dotted path in its args>` where <call> "
            "is an index or `<tool>#<n>` (e.g. `medication_request_create#1.dose`); list items by index."
        ),
    )
    value: Any = Field(None, description="The new value, for set and add.")

    @model_validator(mode="after")
    def _shape(self) -> Edit:
        needs = {
            "drop": ("at",),
            "replace": ("at", "call"),
            "insert": ("call",),
            "set": ("path", "value"),
            "add": ("path", "value"),
            "delete": ("path",),
        }[self.op]
        missing = [
            name
            for name in needs
            if name not in self.model_fields_set  # a value may be null, not the others
            or (name != "value" and getattr(self, name) is None)
        ]
        if missing:
            raise ValueError(f"{self.op} needs {' and '.join(missing)}")
        extra = [
            name
            for name in ("at", "call", "path", "value")
            if name in self.model_fields_set and name not in needs and not (self.op == "insert" and name == "at")
        ]
        if extra:
            raise ValueError(f"{self.op} takes no {' or '.join(extra)}")
        return self


class EditError(ValueError):
    """An edit that does not fit the gold; ``field`` is where, inside the list of edits (``1.at``)."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field, self.message = field, message


def call_labels(calls: list[ToolCall]) -> list[str]:
    """``<tool>#<n>`` of each call: the n-th call of that tool."""
    seen: dict[str, int] = {}
    out = []
    for call in calls:
        seen[call.tool] = seen.get(call.tool, 0) + 1
        out.append(f"{call.tool}#{seen[call.tool]}")
    return out


def resolve(ref: int | str, calls: list[ToolCall], end_ok: bool = False) -> int:
    """The gold index a call reference names; ``end_ok``: the index just past the last call is allowed too."""
    labels = call_labels(calls)
    if isinstance(ref, int) or ref.isdigit():
        index = int(ref)
        if not 0 <= index < len(calls) + end_ok:
            raise EditError("at", f"call {index} out of range (the gold has {len(calls)} calls, 0 to {len(calls) - 1})")
        return index
    if ref in labels:
        return labels.index(ref)
    tool = ref.partition("#")[0]
    count = sum(c.tool == tool for c in calls)
    raise EditError(
        "at",
        f"no {ref} in the gold (it calls {tool} {count} time{'s' * (count != 1)})"
        if "#" in ref
        else f"{ref!r} is not a call: an index or <tool>#<n>",
    )


def walk_to(root: Any, keys: list[str], path: str) -> tuple[Any, str | int]:
    """The container holding the last key of ``keys`` and that key (an int for a list), every step before it
    existing."""
    node = root
    key: str | int
    for depth, key in enumerate(keys):
        last = depth == len(keys) - 1
        if isinstance(node, list):
            if not key.isdigit() or int(key) >= len(node):
                raise EditError("path", f"{path}: no item {key} (the list has {len(node)})")
            key = int(key)
        elif not isinstance(node, dict):
            raise EditError("path", f"{path}: {'.'.join(keys[:depth])} is not a mapping or a list")
        if last:
            return node, key
        if isinstance(node, dict) and key not in node:
            raise EditError("path", f"{path}: no {'.'.join(keys[: depth + 1])}")
        node = node[key]
    raise EditError("path", "empty path")


def change_value(data: dict, calls: list[dict], gold: list[ToolCall], edit: Edit, gone: dict[int, int]) -> None:
    """Apply a set / add / delete edit to the trajectory's data (calls by gold index)."""
    assert edit.path is not None  # set, add and delete have one (Edit._shape)
    head, _, rest = edit.path.partition(".")
    if head in RESULT_FIELDS:
        root, keys = data, [head, *rest.split(".")] if rest else [head]
    else:
        try:
            index = resolve(head, gold)
        except EditError as exc:
            raise EditError("path", exc.message) from None
        if index in gone:
            raise EditError("path", f"call {head} is already dropped or replaced by edit {gone[index]}")
        if not rest:
            raise EditError("path", f"{edit.path}: name an argument of the call (`{head}.<arg>`)")
        root, keys = calls[index]["args"], rest.split(".")
    node, key = walk_to(root, keys, edit.path)
    present = key in node if isinstance(node, dict) else True
    if edit.op == "add":
        if present:
            raise EditError("path", f"{edit.path} exists already: set it")
        if isinstance(node, list):
            raise EditError("path", f"{edit.path}: add a key to a mapping, set a list item")
        node[key] = copy.deepcopy(edit.value)
    elif not present:
        raise EditError("path", f"{edit.path}: no such value (add a new one with op: add)")
    elif edit.op == "set":
        node[key] = copy.deepcopy(edit.value)
    else:
        del node[key]


def apply_edits(gold: TrajectoryFile, edits: list[Edit]) -> TrajectoryFile:
    """The trajectory the edits make of the gold; an edit that does not fit is an EditError naming it."""
    data = gold.model_dump(mode="json")
    calls = data.pop("calls")
    before: dict[int, list[dict]] = {}
    replaced: dict[int, dict | None] = {}
    gone: dict[int, int] = {}
    for j, edit in enumerate(edits):
        try:
            if edit.op in ("drop", "replace"):
                assert edit.at is not None  # Edit._shape
                index = resolve(edit.at, gold.calls)
                if index in gone:
                    raise EditError("at", f"call {edit.at} is already dropped or replaced by edit {gone[index]}")
                gone[index] = j
                replaced[index] = edit.call.model_dump(mode="json") if edit.call else None
            elif edit.op == "insert":
                assert edit.call is not None  # Edit._shape
                index = len(gold.calls) if edit.at is None else resolve(edit.at, gold.calls, end_ok=True)
                before.setdefault(index, []).append(edit.call.model_dump(mode="json"))
            else:
                change_value(data, calls, gold.calls, edit, gone)
        except EditError as exc:
            raise EditError(f"{j}.{exc.field}", exc.message) from None
    out = []
    for i, call in enumerate([*calls, None]):
        out.extend(before.get(i, []))
        if call is not None:
            new = replaced.get(i, call)
            if new is not None:
                out.append(new)
    try:
        return TrajectoryFile.model_validate({**data, "calls": out})
    except ValidationError as exc:
        err = exc.errors()[0]
        raise EditError(
            ".".join(map(str, err["loc"])) or "(edits)", f"makes an invalid trajectory: {err['msg']}"
        ) from None


def value_edits(before: Any, after: Any, path: str) -> list[Edit]:
    """set / add / delete edits that turn the mapping ``before`` into ``after`` (nested mappings key by key)."""
    if not (isinstance(before, dict) and isinstance(after, dict)):
        return [] if before == after else [Edit(op="set", path=path, value=after)]
    out = [Edit(op="delete", path=f"{path}.{key}") for key in before if key not in after]
    for key, value in after.items():
        if key not in before:
            out.append(Edit(op="add", path=f"{path}.{key}", value=value))
        else:
            out.extend(value_edits(before[key], value, f"{path}.{key}"))
    return out


def edits_between(gold: TrajectoryFile, trajectory: TrajectoryFile) -> list[Edit]:
    """Edits of the gold that make ``trajectory`` (``apply_edits`` gives it back): calls matched in order, a changed
    call of the same tool as argument edits, the final result field by field."""
    from difflib import SequenceMatcher

    labels = call_labels(gold.calls)
    old = [c.model_dump_json() for c in gold.calls]
    new = [c.model_dump_json() for c in trajectory.calls]
    out: list[Edit] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        pairs = list(zip(range(i1, i2), range(j1, j2)))
        for i, j in pairs:
            a, b = gold.calls[i], trajectory.calls[j]
            if a.tool == b.tool:
                out.extend(value_edits(a.args, b.args, labels[i]))
            else:
                out.append(Edit(op="replace", at=labels[i], call=b))
        out.extend(Edit(op="drop", at=labels[i]) for i in range(i1 + len(pairs), i2))
        at = labels[i2] if i2 < len(labels) else None
        out.extend(
            Edit(op="insert", call=trajectory.calls[j], **({"at": at} if at else {}))
            for j in range(j1 + len(pairs), j2)
        )
    mine, theirs = (
        gold.model_dump(mode="json", exclude={"calls"}),
        trajectory.model_dump(mode="json", exclude={"calls"}),
    )
    for key in RESULT_FIELDS:
        if mine[key] != theirs[key]:
            out.append(Edit(op="set", path=key, value=theirs[key]))
    return out
