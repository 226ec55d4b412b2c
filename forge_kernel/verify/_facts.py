"""The patient facts a text states, as the grounding check reads them: values with their units, spans of time,
years, calendar dates, and the drugs and diagnoses it names (zh and en).

Not facts: thresholds and the other end of their ranges ("≥ 28.0", "<130/80 mmHg", "至少 2–3 次"), reference
values ("正常范围 18.5–23.9"), counts ("4 种", "9 readings"), the digits of identifiers, standards and times
("LUNG-IO-301", "WS/T 428-2013", "22:00"), a month and day written with a hyphen alone ("11-26", which may be a
range), names a clause denies ("未开具利伐沙班", "no DVT": an absence is not something a record shows), and names
a clause proposes or concludes ("建议改用依折麦布", "符合糖尿病酮症酸中毒": the agent's judgement, not the record's).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Literal

from ._text import (
    StatedDate,
    bounded,
    cue_pattern,
    language,
    located_dates,
    negated,
    negation,
    normal,
    occurrences,
    phrase_pattern,
)
from .quantities import TIME_WORDS, Amount, Located, located_amounts
from .tables import TEXTS_CACHED, diagnosis_vocabulary, drug_vocabulary, mentioned

FactKind = Literal["value", "duration", "year", "date", "drug", "diagnosis"]
MONTH_DAY = re.compile(r"(?<![\d.\-/])(?:1[0-2]|0?[1-9])-(?:3[01]|[12]\d|0?[1-9])(?![\d.\-/])")
PARTNER = re.compile(r"(?<!\d)(\d+(?:\.\d+)?)\s*(?:/|-|–|—|~|～|至|to)\s*$")
"""The number a number is paired or ranged with, right before it ("130/80", "2–3", "18.5-23.9")."""
NUMBER = re.compile(r"\d+(?:\.\d+)?")
STANDARD = re.compile(r"^-(?:19|20)\d{2}(?!\d)")
"""A number followed by -<year> is a standard's or document's number ("WS/T 428-2013")."""


@dataclass(frozen=True)
class Fact:
    """One fact a text states."""

    kind: FactKind
    written: str
    amount: Amount | None = None
    """value, duration, year: the number and its unit."""
    decimals: int = 0
    approximate: bool = False
    """Written as an estimate ("约 48 小时", "about 0.1 kg")."""
    date: StatedDate | None = None
    name: str = ""
    """drug, diagnosis: its name in the vocabulary."""

    @property
    def number(self) -> Amount:
        """``amount``, of a fact of a kind that has one."""
        assert self.amount is not None
        return self.amount

    @property
    def day(self) -> StatedDate:
        """``date``, of a date."""
        assert self.date is not None
        return self.date


@dataclass(frozen=True)
class Cues:
    """The cue words of ``tables/language.yaml`` that the facts are read with, compiled."""

    counters: re.Pattern
    """Right after a whole number."""
    approximate: re.Pattern
    """Right before a number."""
    references: re.Pattern
    proposals_before: re.Pattern
    proposals_after: re.Pattern


@cache
def cues() -> Cues:
    data = language()
    zh = "|".join(map(re.escape, data["counters"]["zh"]))
    counters = re.compile(rf"^(?:\s*(?:{zh})|\s+(?:{cue_pattern(data['counters']['en']).pattern}))", re.I)
    about = re.compile(rf"(?:{cue_pattern(data['approximate']).pattern})\s*$", re.I)
    return Cues(
        counters,
        about,
        cue_pattern(data["references"]),
        cue_pattern(data["proposals"]["before"]),
        cue_pattern(data["proposals"]["after"]),
    )


def blank(text: str, spans: list[tuple[int, int]]) -> str:
    """The text with the spans replaced by spaces (same length)."""
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def clause(text: str, start: int, end: int) -> tuple[int, int]:
    """Where the clause of the span ``text[start:end]`` (a normalised text) begins and ends."""
    begins = max((m.end() for m in negation().terminator.finditer(text, 0, start)), default=0)
    stop = negation().terminator.search(text, end)
    return begins, stop.start() if stop else len(text)


def referenced(text: str, start: int) -> bool:
    """A reference cue stands earlier in the clause of ``text[start]``."""
    lowered = text.lower()
    return bool(cues().references.search(lowered, clause(lowered, start, start)[0], start))


def proposed(text: str, start: int, end: int) -> bool:
    """The name at ``text[start:end]`` (a normalised text) is in a clause that proposes or concludes it."""
    begins, ends = clause(text, start, end)
    return bool(cues().proposals_before.search(text, begins, start) or cues().proposals_after.search(text, end, ends))


def not_a_fact(text: str, found: Located) -> bool:
    """Thresholds (and their partners), reference values, counts and standards' numbers."""
    number = NUMBER.match(text, found.start)
    assert number is not None  # an amount is located at its number
    digits_end = found.start + number.end() - found.start
    partner = PARTNER.search(text, 0, found.start)
    count = (not found.amount.unit or found.amount.quantity is None) and found.decimals == 0
    return (
        bounded(text, found.start, found.end)
        or (partner is not None and bounded(text, partner.start(1), partner.end(1)))
        or referenced(text, found.start)
        or (count and bool(cues().counters.search(text[digits_end : digits_end + 16])))
        or bool(STANDARD.match(text[digits_end:]))
    )


