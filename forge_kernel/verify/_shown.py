"""What a trial put in front of the agent: the records its successful reads and computations returned, and what
else it was given, as the grounding and provenance checks read it. Never what it wrote: a value the agent put into
the record grounds nothing it says."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, tzinfo
from functools import cached_property, lru_cache
from typing import Any

from ..ehr import EHRImage
from ..spec import Event, Package
from ._text import StatedDate, normal, stated_dates
from .quantities import is_number, located_amounts, normal_unit
from .tables import TEXTS_CACHED, compact
from .verdict import GradeContext

ISO_TIME = re.compile(r"\d{4}-\d{2}-\d{2}(?:[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[+-]\d{2}:?\d{2}|Z)?)?")
YEAR = re.compile(r"(?<!\d)(?:19|20)\d{2}(?!\d)")


def walk(node: Any) -> Iterator[Any]:
    """Every value inside a JSON-like value, depth first, containers included."""
    stack = [node]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, dict):
            stack.extend(reversed(node.values()))
        elif isinstance(node, list):
            stack.extend(reversed(node))


def references_in(records: Iterable[tuple[Any, str]], image: EHRImage) -> set[str]:
    """``Type/id`` of every resource of the initial EHR among the records read (``Read.records``: a dict with its
    ``type`` or ``resourceType`` and ``id``, the resource whole or a search row)."""
    return {f"{t}/{i}" for t, i in records if (t, i) in image.resources}


def returned_references(events: Iterable[Event], image: EHRImage) -> set[str]:
    """``Type/id`` of every resource of the initial EHR that a successful call returned to the agent, whole or as a
    search row."""
    return set(returned_in_order(events, image))


def returned_in_order(events: Iterable[Event], image: EHRImage) -> list[str]:
    """``returned_references`` in the order the agent got them (call by call, each result as written), each once."""
    found = records_in([e.result for e in events if e.ok])
    return list(dict.fromkeys(f"{t}/{i}" for t, i in found if (t, i) in image.resources))


def records_in(node: Any) -> list[tuple[Any, str]]:
    """(type, id) of every dict with an ``id`` inside a JSON-like value, depth first: ``Read.records`` without
    reading the texts and numbers."""
    found, stack = [], [node]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "id" in node:
                found.append((node.get("type") or node.get("resourceType"), str(node["id"])))
            stack.extend(reversed(node.values()))
        elif isinstance(node, list):
            stack.extend(reversed(node))
    return found


def returned_to(ctx: GradeContext) -> set[str]:
    """``returned_references`` of this trial, found once per grading: the reads' from what it showed (read in one
    pass with the rest), the writes' from their results."""

    def found() -> set[str]:
        writes = records_in([e.result for e in ctx.events if e.ok and e.kind == "write"])
        image = ctx.view.image
        return references_in(shown(ctx).read.records, image) | references_in(writes, image)

    return ctx.remember("returned", found)


def decimals(value: float | int) -> int:
    """How many decimals a JSON number is written with (12.0 has one, 12 none)."""
    return len(repr(value).partition(".")[2]) if isinstance(value, float) else 0


def half_unit(decimals: int) -> float:
    """Half the last written digit: how far a rounded number may be from what it rounds."""
    return 0.5 * 10**-decimals


@dataclass(frozen=True)
class ShownNumbers:
    """The numbers shown in one unit, in order of their absolute values: each with how far it may be from the value
    it stands for (a decimal number is rounded, a whole one exact: 154 is not 155 rounded), and the widest of
    those, so that the numbers near a value are found by bisection."""

    values: list[float]
    tolerances: list[float]
    widest: float

    @classmethod
    def of(cls, numbers: list[ShownNumber]) -> ShownNumbers:
        numbers = sorted(numbers)
        return cls([v for v, _ in numbers], [t for _, t in numbers], max(t for _, t in numbers))

    def around(self, value: float, reach: float) -> Iterator[tuple[float, float]]:
        """(value, tolerance) of the numbers within ``reach`` of ``value`` plus the widest tolerance."""
        lo = bisect_left(self.values, value - reach - self.widest)
        hi = bisect_right(self.values, value + reach + self.widest)
        return zip(self.values[lo:hi], self.tolerances[lo:hi], strict=True)


ShownNumber = tuple[float, float]
"""A number shown: its absolute value, and how far it may be from the value it stands for (a decimal number is
rounded, a whole one exact: 154 is not 155 rounded)."""


def shown_number(value: float, decimals: int, unit: str) -> tuple[str, ShownNumber]:
    """A number shown, written with ``decimals`` decimals: its unit ("" for none) and the number (``ShownNumber``)."""
    return unit, (abs(value), half_unit(decimals) if decimals else 0.0)


@lru_cache(maxsize=TEXTS_CACHED, typed=True)
def json_number(value: float | int, unit: str) -> tuple[str, ShownNumber]:
    """A JSON number shown, bare (``unit`` "") or as a quantity's value with its unit (remembered per number, its
    type and unit: the same values reach many trials)."""
    return shown_number(float(value), decimals(value), normal_unit(unit))


@dataclass(frozen=True)
class Read:
    """A JSON-like value read in one pass, depth first: its strings, its numbers (see ``Shown.amounts_by_unit``),
    its named records (dicts with a text ``name``: a lab row, a series summary) and the (type, id) of every dict
    that has both (a resource or a search row)."""

    texts: list[str]
    amounts: dict[str, list[ShownNumber]]
    """The numbers by unit ("" for none), units in the order first read."""
    named: list[dict]
    records: list[tuple[Any, str]]


