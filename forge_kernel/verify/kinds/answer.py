"""Answer verifiers: the final text and the structured output the agent returned, judged by meaning."""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any

from pydantic import Field, field_validator, model_validator

from ...spec import Strict
from .._claims import contradiction, denied_output
from .._measures import computed_records, record_disagreement
from .._shown import shown
from .._text import Synonyms, affirms, bounded, drug_of, label, mentions, normal, stated_dates, synonyms
from ..matchers import Matcher, valid_regex, values_at, within
from ..quantities import Amount, Located, amount, in_unit, located_amounts, normal_unit
from ..registry import Outcome, verifier
from ..tables import compact, diagnosis_vocabulary
from ..verdict import GradeContext


class TextParams(Strict):
    all: list[Synonyms] = Field(default_factory=list)
    """Keywords that must all be affirmed; an entry may be a list of synonyms, any one of which counts."""
    any: list[Synonyms] = Field(default_factory=list)
    """At least one of these must be affirmed."""
    none: list[str] = Field(default_factory=list)
    """Phrases that must not be affirmed; one only denied ("未申请", "not ordered") is allowed."""
    negation: bool = True
    """False: a phrase counts wherever it is written, denied or not (a topic the answer must name, such as the
    measurement that is missing)."""

    def problem(self, text: str) -> str | None:
        """Why the text does not say what is required, or None (see verify/text.py for how phrases are found)."""
        said = normal(text)
        found = affirms if self.negation else mentions
        says = lambda entry: any(found(said, s) for s in synonyms(entry))  # noqa: E731
        present = [w for w in self.none if found(said, w)]
        if present:
            return f"forbidden phrase present: {', '.join(present)}"
        missing = [
            label(w) + (" (only denied)" if any(mentions(said, s) for s in synonyms(w)) else "")
            for w in self.all
            if not says(w)
        ]
        if missing:
            return f"keyword missing: {', '.join(missing)}"
        if self.any and not any(says(w) for w in self.any):
            return f"none of: {', '.join(map(label, self.any))}"
        return None


@verifier("answer.text")
def text(ctx: GradeContext, p: TextParams) -> Outcome:
    """Keywords affirmed and forbidden phrases not affirmed in the answer: case- and spacing-insensitive, with
    negation in zh and en ("未停用" does not say 停用) and synonym lists."""
    problem = p.problem(ctx.result.answer)
    return Outcome(problem is None, problem or "answer text as required")


class NumberMatch(Strict):
    """An expected amount: the value, its tolerance and, optionally, its unit."""

    value: float
    tol: float = Field(0.0, ge=0)
    """In the expected unit."""
    unit: str | None = None
    """The expected value's unit: amounts in other dimensions are not candidates, and one written in another unit
    of the same dimension ("0.5 g" for 500 mg) matches only with ``convertible``. Without a unit, numbers compare
    by value alone."""
    convertible: bool = False

    def comparable(self, found: Amount) -> bool:
        """The found amount is a candidate for this value: no unit is expected, it is a bare number, or it is in
        the expected unit or one of its dimension."""
        unit = normal_unit(self.unit)
        return self.unit is None or not found.unit or found.unit == unit or in_unit(found, unit) is not None

    def matches(self, found: Amount) -> bool:
        """The found amount is the expected one (converted only when ``convertible``)."""
        unit = normal_unit(self.unit)
        if self.unit is None or not found.unit or found.unit == unit:
            return within(found.value, self.value, self.tol)
        converted = in_unit(found, unit) if self.convertible else None
        return converted is not None and within(converted, self.value, self.tol)

    def problem(self, found: list[Amount]) -> str | None:
        """None when the candidates agree on the expected value. No candidate fails, and so does an answer
        offering several candidate values (one right, another not)."""
        offered = [a for a in found if self.comparable(a)]
        wrong = [a for a in offered if not self.matches(a)]
        if len(wrong) == len(offered):
            return f"no number within {self.describe()} (saw {len(offered)} number(s))"
        if wrong:
            others = ", ".join(dict.fromkeys(f"{a.value:g}{' ' + a.unit if a.unit else ''}" for a in wrong))
            return f"several candidate values: {self.value:g} and {others}"
        return None

    def describe(self) -> str:
        return f"{self.value:g} ± {self.tol:g}{' ' + self.unit if self.unit else ''}"


