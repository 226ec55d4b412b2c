"""What an answer says of a measurement (a laboratory test or a vital sign, ``tables/labs.yaml``) against what the
trial was shown: a status word beside a value (normal, high, low, abnormal), judged by the reference range the
record gives for that reading (a calculator's BMI and eGFR by the standard it names, ``computed_records``); a trend
word (rising, falling, stable), judged by the series of that measurement; a value written after a measurement's
name with only linking words between (``linked``) that is none of its readings shown (a number a call returned
elsewhere, a protocol's threshold, is none). Only what the trial's reads returned counts, never the agent's writes.

A status word qualifies the number before it in its clause, or, when its own holds little else, in the clause
before ("血钾 5.9 mmol/L（外院），正常": asides in brackets are skipped); without a number, the latest reading of
the measurement named there. The number's measurement is the one named last before it in the sentence. A trend
word speaks of the measurement named last before it in that stretch too. Denied and hypothetical words claim
nothing, nor do the phrases listed as ``none`` (正常上限, "normal saline"). The cue words are in
``tables/language.yaml`` (``measures``, ``value_links``).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from ._claims import SENTENCE
from ._facts import MONTH_DAY, blank, clause, not_a_fact
from ._text import cue_pattern, language, located_dates, negated, normal, words_in
from .quantities import Amount, Located, amount, in_unit, is_number, located_amounts
from .tables import CJK, TEXTS_CACHED, compact, first_names

STATUS_WORDS = ("normal", "high", "low", "abnormal")
TREND_WORDS = ("rising", "falling", "stable")
STABLE_RATIO = 1.5
"""A series whose highest reading is this many times its lowest was not stable."""
CLEARLY_OUTSIDE = 0.05
"""How far past a limit of the record's range (relative to the limit) a reading lies before a series that also has
a reading within the range was not stable: 5.6 mmol/L against an upper limit of 5.5 is at the limit, 5.9 past it."""
SHORT_CLAUSE = 4
"""A word's clause holds little else when at most this many characters (zh) or words (en) stand beside it."""
QUALIFIER = re.compile(r"\s*[（(][^（()）]*[)）]\s*$")
"""A qualifier after a record's name ("白细胞计数（外院）")."""
SEPARATED = re.compile(r"[\s:：=(（]*")
"""What may stand around the words between a measurement's name and its value, and alone between them (an opening
bracket: "ANC (1.5)")."""
LINKED_REACH = 40
"""The most characters between a measurement's name and a value read as its (``linked``)."""
RANGE_TO = re.compile(r"\s*(?:[-–—~～至到]|to)\s*\d")
"""What follows the first end of a range ("eGFR 30-44", "30 to 44"): a band, no reading of the patient's."""
ASIDE = re.compile(r"[（(][^（()）]*[)）]")
"""An aside in brackets: skipped in reading what a word outside it speaks of."""


@dataclass(frozen=True)
class Reading:
    """One value of a measurement the trial was shown, with the reference range its record gives."""

    concept: str
    amount: Amount
    written: str
    """The value as the record writes it ("9.8 10^9/L")."""
    time: str
    low: float | None = None
    high: float | None = None

    @property
    def status(self) -> str | None:
        """normal, high or low by the record's range; None where the record gives none."""
        if self.low is None and self.high is None:
            return None
        if self.low is not None and self.amount.value < self.low:
            return "low"
        return "high" if self.high is not None and self.amount.value > self.high else "normal"

    def __str__(self) -> str:
        bounds = f"{'' if self.low is None else f'{self.low:g}'}–{'' if self.high is None else f'{self.high:g}'}"
        return f"{self.written} ({self.time[:10] + '; ' if self.time else ''}range {bounds})"


@dataclass(frozen=True)
class Said:
    """What one sentence says of a measurement: a value (``word`` "value"), or a status or trend word and the
    number a status word qualifies."""

    concept: str
    word: str
    written: str
    sentence: str
    number: Amount | None = None
    decimals: int = 0
    """How many decimals the number is written with (a value is read as rounded to them)."""


@cache
def measure_names() -> dict[str, str]:
    """Compact name -> the measurement's first name (labs and vital signs)."""
    return first_names("labs")


def measure_of(name: str) -> str | None:
    """The measurement a record's name stands for, a trailing qualifier aside; None if it is none we know."""
    names = measure_names()
    return names.get(compact(name)) or names.get(compact(QUALIFIER.sub("", name)))


@dataclass(frozen=True)
class MeasureCues:
    names: re.Pattern
    words: re.Pattern
    kinds: dict[str, str]
    """Normalised cue -> normal, high, low, abnormal, rising, falling or none."""
    hypothetical: re.Pattern