def amount_fact(text: str, found: Located) -> Fact:
    """A value, a span of time or a year."""
    about = bool(cues().approximate.search(text[max(0, found.start - 12) : found.start]))
    value, unit = found.amount.value, found.amount.unit
    readable = unit and found.amount.quantity is not None
    if found.decimals == 0 and 1900 <= value <= 2100 and not readable:
        return Fact("year", found.written, found.amount)
    if not unit:
        rest = text[found.end :].lstrip()
        word = next((w for w in TIME_WORDS if rest.startswith(w)), None)
        if word:
            return Fact("duration", f"{found.written} {word}", Amount(value, TIME_WORDS[word]), found.decimals, about)
    elif readable and found.amount.quantity.dimensionality == {"[time]": 1}:
        return Fact("duration", found.written, found.amount, found.decimals, about)
    return Fact("value", found.written, found.amount, found.decimals, about)


def named(text: str, vocabulary: dict[str, str], kind: FactKind) -> list[Fact]:
    """The names of a vocabulary the text states somewhere as facts: neither denied nor proposed there."""
    said = normal(text)
    facts = []
    for name in mentioned(text, vocabulary):
        terms = [term for term, first in vocabulary.items() if first == name]
        stated = [
            term
            for term in terms
            for start, end in occurrences(said, term)
            if not negated(said, start, end) and not proposed(said, start, end)
        ]
        if stated:
            facts.append(Fact(kind, stated[0], name=name))
    return facts


@lru_cache(maxsize=TEXTS_CACHED)
def stated_facts(text: str) -> tuple[Fact, ...]:
    """Every fact the text states (see the module's docstring for what is not one)."""
    plain = unicodedata.normalize("NFKC", text)
    names = named(plain, drug_vocabulary(), "drug") + named(plain, diagnosis_vocabulary(), "diagnosis")
    dates = located_dates(plain.lower())
    spans = [(start, start + len(d.written)) for start, d in dates] + [m.span() for m in MONTH_DAY.finditer(plain)]
    spans += [
        m.span() for f in names if NUMBER.search(f.written) for m in phrase_pattern(f.written).finditer(normal(plain))
    ]  # the digits of a name ("type 2 diabetes") are not a value
    blanked = blank(plain, spans)
    amounts = [amount_fact(blanked, found) for found in located_amounts(blanked) if not not_a_fact(blanked, found)]
    return tuple([Fact("date", d.written, date=d) for _, d in dates] + amounts + names)
