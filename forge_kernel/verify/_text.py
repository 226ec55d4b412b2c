"""Reading free text as a grader must: phrases found with their negation (zh and en), synonyms, thresholds,
drug names and the dates a text states.

Text is compared after NFKC normalisation and case folding ("２０ＭＧ" is "20mg"); a phrase matches with any
spacing where it has spaces or changes script ("20 mg" matches "20mg", "B级" matches "B 级"), and never inside a
longer word or number ("obese" is not in "nonobese", "5.9" is not in "15.9" or "5.95", but "62" is in "62.0"; a
word may go on: "decreas" matches "decreasing"). A phrase is *affirmed* where it occurs without a negation cue
reaching it (``tables/language.yaml``): "未停用" does not affirm 停用, "not obese" does not affirm "obese".
"""  # noqa: RUF002  (full-width letters and digits on purpose: what NFKC folds)

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

import yaml

from ..tools import drug_names
from .tables import CJK

TABLES = Path(__file__).with_name("tables")
Synonyms = str | list[str]
"""A phrase, or a list of phrases any one of which will do."""


@lru_cache(maxsize=16384)
def normal(text: str) -> str:
    """NFKC, case-folded, with typographic apostrophes made plain: the form every comparison here uses."""
    return unicodedata.normalize("NFKC", text).casefold().replace("’", "'")  # noqa: RUF001  (the typographic one)


def is_word_char(char: str) -> bool:
    return char.isascii() and char.isalnum()


@lru_cache(maxsize=4096)
def phrase_pattern(phrase: str) -> re.Pattern:
    """A regex for a phrase in normalised text: flexible spacing, no match inside a longer word or number."""
    phrase = normal(phrase).strip()
    parts: list[str] = []
    for i, char in enumerate(phrase):
        if char.isspace():
            if parts and parts[-1] != r"\s*":
                parts.append(r"\s*")
            continue
        previous = phrase[i - 1] if i else ""
        if (
            previous
            and not previous.isspace()
            and (previous.isdigit() != char.isdigit() or previous.isascii() != char.isascii())
        ):
            parts.append(r"\s*")
        parts.append(re.escape(char))
    start = r"(?<![a-z0-9])" if is_word_char(phrase[:1]) else ""
    if phrase[:1].isdigit():
        start = r"(?<![a-z0-9.])"
    end = ""
    if phrase[-1:].isdigit():  # the same number may go on with zeros ("62" is in "62.0"), no other digit
        end = r"0*(?!\d)" if re.search(r"\.\d+$", phrase) else r"(?:\.0+)?(?!\.?\d)"
    return re.compile(start + "".join(parts) + end)


def trie_pattern(phrases: Iterable[str]) -> str:
    """A regex for any of the phrases, the longest one that matches winning, written as a trie (a branch per next
    character), so that it is scanned in one pass however many phrases there are."""
    trie: dict[str, dict] = {}
    for phrase in phrases:
        node = trie
        for char in phrase:
            node = node.setdefault(char, {})
        node[""] = {}

    def branches(node: dict[str, dict]) -> str:
        alternatives = [re.escape(char) + branches(child) for char, child in sorted(node.items()) if char]
        if not alternatives:
            return ""
        body = "(?:" + "|".join(alternatives) + ")" if len(alternatives) > 1 or "" in node else alternatives[0]
        return body + "?" if "" in node else body

    return branches(trie)


def cue_pattern(phrases: Iterable[str]) -> re.Pattern:
    """One regex for a list of cue phrases, the longest that matches at a place winning, whole words for Latin ones
    (a phrase that mixes Latin and Chinese, "C反应蛋白", may touch a Chinese character)."""
    written = sorted({normal(p) for p in phrases if p})
    latin = [p for p in written if is_word_char(p[0]) and not CJK.search(p)]
    other = [p for p in written if p not in latin]
    parts = ([rf"\b{trie_pattern(latin)}\b"] if latin else []) + ([trie_pattern(other)] if other else [])
    return re.compile("|".join(parts))


@dataclass(frozen=True)
class Negation:
    """The negation cues of ``tables/language.yaml``, compiled."""

    before_zh: re.Pattern
    before_en: re.Pattern
    after_zh: re.Pattern
    after_en: re.Pattern
    pseudo: re.Pattern
    terminator: re.Pattern
    reach: dict[str, int]


@cache
def language() -> dict:
    """``tables/language.yaml``: negation and bound cues."""
    return yaml.safe_load((TABLES / "language.yaml").read_text(encoding="utf-8"))


@cache
def negation() -> Negation:
    """The negation cues, compiled once."""
    data = language()["negation"]
    words = [*data["terminators"]["zh"], *(rf"\b{w}\b" for w in data["terminators"]["en"])]
    terminator = re.compile(r"[,，。;；:：!！?？\n()（）\[\]【】]|\.(?!\d)|" + "|".join(words))
    return Negation(
        cue_pattern(data["before"]["zh"]),
        cue_pattern(data["before"]["en"]),
        cue_pattern(data["after"]["zh"]),
        cue_pattern(data["after"]["en"]),
        cue_pattern(data["pseudo"]["zh"] + data["pseudo"]["en"]),
        terminator,
        data["reach"],
    )


@cache
def bound_cues() -> tuple[re.Pattern, re.Pattern]:
    """Cues right before a number, and right after it (past its unit), that make it a threshold; the ">" of an
    arrow ("62.0 -> 56.4") is none."""
    data = language()["bounds"]
    return (
        re.compile(rf"(?<![-=])(?:{cue_pattern(data['before']).pattern})\s*(?:about|approximately|约)?\s*$", re.I),
        re.compile(rf"^\s*[^\s\d,，。;；]{{0,2}}?\s*(?:{cue_pattern(data['after']).pattern})", re.I),
    )