@cache
def measure_cues() -> MeasureCues:
    data = language()["measures"]
    kinds = {normal(cue): kind for kind, cues in data.items() for cue in cues}
    return MeasureCues(
        cue_pattern(measure_names()), cue_pattern(kinds), kinds, cue_pattern(language()["claims"]["hypothetical"])
    )


def size(text: str) -> int:
    """Chinese characters and Latin words."""
    return len(CJK.findall(text)) + words_in(text)


def pairing_start(text: str, cue: tuple[int, int]) -> int:
    """Where the text a word at ``cue`` may speak of begins: its clause, or the clause before it too when its own
    holds little else."""
    begins, ends = clause(text, *cue)
    if begins and size(text[begins : cue[0]]) + size(text[cue[1] : ends]) <= SHORT_CLAUSE:
        return clause(text, begins - 1, begins - 1)[0]
    return begins


def aside_blanked(text: str, at: int) -> str:
    """The text with every aside in brackets blanked (same length) but the one holding ``at``."""
    return ASIDE.sub(lambda m: m.group() if m.start() <= at < m.end() else " " * len(m.group()), text)


def values_in(text: str) -> list[Located]:
    """The patient's values a sentence writes: dates blanked, thresholds and reference values left out."""
    spans = [(start, start + len(d.written)) for start, d in located_dates(text)]
    blanked = blank(text, spans + [m.span() for m in MONTH_DAY.finditer(text)])
    return [found for found in located_amounts(blanked) if not not_a_fact(blanked, found)]


def written(answer: str, length: int) -> str:
    """The answer in NFKC but its case kept (units are read there: "10^9/L"), where that is as long as its
    normalised form (so that places agree); else the normalised form."""
    plain = unicodedata.normalize("NFKC", answer)
    return plain if len(plain) == length else normal(answer)


@lru_cache(maxsize=TEXTS_CACHED)
def measure_claims(answer: str) -> tuple[Said, ...]:
    """Every value, status word and trend word the answer says of a measurement, sentence by sentence."""
    cues, found = measure_cues(), []
    said = normal(answer)
    plain = written(answer, len(said))
    for sentence in SENTENCE.finditer(said):
        text = sentence.group()
        if not cues.names.search(text):
            continue
        as_written = plain[sentence.start() : sentence.end()]
        found += attached_values(text, as_written)
        found += [c for cue in cues.words.finditer(text) if (c := word_claim(text, as_written, cue))]
    return tuple(found)


def conditional(text: str, start: int, end: int) -> bool:
    """The span ``text[start:end]`` (a normalised text) is denied or hypothetical in its clause ("未降至", "如血钾升至
    6.5 mmol/L", "if the ANC is 1.5")."""
    begins, ends = clause(text, start, end)
    return negated(text, start, end) or bool(measure_cues().hypothetical.search(text, begins, ends))


def word_claim(text: str, as_written: str, cue: re.Match) -> Said | None:
    """What a status or trend word of a sentence (``text`` normalised, ``as_written`` as written) says, and of
    which measurement and number; None where it says nothing of one."""
    cues, word = measure_cues(), measure_cues().kinds[cue.group()]
    if word == "none" or conditional(text, *cue.span()):
        return None
    view = aside_blanked(text, cue.start())
    start = pairing_start(view, cue.span())
    values = [v for v in values_in(aside_blanked(as_written, cue.start())) if start <= v.start < cue.start()]
    number = values[-1] if values and word in STATUS_WORDS else None
    names = [(m.end(), measure_names()[compact(m.group())]) for m in cues.names.finditer(view, 0, cue.start())]
    anchor = number.start if number else cue.start()
    concept = next((c for end, c in reversed(names) if end <= anchor), None)
    if concept is None or not (number or any(end >= start for end, _ in names)):
        return None
    return Said(concept, word, cue.group(), as_written.strip(), number.amount if number else None)


@cache
def linked() -> re.Pattern:
    """What may stand between a measurement's name and its value: the ``value_links`` of ``tables/language.yaml``,
    status words, and trend words that name the value reached ("降至", "rose to"; not "下降 20", a change), each
    with ``SEPARATED`` marks around it."""
    data = language()
    trends = [normal(c) for kind in ("rising", "falling") for c in data["measures"][kind]]
    reached = [c for c in trends if c.endswith(("to", "至", "到"))]
    moving = [c for c in trends if c not in reached]
    status = [c for kind in STATUS_WORDS for c in data["measures"][kind]]
    words = cue_pattern(data["value_links"] + status + reached).pattern
    link = rf"(?:{words}|(?:{cue_pattern(moving).pattern})\s*(?:to|至|到))"
    return re.compile(rf"{SEPARATED.pattern}(?:(?:{link}){SEPARATED.pattern})*")