class NumberParams(NumberMatch):
    pattern: str | None = None
    """A regex whose first group is where the number stands (a unit written right after it is read too), matched
    in any case ("Potassium" for potassium); by default every number in the answer. Numbers the pattern finds may be bare; without a pattern, only amounts
    written with a unit are candidates when ``unit`` is given."""

    @field_validator("pattern")
    @classmethod
    def _one_group(cls, value: str | None) -> str | None:
        return valid_regex(value, groups=1)


ALTERNATIVE = re.compile(r"\s*(?:or|或者?|、)\s*", re.IGNORECASE)
"""What stands between values offered as alternatives ("28.5 or 35.6", "28.5、30.1 mmol/L")."""


def offered_after(answer: str, found: list[Located], first: Located) -> list[Located]:
    """The amounts written right after ``first`` as alternatives to it, in order."""
    out, last = [], first
    for f in (f for f in found if f.start >= first.end):
        if not ALTERNATIVE.fullmatch(answer[last.end : f.start]):
            break
        out.append(f)
        last = f
    return out


def stated(answer: str, p: NumberParams) -> list[Located]:
    """The amounts of the answer that could be the expected value, where they are written; thresholds ("≥ 28.0",
    "up to 96 h") are not. With a pattern, the amounts where its group stands and any offered right after them as
    alternatives."""
    found = [f for f in located_amounts(answer) if not bounded(answer, f.start, f.end)]
    if p.pattern is None:
        return [f for f in found if p.unit is None or f.amount.unit]
    picked = []
    for m in re.finditer(p.pattern, answer, re.IGNORECASE):
        if m.group(1) is None or bounded(answer, m.start(1), m.end(1)):
            continue
        inside = [f for f in found if m.start(1) <= f.start < m.end(1)]
        if not inside and re.fullmatch(r"\s*-?\d+(?:\.\d+)?\s*", m.group(1)):
            number = amount(m.group(1))
            assert number is not None  # a bare number
            inside = [Located(number, m.start(1), m.group(1), len(m.group(1).strip().partition(".")[2]))]
        if inside:
            picked += inside + offered_after(answer, found, inside[-1])
    return picked


@verifier("answer.number")
def number(ctx: GradeContext, p: NumberParams) -> Outcome:
    """One value in the answer, within tolerance of the expected amount, read with its unit; an answer offering
    several candidate values fails."""
    problem = p.problem([f.amount for f in stated(ctx.result.answer, p)])
    return Outcome(problem is None, problem or f"{p.describe()} found")


# --- structured answers -----------------------------------------------------------------------------------------

SEGMENT = r"[^.\[\]]+(?:\[[^=\]]+=[^\]]*\])?"
PATH = re.compile(rf"{SEGMENT}(?:\.{SEGMENT})*")


def field_values(doc: Any, path: str) -> list[Any]:
    """All values at a dotted path (lists searched element by element); a segment ``name[key=value]`` keeps the
    items whose ``key`` reads as ``value`` (e.g. ``assessments[protocol_id=LUNG-IO-301].eligibility``)."""
    nodes = [doc]
    for m in re.finditer(r"([^.\[\]]+)(?:\[([^=\]]+)=([^\]]*)\])?", path):
        key, where, wanted = m.groups()
        nodes = [v for node in nodes for v in values_at(node, key)]
        if where is not None:
            nodes = [v for v in nodes if isinstance(v, dict) and normal(str(v.get(where))) == normal(wanted)]
    return nodes


def leaf_values(values: list[Any]) -> list[Any]:
    return [v for value in values for v in (value if isinstance(value, list) else [value])]