PLAIN_TYPES = frozenset({str, dict, list, int, float, bool, type(None)})
"""The types JSON values are of, read by their type alone; a value of any other type is read as its base type."""


def base_type(value: Any) -> type | None:
    """What a value of another type is read as: str, dict, list or int (a number that is not a bool), else None."""
    return next((t for t in (str, dict, list) if isinstance(value, t)), int if is_number(value) else None)


def read(node: Any) -> Read:
    """The strings, numbers, named records and records of a JSON-like value (``Read``). Depth first: each container
    is read through an iterator of its children on a stack, a text or number as soon as it is reached."""
    found = Read([], defaultdict(list), [], [])
    texts, amounts, named, records = found.texts, found.amounts, found.named, found.records
    stack = [iter((node,))]
    while stack:
        for child in stack[-1]:
            cls: type | None = type(child)
            if cls not in PLAIN_TYPES:
                cls = base_type(child)
            if cls is str:
                texts.append(child)
                written = located_shown_amounts(child)
                if written:  # most texts write no number
                    for unit, number in written:
                        amounts[unit].append(number)
            elif cls is dict:
                get = child.get
                if isinstance(get("name"), str):
                    named.append(child)
                if "id" in child:
                    records.append((get("type") or get("resourceType"), str(child["id"])))
                value = get("value")
                if value is not None and is_number(value) and isinstance(get("unit"), str):
                    unit, number = json_number(value, child["unit"])  # read with its unit, not again as a number
                    amounts[unit].append(number)
                    stack.append(iter([v for k, v in child.items() if k != "value"]))
                else:
                    stack.append(iter(child.values()))
                break
            elif cls is list:
                stack.append(iter(child))
                break
            elif cls is int or cls is float:
                unit, number = json_number(child, "")
                amounts[unit].append(number)
        else:
            stack.pop()
    return found


@lru_cache(maxsize=TEXTS_CACHED)
def located_shown_amounts(text: str) -> tuple[tuple[str, ShownNumber], ...]:
    """The amounts a text writes, as numbers shown with their units (remembered per text)."""
    return tuple(shown_number(a.amount.value, a.decimals, a.amount.unit) for a in located_amounts(text))


@lru_cache(maxsize=TEXTS_CACHED)
def years_in(text: str) -> frozenset[int]:
    """The years a normalised text writes."""
    return frozenset(int(y) for y in YEAR.findall(text))


@lru_cache(maxsize=TEXTS_CACHED)
def instants_in(text: str, tz: tzinfo | None) -> tuple[float, ...]:
    """POSIX times of the ISO dates and times a normalised text writes (a date alone is its midnight in ``tz``)."""
    found = []
    for m in ISO_TIME.finditer(text):
        try:
            moment = datetime.fromisoformat(m.group().upper().replace("Z", "+00:00"))
        except ValueError:
            continue
        found.append((moment if moment.tzinfo else moment.replace(tzinfo=tz)).timestamp())
    return tuple(found)


@dataclass(frozen=True)
class Shown:
    """Everything the trial showed the agent: the texts and numbers of the results of its successful calls that are
    not writes, the task's instruction (every language) and context, and the frozen clock."""

    values: tuple[Any, ...]
    now: datetime

    @cached_property
    def read(self) -> Read:
        """Every string as written, every number (``amounts``) and every named record, in one pass."""
        return read(list(self.values))

    @cached_property
    def texts(self) -> list[str]:
        """Every string, normalised (``text.normal``)."""
        return list(map(normal, self.read.texts))

    @cached_property
    def compact_text(self) -> str:
        """All the texts as one, in the form the vocabularies compare (``tables.terms.compact``)."""
        return compact("\n".join(self.texts))

    @cached_property
    def amounts_by_unit(self) -> dict[str, ShownNumbers]:
        """Every number by its unit ("" for none), sorted (``ShownNumbers``): JSON numbers, quantities (``{value,
        unit}``, whose value is not also a bare number) and the amounts written in texts."""
        return {unit: ShownNumbers.of(numbers) for unit, numbers in self.read.amounts.items()}

    @cached_property
    def dates(self) -> list[StatedDate]:
        """Every calendar date the texts write, and today's."""
        today = StatedDate("now", self.now.year, self.now.month, self.now.day)
        return [today, *(d for text in self.texts for d in stated_dates(text))]

    @cached_property
    def years(self) -> set[int]:
        return {self.now.year}.union(*map(years_in, self.texts))

    @cached_property
    def instants(self) -> list[float]:
        """POSIX times of every ISO date and time the texts write (a date alone is its midnight), and now."""
        tz = self.now.tzinfo
        return sorted({self.now.timestamp()}.union(*(instants_in(text, tz) for text in self.texts)))


def shown(ctx: GradeContext) -> Shown:
    """What this trial showed its agent (see ``Shown``), read once per grading."""
    return ctx.remember("shown", lambda: shown_by(ctx.package, ctx.events))


def shown_by(package: Package, events: list[Event]) -> Shown:
    """What a trial of the package that made these events showed its agent (see ``Shown``)."""
    task = package.public.task
    results = [e.result for e in events if e.ok and e.kind != "write"]
    return Shown((*results, dict(task.instruction), task.context), package.public.environment.now)
