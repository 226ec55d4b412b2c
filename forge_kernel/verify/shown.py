"""What a trial put in front of the agent: the records its successful calls returned, and everything else it was
given or wrote itself, as the grounding and provenance checks read it."""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any, Iterable, Iterator

from ..ehr import EHRImage
from ..spec import Package
from ..spec.trajectory import Event
from .quantities import Amount, is_number, located_amounts, normal_unit
from .tables.terms import compact
from .text import StatedDate, normal, stated_dates
from .verdict import GradeContext

ISO_TIME = re.compile(r"\d{4}-\d{2}-\d{2}(?:[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[+-]\d{2}:?\d{2}|Z)?)?")
YEAR = re.compile(r"(?<!\d)(?:19|20)\d{2}(?!\d)")


def walk(node: Any) -> Iterator[Any]:
    """Every value inside a JSON-like value, depth first, containers included."""
    yield node
    children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
    for child in children:
        yield from walk(child)


def returned_references(events: Iterable[Event], image: EHRImage) -> set[str]:
    """``Type/id`` of every resource of the initial EHR that a successful call returned to the agent, whole or as a
    search row (a dict with its ``type`` or ``resourceType`` and ``id``)."""
    found = set()
    for event in events:
        if not event.ok:
            continue
        for d in walk(event.result):
            key = (d.get("type") or d.get("resourceType"), str(d.get("id"))) if isinstance(d, dict) else None
            if key in image.resources:
                found.add("/".join(key))
    return found


def decimals(value: float | int) -> int:
    """How many decimals a JSON number is written with (12.0 has one, 12 none)."""
    return len(repr(value).partition(".")[2]) if isinstance(value, float) else 0


@dataclass(frozen=True)
class ShownAmount:
    """A number the agent was shown, with its unit and written precision."""

    amount: Amount
    decimals: int


def amounts_in(node: Any) -> Iterator[ShownAmount]:
    """The numbers of a JSON-like value (see ``Shown.amounts``)."""
    if is_number(node):
        yield ShownAmount(Amount(float(node)), decimals(node))
    elif isinstance(node, str):
        yield from (ShownAmount(a.amount, a.decimals) for a in located_amounts(node))
    elif isinstance(node, list):
        for item in node:
            yield from amounts_in(item)
    elif isinstance(node, dict):
        quantity = is_number(node.get("value")) and isinstance(node.get("unit"), str)
        if quantity:
            yield ShownAmount(Amount(float(node["value"]), normal_unit(node["unit"])), decimals(node["value"]))
        for key, value in node.items():
            if not (quantity and key == "value"):
                yield from amounts_in(value)


@dataclass(frozen=True)
class Shown:
    """Everything the trial showed the agent or the agent wrote into the record: the texts and numbers of the
    results of its successful calls, the arguments of its successful writes, the task's instruction (every
    language) and context, and the frozen clock."""

    values: tuple[Any, ...]
    now: datetime

    @cached_property
    def texts(self) -> list[str]:
        """Every string, normalised (``text.normal``)."""
        return [normal(v) for v in walk(list(self.values)) if isinstance(v, str)]

    @cached_property
    def compact_text(self) -> str:
        """All the texts as one, in the form the vocabularies compare (``tables.terms.compact``)."""
        return compact("\n".join(self.texts))

    @cached_property
    def amounts(self) -> list[ShownAmount]:
        """Every number: JSON numbers, quantities (``{value, unit}``, whose value is not also a bare number) and the
        amounts written in texts."""
        return list(amounts_in(list(self.values)))

    @cached_property
    def dates(self) -> list[StatedDate]:
        """Every calendar date the texts write, and today's."""
        today = StatedDate("now", self.now.year, self.now.month, self.now.day)
        return [today, *(d for text in self.texts for d in stated_dates(text))]

    @cached_property
    def years(self) -> set[int]:
        return {self.now.year, *(int(y) for text in self.texts for y in YEAR.findall(text))}

    @cached_property
    def instants(self) -> list[float]:
        """POSIX times of every ISO date and time the texts write (a date alone is its midnight), and now."""
        found = {self.now.timestamp()}
        for text in self.texts:
            for m in ISO_TIME.finditer(text):
                try:
                    moment = datetime.fromisoformat(m.group().upper().replace("Z", "+00:00"))
                except ValueError:
                    continue
                found.add((moment if moment.tzinfo else moment.replace(tzinfo=self.now.tzinfo)).timestamp())
        return sorted(found)


def shown(ctx: GradeContext) -> Shown:
    """What this trial showed its agent (see ``Shown``)."""
    return shown_by(ctx.package, ctx.events)


def shown_by(package: Package, events: list[Event]) -> Shown:
    """What a trial of the package that made these events showed its agent (see ``Shown``)."""
    task = package.public.task
    results = [e.result for e in events if e.ok]
    written = [e.args for e in events if e.ok and e.kind == "write"]
    return Shown((*results, *written, dict(task.instruction), task.context), package.public.environment.now)