class DateMatch(Strict):
    value: date
    tol_days: int = Field(0, ge=0)

    def problem(self, values: list[Any]) -> str | None:
        for value in leaf_values(values):
            found = read_date(value)
            if found is None:
                return f"{value!r} is not a date"
            if abs((found - self.value).days) > self.tol_days:
                return f"{found.isoformat()} is not {self.value.isoformat()} ± {self.tol_days} day(s)"
        return None


def read_date(value: Any) -> date | None:
    """A date from a date, a datetime, or a text that writes one date with its year (ISO or 2026年11月23日)."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if not isinstance(value, str):
        return None
    written = [(d.year, d.month, d.day) for d in stated_dates(normal(value)) if d.year is not None]
    if len(set(written)) != 1:
        return None
    try:
        return date(*written[0])
    except ValueError:
        return None


class ItemsMatch(Strict):
    """A list answer compared as a set; an item names an expected entry if it affirms one of its synonyms or names
    the same drug (by the drug table)."""

    equals: list[Synonyms] | None = None
    """Exactly these items, in any order: none missing, none extra."""
    contains: list[Synonyms] = Field(default_factory=list)
    """At least these items."""
    none: list[str] = Field(default_factory=list)
    """No item may name one of these."""

    def problem(self, values: list[Any]) -> str | None:
        items = [str(v) for v in leaf_values(values)]
        wanted = [*(self.equals or []), *self.contains]
        missing = [label(w) for w in wanted if not any(names(i, w) for i in items)]
        if missing:
            return f"missing item(s): {', '.join(missing)}"
        extra = [i for i in items if self.equals is not None and not any(names(i, w) for w in self.equals)]
        extra += [i for i in items if any(names(i, w) for w in self.none)]
        return f"item(s) not expected: {', '.join(extra)}" if extra else None


def names(item: str, entry: Synonyms) -> bool:
    """The item names the entry: it affirms one of the synonyms, or it is the same drug."""
    return any(affirms(normal(item), s) or drug_of(item) == drug_of(s) for s in synonyms(entry))


class FieldParams(Strict):
    """One field of the structured output and exactly one matcher for it. Typed matchers judge every value at the
    path (a list where one value is expected is several candidate values); ``match`` passes when any value
    matches."""

    path: str
    """Dotted path into the output; ``name[key=value]`` selects list items."""
    match: Matcher | None = None
    number: NumberMatch | None = None
    """An amount: a number (in the expected unit), ``{value, unit}``, or text such as "0.5 g"."""
    date: DateMatch | None = None
    choice: list[str | int | float | bool] | None = None
    """An enumeration: each value one of these (text compared case- and width-insensitively)."""
    boolean: bool | None = None
    """A JSON true or false, nothing else."""
    items: ItemsMatch | None = None
    text: TextParams | None = None
    """Free text, as ``answer.text`` judges it (all values joined)."""

    @field_validator("path")
    @classmethod
    def _readable(cls, value: str) -> str:
        if not PATH.fullmatch(value):
            raise ValueError("not a dotted path of names and [key=value] selections")
        return value

    @model_validator(mode="after")
    def _one_matcher(self):
        given = [
            n for n in ("match", "number", "date", "choice", "boolean", "items", "text") if getattr(self, n) is not None
        ]
        if len(given) != 1:
            raise ValueError(f"give exactly one matcher, not {len(given)}")
        return self

    def problem(self, values: list[Any]) -> str | None:
        """Why the values at the path do not match, or None."""
        if self.match is not None:
            return None if any(self.match.matches(v) for v in values) else "does not match"
        if self.number is not None:
            return self.number.problem([a for v in leaf_values(values) for a in field_amounts(v, self.number.unit)])
        if self.date is not None:
            return self.date.problem(values)
        if self.choice is not None:
            wrong = [v for v in leaf_values(values) if not any(same_choice(v, c) for c in self.choice)]
            return f"{wrong[0]!r} is not one of {self.choice}" if wrong else None
        if self.boolean is not None:
            wrong = [v for v in leaf_values(values) if v is not self.boolean]
            return f"{wrong[0]!r} is not {str(self.boolean).lower()}" if wrong else None
        if self.items is not None:
            return self.items.problem(values)
        assert self.text is not None  # one matcher is given (validated)
        return self.text.problem("\n".join(str(v) for v in leaf_values(values)))


def field_amounts(value: Any, unit: str | None) -> list[Amount]:
    """The amounts a field gives: a number (in the expected unit), ``{value, unit}``, or those a text writes."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [Amount(float(value), normal_unit(unit))]
    if isinstance(value, dict) and isinstance(value.get("value"), (int, float)):
        return [Amount(float(value["value"]), normal_unit(value.get("unit") or unit))]
    return [f.amount for f in located_amounts(str(value))] if isinstance(value, str) else []