def bounded(text: str, start: int, end: int) -> bool:
    """Whether the number written at ``text[start:end]`` is a threshold ("≥ 28.0", "more than 5%", "12 分以下")
    rather than a value."""
    before, after = bound_cues()
    return bool(before.search(text[max(0, start - 24) : start]) or after.search(text[end : end + 12]))


@lru_cache(maxsize=1024)
def masked(text: str) -> str:
    """Normalised text with its pseudo-negations blanked out (same length), for cue search."""
    return negation().pseudo.sub(lambda m: "\0" * len(m.group()), text)


def words_in(gap: str) -> int:
    return len(re.findall(r"[a-z0-9']+", gap))


def cjk_chars_in(gap: str) -> int:
    return len(re.sub(r"\s", "", gap))


def negated(text: str, start: int, end: int) -> bool:
    """Whether the span ``text[start:end]`` of a normalised text is denied by a cue in its clause."""
    rules, blanked = negation(), masked(text)
    clause_start = max((m.end() for m in rules.terminator.finditer(blanked, 0, start)), default=0)
    before = blanked[clause_start:start]
    for cue in rules.before_zh.finditer(before):
        if cjk_chars_in(before[cue.end() :]) <= rules.reach["zh"]:
            return True
    for cue in rules.before_en.finditer(before):
        if words_in(before[cue.end() :]) <= rules.reach["en"]:
            return True
    stop = rules.terminator.search(blanked, end)
    after = blanked[end : stop.start() if stop else len(blanked)]
    zh = rules.after_zh.search(after)
    if zh and cjk_chars_in(after[: zh.start()]) <= rules.reach["after_zh"]:
        return True
    en = rules.after_en.search(after)
    return bool(en and words_in(after[: en.start()]) <= rules.reach["after_en"])


def occurrences(text: str, phrase: str) -> list[tuple[int, int]]:
    """Spans of a phrase in a normalised text."""
    return [m.span() for m in phrase_pattern(phrase).finditer(text)]


def affirms(text: str, phrase: str) -> bool:
    """The normalised text states the phrase somewhere without denying it."""
    return any(not negated(text, s, e) for s, e in occurrences(text, phrase))


def mentions(text: str, phrase: str) -> bool:
    """The normalised text contains the phrase at all (affirmed or denied)."""
    return bool(phrase_pattern(phrase).search(text))


def synonyms(entry: Synonyms) -> list[str]:
    return [entry] if isinstance(entry, str) else list(entry)


def label(entry: Synonyms) -> str:
    """How a keyword (or its synonyms) is named in a reason."""
    return " / ".join(synonyms(entry))


# --- names of drugs ---------------------------------------------------------------------------------------------


@cache
def drug_aliases() -> list[tuple[str, str]]:
    """(normalised name or alias, canonical name) of every drug in the table, longest first."""
    return sorted(((normal(alias), name) for alias, name in drug_names().items()), key=lambda p: -len(p[0]))


@lru_cache(maxsize=4096)
def drug_of(text: str) -> str:
    """The canonical name of the drug a text names (an alias, or a longer text containing one, as in
    "阿司匹林肠溶片 100 mg"); a drug the table does not know is its own normalised text. Remembered per text."""
    written = normal(text).strip()
    for alias, name in drug_aliases():
        if alias == written or phrase_pattern(alias).search(written):
            return name
    return written


# --- dates a text states ----------------------------------------------------------------------------------------

MONTHS = {
    m: i for i, m in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1)
}
MONTH = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
DATE_FORMS = [
    (re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)"), ("y", "m", "d")),
    (re.compile(r"(?:(\d{4})\s*年\s*)?(?<!\d)(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]"), ("y", "m", "d")),
    (re.compile(rf"(?<!\d)(\d{{1,2}})(?:st|nd|rd|th)?\s+{MONTH},?(?:\s+(\d{{4}}))?"), ("d", "m", "y")),
    (re.compile(rf"\b{MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?(?!\d|:\d)(?:,?\s+(\d{{4}}))?"), ("m", "d", "y")),
    (re.compile(r"(?<![\d\-/.])(\d{1,2})-(\d{1,2})(?=[\sT]+\d{1,2}:\d{2})"), ("m", "d")),
]
"""2026-11-23, 2026/11/23, 2026年11月23日, 11月23日, 23 Nov 2026, November 23, 2026, and 11-23 before a time."""


@dataclass(frozen=True)
class StatedDate:
    written: str
    year: int | None
    month: int
    day: int

    def same_day(self, other: StatedDate) -> bool:
        """The same day; a date written without its year matches that day in any year."""
        years_agree = self.year is None or other.year is None or self.year == other.year
        return years_agree and (self.month, self.day) == (other.month, other.day)


@lru_cache(maxsize=16384)
def located_dates(text: str) -> tuple[tuple[int, StatedDate], ...]:
    """Every calendar date a normalised text writes, with where it starts, once per place. Remembered per text, as
    ``normal`` is."""
    found: dict[int, StatedDate] = {}
    for pattern, order in DATE_FORMS:
        for m in pattern.finditer(text):
            parts = dict(zip(order, m.groups()))
            month = MONTHS.get(parts["m"][:3]) if parts["m"] and not parts["m"].isdigit() else int(parts["m"])
            day = int(parts["d"])
            if m.start() not in found and month and 1 <= month <= 12 and 1 <= day <= 31:
                found[m.start()] = StatedDate(
                    m.group().strip(), int(parts["y"]) if parts.get("y") else None, month, day
                )
    return tuple(sorted(found.items(), key=lambda item: item[0]))


def stated_dates(text: str) -> list[StatedDate]:
    """Every calendar date a normalised text writes, once per place."""
    return [date for _, date in located_dates(text)]