def attached_values(text: str, as_written: str) -> list[Said]:
    """The values a sentence writes after a measurement's name with only ``linked`` words between ("血钾 5.9
    mmol/L", "potassium of 5.9", "ANC 计数为 1.5", "the ANC was within range at 1.5"); one linked by words is none
    where it is denied or hypothetical (``conditional``: "如血钾升至 6.5 则停药")."""
    names = [(m.end(), measure_names()[compact(m.group())]) for m in measure_cues().names.finditer(text)]
    found = []
    for value in values_in(as_written):
        concept = next((c for end, c in reversed(names) if end <= value.start), None)
        gap_start = max((end for end, _ in names if end <= value.start), default=value.start)
        gap = text[gap_start : value.start]
        if (
            concept
            and len(gap) <= LINKED_REACH
            and linked().fullmatch(gap)
            and (SEPARATED.fullmatch(gap) or not conditional(text, value.start, value.end))
            and not RANGE_TO.match(as_written, value.end)
        ):
            found.append(Said(concept, "value", value.written, as_written.strip(), value.amount, value.decimals))
    return found


DECREASED_EGFR = {"G3a", "G3b", "G4", "G5"}
"""The KDIGO stages of an eGFR under 60 mL/min/1.73m2: decreased whoever the patient is."""


def computed_records(results: Iterable[Any]) -> list[dict[str, Any]]:
    """The calculators' results as the named records ``readings`` reads: a BMI with the normal range of the standard
    the result names, an eGFR of stage G3a to G5 with 60 as its lower bound. An eGFR of G1 (normal or high) or G2
    (mildly decreased, normal for many an older patient) gives none: a status word beside it is not judged."""
    found: list[dict[str, Any]] = []
    for result in results:
        if not isinstance(result, dict):
            continue
        normal_range = result.get("normal_range")
        if is_number(result.get("bmi")) and isinstance(normal_range, list) and len(normal_range) == 2:
            low, high = normal_range
            value = {"value": result["bmi"], "unit": result.get("unit") or "kg/m2"}
            found.append({"name": "BMI", "value": value, "range": {"low": low, "high": high}})
        elif is_number(result.get("egfr")) and result.get("stage") in DECREASED_EGFR:
            value = {"value": result["egfr"], "unit": result.get("unit") or "mL/min/1.73m2"}
            found.append({"name": "eGFR", "value": value, "range": {"low": 60}})
    return found


def range_of(record: dict[str, Any], unit: str) -> tuple[float | None, float | None]:
    """The low and high ends of a record's reference range (``range``: low, high, unit), in ``unit``."""
    given = record.get("range")
    if not isinstance(given, dict):
        return None, None
    ends = [amount(given.get(end), given.get("unit") or unit) for end in ("low", "high")]
    low, high = (None if a is None else a.value if a.unit == unit else in_unit(a, unit) for a in ends)
    return low, high


def readings(named: Iterable[dict[str, Any]]) -> dict[str, list[Reading]]:
    """Every reading of a known measurement among the named records shown, by measurement, oldest first: a record's
    value with its range (a calculator's result among them, ``computed_records``), and the first, lowest, highest
    and last points of a series summary."""
    found: dict[str, list[Reading]] = defaultdict(list)
    for node in named:
        concept = measure_of(node["name"])
        if concept is None:
            continue
        value = amount(node.get("value")) if isinstance(node.get("value"), dict) else None
        if value is not None:
            shown = f"{value.value:g} {node['value'].get('unit') or ''}".strip()
            found[concept].append(
                Reading(concept, value, shown, str(node.get("time") or ""), *range_of(node, value.unit))
            )
        elif isinstance(node.get("first"), dict) and isinstance(node.get("last"), dict):
            points = [node[key] for key in ("first", "min", "max", "last") if isinstance(node.get(key), dict)]
            for point in [*points, {"value": node.get("mean")}]:  # the mean undated: no point of the trend
                point_value = amount(point.get("value"), node.get("unit") or "")
                if point_value is not None:
                    shown = f"{point_value.value:g} {node.get('unit') or ''}".strip()
                    found[concept].append(Reading(concept, point_value, shown, str(point.get("time") or "")))
    return {concept: sorted(rows, key=lambda r: r.time) for concept, rows in found.items()}


def in_unit_of(stated: Amount, unit: str) -> float | None:
    """The stated number in ``unit``: converted where both have a unit (None where they cannot be), as written
    where either has none."""
    return in_unit(stated, unit) if stated.unit and unit and stated.unit != unit else stated.value


def same_number(stated: Amount, shown: Amount, decimals: int | None = None) -> bool:
    """The stated number is the one shown, converted into its unit (``in_unit_of``), up to rounding: within 0.051
    or 0.5%, or, given the decimals the stated number is written with, half its last digit ("4" for 4.2)."""
    value = in_unit_of(stated, shown.unit)
    rounded = 0.0 if decimals is None else 0.5 * 10**-decimals + 1e-9
    return value is not None and abs(value - shown.value) <= max(0.051, 0.005 * abs(shown.value), rounded)


