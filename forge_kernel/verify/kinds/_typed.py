"""The typed answer (``task.answer``), compared by type: quantities converted between units (pint), dates read in
the forms Chinese and English write them, concepts by the terminology tables, statuses from a closed set, records
field by field. The types are public; the values expected are hidden, in this verifier's params."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import Field, ValidationInfo, model_validator

from ...spec import AnswerField, Strict
from .._text import drug_of, normal
from ..expressions import is_expression
from ..matchers import within
from ..quantities import Amount, amount, in_unit, is_number, located_amounts, normal_unit
from ..registry import Outcome, verifier
from ..tables import compact, concept_of_written_code, diagnosis_vocabulary, drug_vocabulary, first_names, synonym_key
from ..verdict import GradeContext
from ._checks import nursing_item_of
from .answer import read_date

CONTAINS = "contains"
CODED = {
    "drugs": ("drug:",),
    "diagnoses": ("diagnosis:",),
    "labs": ("lab:", "order:"),
    "orders": ("order:",),
    "nursing_items": ("nursing_item:",),
}
"""The keys of the codes a terminology accepts (a lab may be given by an order's code)."""


class TypedParams(Strict):
    expect: dict[str, Any] = Field(min_length=1)
    """Each field's expected value, as its declared type reads it: a quantity's number in the declared unit, a
    number, a date (YYYY-MM-DD), an interval ``{start, end}``, a concept's name or a list of its names, a status
    option, true or false; a list: all its items and no other (``{contains: [...]}``: at least these); a record:
    some of its fields, each as its type reads it. A text field is not compared here: no pass rests on a keyword."""
    tol: dict[str, float] = Field(default_factory=dict)
    """Per field: a quantity's tolerance in its declared unit, a number's as it is, a date's or interval's in days."""

    @model_validator(mode="after")
    def _declared(self, info: ValidationInfo) -> TypedParams:
        declared: dict[str, AnswerField] | None = (info.context or {}).get("answer")
        if declared is None:  # validated without its package (the package's check gives the context)
            return self
        for name, value in self.expect.items():
            spec = declared.get(name)
            if spec is None:
                raise ValueError(f"expect.{name}: the task's answer declares no such field")
            problem = None if is_expression(value) else expectation_problem(spec, value)
            if problem:
                raise ValueError(at_path(f"expect.{name}", problem))
        unknown = [n for n in self.tol if n not in self.expect]
        if unknown:
            raise ValueError(f"tol.{unknown[0]}: no such expected field")
        return self


ASIDE = re.compile(r"\s*[（(][^（()）]*[)）]")
"""An aside in brackets in a diagnosis's name ("ACS (NSTEMI)"): the subtype of the diagnosis it names. Not in an
order's: "腹部CT（增强）" is another examination than the plain one."""


def known_key(terms: str, name: Any) -> str | None:
    """What a concept's name stands for in its terminology, or None where the terminology does not know the name:
    the name as given, else, a diagnosis, without its asides in brackets ("ACS (NSTEMI)" is ACS)."""
    text = str(name)
    key = key_of(terms, text)
    plain = ASIDE.sub("", text).strip() if terms == "diagnoses" else text
    return key if key or not plain or plain == text else key_of(terms, plain)


def key_of(terms: str, text: str) -> str | None:
    """A code of ``tables/codes.yaml`` by its concept; a drug by the drug tables, class members' names too; a
    diagnosis by the diagnosis table; a lab by the lab table, else as an order; an order by the order synonyms."""
    by_code = concept_of_written_code(text)
    if by_code and by_code.startswith(CODED[terms]):
        return by_code
    if terms == "drugs":
        drug = drug_vocabulary().get(compact(text)) or drug_of(text)
        return f"drug:{drug}" if drug in drug_vocabulary().values() else None
    if terms == "diagnoses":
        diagnosis = diagnosis_vocabulary().get(compact(text))
        return f"diagnosis:{diagnosis}" if diagnosis else None
    if terms == "nursing_items":  # a device or nursing item by the nursing rules table
        return f"nursing_item:{item}" if (item := nursing_item_of(text)) else None
    if terms == "labs" and compact(text) in first_names("labs"):
        return "lab:" + first_names("labs")[compact(text)]
    key = synonym_key(text)
    return key if key.startswith("order:") else None


def concept_key(terms: str, name: Any) -> str:
    """What a concept's name stands for: its terminology's key, else its compact text."""
    return known_key(terms, name) or compact(str(name))


def given_amount(value: Any) -> Amount | None:
    """The quantity a field gives: ``{value, unit}``, or a text that writes exactly one amount ("28.4 kg/m²")."""
    if isinstance(value, str):
        found = located_amounts(value)
        return found[0].amount if len(found) == 1 else None
    return amount(value) if isinstance(value, dict) else None


# ------------------------------------------------------------------ each type: its expected value, a given value


def quantity_mismatch(spec: AnswerField, want: Any, got: Any, tol: float) -> str | None:
    """A quantity with its unit, converted into the declared one, within the tolerance."""
    assert spec.unit is not None  # validated
    found = given_amount(got)
    if found is None or not found.unit:
        return f"{got!r} is not a quantity with its unit"
    value = found.value if found.unit == normal_unit(spec.unit) else in_unit(found, normal_unit(spec.unit))
    if value is None:
        return f"{found.value:g} {found.unit} is not in a unit of {spec.unit}"
    return None if within(value, want, tol) else f"{value:g} {spec.unit} is not {want:g} ± {tol:g}"


def number_mismatch(spec: AnswerField, want: Any, got: Any, tol: float) -> str | None:
    """A JSON number within the tolerance."""
    if not is_number(got):
        return f"{got!r} is not a number"
    return None if within(got, want, tol) else f"{got:g} is not {want:g} ± {tol:g}"


def date_mismatch(spec: AnswerField, want: Any, got: Any, tol: float) -> str | None:
    """A date in any written form, within the tolerance in days."""
    day, expected = read_date(got), read_date(want)
    if day is None:
        return f"{got!r} is not a date"
    assert expected is not None  # validated
    return None if abs((day - expected).days) <= tol else f"{day} is not {expected} ± {tol:g} day(s)"


DATE = AnswerField(type="date")
"""An interval's end, compared as a date."""
ENDS = ("start", "end")


def interval_mismatch(spec: AnswerField, want: Any, got: Any, tol: float) -> str | None:
    """Both ends, each a date within the tolerance; the first wrong end named."""
    if not isinstance(got, dict):
        return f"{got!r} is not a {{start, end}} interval"
    return next((at_path(f".{k}", p) for k in ENDS if (p := mismatch(DATE, want[k], got.get(k), tol))), None)


def concept_mismatch(spec: AnswerField, want: Any, got: Any, tol: float) -> str | None:
    """A name standing for the expected concept (or for one of the expected names) in the declared terminology."""
    assert spec.terms is not None  # validated
    names = want if isinstance(want, list) else [want]
    ok = concept_key(spec.terms, got) in {concept_key(spec.terms, n) for n in names}
    return None if ok else f"{got!r} is not {names[0]!r}"


def status_mismatch(spec: AnswerField, want: Any, got: Any, tol: float) -> str | None:
    """The expected option, case and width aside."""
    return None if normal(str(got)).strip() == normal(str(want)).strip() else f"{got!r} is not {want!r}"


def boolean_mismatch(spec: AnswerField, want: Any, got: Any, tol: float) -> str | None:
    """A JSON true or false, not a text that writes one."""
    return None if got is want else f"{got!r} is not {str(want).lower()}"


def list_mismatch(spec: AnswerField, want: Any, got: Any, tol: float) -> str | None:
    """A list compared as a set: every expected item given, and (unless only ``contains`` is asked) no other."""
    assert spec.items is not None  # validated
    if not isinstance(got, list):
        return f"{got!r} is not a list"
    item, wanted = spec.items, want[CONTAINS] if isinstance(want, dict) else want
    if item.type == "concept":
        missing, extra = unmatched_concepts(item, wanted, got)
    else:
        missing = [w for w in wanted if all(mismatch(item, w, g, tol) for g in got)]
        extra = [g for g in got if all(mismatch(item, w, g, tol) for w in wanted)]
    extra = [] if isinstance(want, dict) else extra
    if missing:
        return f"missing {', '.join(map(str, missing))}"
    keys = list(dict.fromkeys(k for w in wanted if isinstance(w, dict) for k in w))
    return f"not expected: {', '.join(str(shown(g, keys)) for g in extra)}" if extra else None


def unmatched_concepts(item: AnswerField, wanted: list[Any], got: list[Any]) -> tuple[list[Any], list[Any]]:
    """The expected concepts no given name stands for, and the given names that stand for none expected: each name
    looked up once (a list compared pair by pair would look each up once per pair)."""
    assert item.terms is not None  # validated
    terms = item.terms
    wanted_keys = [{concept_key(terms, n) for n in (w if isinstance(w, list) else [w])} for w in wanted]
    got_keys = [concept_key(terms, g) for g in got]
    missing = [w for w, keys in zip(wanted, wanted_keys) if keys.isdisjoint(got_keys)]
    extra = [g for g, key in zip(got, got_keys) if not any(key in keys for keys in wanted_keys)]
    return missing, extra


def shown(item: Any, keys: list[str]) -> Any:
    """A given item as a reason shows it: a record by the fields the expected ones name, not all it holds."""
    return {k: item.get(k) for k in keys} if isinstance(item, dict) and keys else item


def record_mismatch(spec: AnswerField, want: Any, got: Any, tol: float) -> str | None:
    """An object whose every expected field is as expected, by its declared type; the first wrong one named."""
    assert spec.fields is not None  # validated
    if not isinstance(got, dict):
        return f"{got!r} is not a record"
    fields = spec.fields
    return next((at_path(f".{k}", p) for k, w in want.items() if (p := mismatch(fields[k], w, got.get(k), tol))), None)


def expected_list(spec: AnswerField, value: Any) -> str | None:
    """A list (or ``{contains: [...]}``) whose every item fits the item type."""
    assert spec.items is not None  # validated
    items = value.get(CONTAINS) if isinstance(value, dict) else value
    if not isinstance(items, list):
        return f"a list (or {{{CONTAINS}: [...]}})"
    return next((p for p in (expectation_problem(spec.items, v) for v in items) if p), None)


def expected_interval(spec: AnswerField, value: Any) -> str | None:
    """``{start, end}``, both dates."""
    ok = isinstance(value, dict) and all(read_date(value.get(k)) is not None for k in ENDS)
    return None if ok else "{start, end} dates"


def expected_record(spec: AnswerField, value: Any) -> str | None:
    """Some of the declared fields (not all need be compared), each value fitting its field's type."""
    assert spec.fields is not None  # validated
    if not isinstance(value, dict) or not value:
        return f"a record of some of {', '.join(spec.fields)}"
    for name, expected in value.items():
        inner = spec.fields.get(name)
        problem = "no such field" if inner is None else expectation_problem(inner, expected)
        if problem:
            return at_path(f".{name}", problem)
    return None


def expected_concept(spec: AnswerField, value: Any) -> str | None:
    """A name (or accepted names, every one of them) the declared terminology knows."""
    assert spec.terms is not None  # validated
    names = value if isinstance(value, list) else [value]
    unknown = next((n for n in names if not known_key(spec.terms, n)), None)
    return None if unknown is None else f"{unknown!r} is not in the {spec.terms} terminology: add it to its table"


Expected = Callable[[AnswerField, Any], str | None]
"""Why an expected value does not fit its declared type, or None."""
Given = Callable[[AnswerField, Any, Any, float], str | None]
"""Why a given value is not the expected one (``want``), within a tolerance, or None."""


@dataclass(frozen=True)
class Comparison:
    """How one answer type is compared: what an expected value must be, and how a given value is held against it
    (None: never compared by value)."""

    expected: Expected
    given: Given | None


COMPARISONS: dict[str, Comparison] = {
    "quantity": Comparison(lambda s, v: None if is_number(v) else f"a number in {s.unit}", quantity_mismatch),
    "number": Comparison(lambda s, v: None if is_number(v) else "a number", number_mismatch),
    "date": Comparison(lambda s, v: None if read_date(v) is not None else "a date (YYYY-MM-DD)", date_mismatch),
    "interval": Comparison(expected_interval, interval_mismatch),
    "concept": Comparison(expected_concept, concept_mismatch),
    "status": Comparison(lambda s, v: None if v in (s.options or []) else f"one of {s.options}", status_mismatch),
    "boolean": Comparison(lambda s, v: None if isinstance(v, bool) else "true or false", boolean_mismatch),
    "text": Comparison(lambda s, v: "a text field is not compared by value", None),
    "list": Comparison(expected_list, list_mismatch),
    "record": Comparison(expected_record, record_mismatch),
}
"""Each answer type's comparison: adding a type is one entry."""


def at_path(path: str, problem: str) -> str:
    """A problem named by where it is: ``output.stay.end: ...`` (an inner field's problem, ``.end: ...``, joined on)."""
    return f"{path}{problem}" if problem.startswith(".") else f"{path}: {problem}"


def expectation_problem(spec: AnswerField, value: Any) -> str | None:
    """Why an expected value does not fit its declared type, or None."""
    return COMPARISONS[spec.type].expected(spec, value)


def mismatch(spec: AnswerField, want: Any, got: Any, tol: float) -> str | None:
    """Why a given value is not the expected one, or None."""
    if got is None:
        return "missing"
    given = COMPARISONS[spec.type].given
    assert given is not None  # a text field is never expected (validated)
    return given(spec, want, got, tol)


@verifier("answer.typed", category="answer")
def typed(ctx: GradeContext, p: TypedParams) -> Outcome:
    """Each expected field of the typed answer has the expected value, compared by its declared type (units
    converted, dates in any written form, concepts by terminology, lists as sets, records field by field); every
    wrong field is named with what was given."""
    declared, output = ctx.package.public.task.answer, ctx.result.output
    problems = [
        at_path(f"output.{name}", problem)
        for name, want in p.expect.items()
        if (problem := mismatch(declared[name], want, output.get(name), p.tol.get(name, 0.0)))
    ]
    return Outcome(not problems, "; ".join(problems) or f"{', '.join(p.expect)} as expected")