def choice_key(text: str) -> str:
    """A text choice as choices compare: ``normal``, without surrounding white space."""
    return normal(text).strip()


def same_choice(value: Any, option: Any) -> bool:
    if isinstance(value, str) and isinstance(option, str):
        return choice_key(value) == choice_key(option)
    return type(value) is type(option) and value == option


@verifier("answer.field")
def field(ctx: GradeContext, p: FieldParams) -> Outcome:
    """A field of the structured output matches: untyped (``match``) or typed (number with unit and tolerance,
    date with tolerance in days, choice, boolean, items as a set, text with negation and synonyms)."""
    values = field_values(ctx.result.output, p.path)
    if not values:
        return Outcome(False, f"output.{p.path} absent")
    problem = p.problem(values)
    if problem:
        return Outcome(
            False, f"output.{p.path} {problem}" if problem == "does not match" else f"output.{p.path}: {problem}"
        )
    return Outcome(True, f"output.{p.path} matches")


class ConsistentParams(Strict):
    """No parameters: the claims are read from the answer (``verify/_claims.py``)."""


@verifier("answer.consistent", category="answer")
def consistent(ctx: GradeContext, p: ConsistentParams) -> Outcome:
    """The answer contradicts neither itself nor the record it was shown: no diagnosis or state affirmed in one
    sentence and denied in another, no two opposite states (``verify/_claims.py``); no status word beside a value
    that the record's reference range for that reading contradicts ("正常" beside a potassium above its range, or
    beside a BMI or a decreased eGFR that the calculator's standard places elsewhere), no
    trend word against the series shown (nor "stable" for one that clearly moved), no value given for a
    measurement that is none of its readings shown (``verify/_measures.py``); no diagnosis the structured output
    states that the answer denies. The sentences are named."""
    answer = ctx.result.answer
    problem = (
        contradiction(answer)
        or denied_output(answer, output_diagnoses(ctx))
        or record_disagreement(answer, lambda: [*shown(ctx).read.named, *computed_records(calculated(ctx))])
    )
    return Outcome(problem is None, problem or "no claim of the answer contradicts another, the output or the record")


def calculated(ctx: GradeContext) -> list[Any]:
    """The results of the trial's successful calculator calls."""
    return [e.result for e in ctx.events if e.ok and e.kind == "compute"]


def output_diagnoses(ctx: GradeContext) -> dict[str, str]:
    """Where the structured output names a diagnosis (a typed field of the diagnosis terminology, or an item of a list
    of them) -> the diagnosis's first name."""
    found = {}
    for name, spec in ctx.package.public.task.answer.items():
        given = ctx.result.output.get(name)
        item = spec.items if spec.type == "list" else spec
        if item is None or item.terms != "diagnoses":
            continue
        for i, value in enumerate(given if isinstance(given, list) else [given]):
            concept = diagnosis_vocabulary().get(compact(str(value))) if value is not None else None
            if concept:
                found[f"output.{name}" + (f"[{i}]" if spec.type == "list" else "")] = concept
    return found