def status_problem(said: Said, rows: list[Reading]) -> str | None:
    """Why a status word disagrees with the reading it qualifies, judged by the record's range, or None."""
    if said.number is not None:
        rows = [r for r in rows if same_number(said.number, r.amount)]
    reading = next((r for r in reversed(rows) if r.status is not None), None)
    if reading is None:
        return None
    agrees = reading.status in ("high", "low") if said.word == "abnormal" else reading.status == said.word
    return None if agrees else f"{reading} is {reading.status} by the record's range"


def trend_problem(said: Said, rows: list[Reading]) -> str | None:
    """Why a trend word disagrees with the series shown, or None: rising and falling by its first and last dated
    readings, stable by all of them (``instability``)."""
    if said.word == "stable":
        return instability(rows)
    dated = [r for r in rows if r.time]
    if len(dated) < 2 or dated[-1].amount.unit != dated[0].amount.unit:
        return None
    first, last = dated[0], dated[-1]
    if last.amount.value == first.amount.value or (last.amount.value > first.amount.value) == (said.word == "rising"):
        return None
    went = "rose" if last.amount.value > first.amount.value else "fell"
    return f"the series shown {went} from {first.written} to {last.written}"


def past_range(reading: Reading) -> float:
    """How far past a limit of its record's range a reading lies, relative to that limit (0 within the range or
    without one)."""
    value, low, high = reading.amount.value, reading.low, reading.high
    if low is not None and value < low:
        return (low - value) / abs(low) if low else math.inf
    if high is not None and value > high:
        return (value - high) / abs(high) if high else math.inf
    return 0.0


def instability(rows: list[Reading]) -> str | None:
    """Why a measurement's series shown (its dated readings, in one unit) was not stable, or None: its highest
    reading is ``STABLE_RATIO`` times its lowest or more, or one reading is within the record's range and another
    ``CLEARLY_OUTSIDE`` past it. A smaller change is left to the reader (how much change is stable is a clinical
    judgement per measurement), and so is a series of one reading or of more than one unit."""
    dated = [r for r in rows if r.time]
    if len(dated) < 2 or len({r.amount.unit for r in dated}) > 1:
        return None
    lowest = min(dated, key=lambda r: r.amount.value)
    highest = max(dated, key=lambda r: r.amount.value)
    if lowest.amount.value > 0 and highest.amount.value >= STABLE_RATIO * lowest.amount.value:
        span = f"{lowest.written} ({lowest.time[:10]}) to {highest.written} ({highest.time[:10]})"
        return f"the series shown ranges from {span}"
    within = next((r for r in dated if r.status == "normal"), None)
    outside = max(dated, key=past_range)
    if within is not None and past_range(outside) > CLEARLY_OUTSIDE:
        return f"the series shown has {within} within the record's range and {outside} {outside.status} by it"
    return None


def attribution_problem(said: Said, rows: list[Reading], shown: dict[str, list[Reading]]) -> str | None:
    """Why a value given for a measurement is none of its readings shown, or None: another measurement's reading,
    or no reading at all where the measurement's own can be compared with it (a value in a unit that cannot be
    converted into theirs is left to the grounding check). A number that a call returned elsewhere (a protocol's
    threshold, another patient's count) is no reading of the patient's."""
    number = said.number
    assert number is not None  # a value
    comparable = [r for r in rows if in_unit_of(number, r.amount.unit) is not None]
    if not comparable or any(same_number(number, r.amount, said.decimals) for r in comparable):
        return None
    other = next(
        (r for rs in shown.values() for r in rs if r.concept != said.concept and same_number(number, r.amount)), None
    )
    if other is not None:
        return f"{other.written} is a {other.concept} reading, not a {said.concept} one"
    return f"the {said.concept} shown is {' / '.join(dict.fromkeys(r.written for r in reversed(comparable)))}"


def record_disagreement(answer: str, named: Callable[[], Iterable[dict[str, Any]]]) -> str | None:
    """The first status or trend word, or value, of the answer that the record shown contradicts, named with its
    sentence; ``named`` gives the named records shown (asked for only when the answer says something of a
    measurement)."""
    said = measure_claims(answer)
    if not said:
        return None
    shown = readings(named())
    for claim in said:
        rows = shown.get(claim.concept, [])
        if claim.word == "value":
            problem = attribution_problem(claim, rows, shown)
        elif claim.word in TREND_WORDS:
            problem = trend_problem(claim, rows)
        else:
            problem = status_problem(claim, rows)
        if problem:
            return f"says {claim.concept} {claim.written!r} ({claim.sentence!r}), but {problem}"
    return None
