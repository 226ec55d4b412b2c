"""The policy engine: patient scope on every record a call names, write permission and must-happen-before rules."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from itertools import chain
from typing import Any

from pydantic import BaseModel

from ..ehr import EHRView, patient_of
from ..spec import CROSS_PATIENT, PRECEDENCE, UNAUTHORIZED_READ, UNAUTHORIZED_WRITE, Event, Policy
from .base import ANY_TYPE, Args, Refers, Tool

REFERENCE = re.compile(r"(?<![A-Za-z0-9])([A-Z][A-Za-z]+)/([A-Za-z0-9][A-Za-z0-9.\-]{0,63}(?<!\.))")
"""A "Type/id" reference, also inside text (a full stop after it is not part of the id)."""


@dataclass
class Decision:
    denied: str | None = None
    """Why the call is refused, or None when it may run."""
    message: str = ""
    flags: list[str] = field(default_factory=list)
    """Breaches recorded on a call that still runs."""


def decide(
    policy: Policy, patient_id: str, view: EHRView, tool: Tool, args: BaseModel, events: list[Event]
) -> Decision:
    """Check one validated call against the package policy, given what already happened."""
    chosen, given = (args.resource_type(), args.records()) if isinstance(args, Args) else (None, iter(()))
    for rtype, rid in chain(named_records(args, in_text=tool.kind == "write"), given):
        record = view.get(rtype, rid)
        if record is not None and patient_of(record) not in (None, patient_id):
            return Decision(CROSS_PATIENT, "only the current patient's record may be read, referenced or written")
    unreadable = policy.readable_types is not None and chosen not in policy.readable_types
    if chosen and tool.kind != "write" and unreadable:
        return Decision(UNAUTHORIZED_READ, f"this task may not read {chosen}")
    writes = chosen if tool.writes == ANY_TYPE else tool.writes
    if writes and writes not in policy.writable_types:
        return Decision(UNAUTHORIZED_WRITE, f"this task may not write {writes}")
    flags: list[str] = []
    for rule in policy.precedence:
        if rule.action != tool.name:
            continue
        done = {e.tool for e in events if e.ok}
        missing = [name for name in rule.requires if name not in done]
        if missing and rule.enforce:
            return Decision(PRECEDENCE, f"{tool.name} needs {', '.join(missing)} first")
        flags.extend(f"{PRECEDENCE}:{name}" for name in missing)
    return Decision(flags=flags)


def named_records(args: BaseModel, in_text: bool) -> Iterator[tuple[str, str]]:
    """(type, id) of every record the arguments name: arguments marked with ``Refers`` (in nested models too), and
    with ``in_text`` every "Type/id" reference in any text of the arguments (what a write would put on record)."""
    for name, mark in field_marks(type(args)):
        value = getattr(args, name)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, BaseModel):
                yield from named_records(item, in_text=False)
            elif mark is not None and mark.rtype and isinstance(item, str):
                yield mark.rtype, item
            elif mark is not None and isinstance(item, str) and (reference := REFERENCE.fullmatch(item)):
                yield reference[1], reference[2]
    if in_text:
        for text in strings(args.model_dump()):
            yield from ((m[1], m[2]) for m in REFERENCE.finditer(text))


@cache
def field_marks(model: type[BaseModel]) -> tuple[tuple[str, Refers | None], ...]:
    """Each field of an argument model with its ``Refers`` mark (None when it has none), read once per model."""
    return tuple(
        (name, next((m for m in info.metadata if isinstance(m, Refers)), None))
        for name, info in model.model_fields.items()
    )


def strings(value: Any) -> Iterator[str]:
    """Every string inside a dumped model (dict values, list items)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)
