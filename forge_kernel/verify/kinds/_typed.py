"""The typed answer (``task.answer``), compared by type: quantities converted between units (pint), dates read in
the forms Chinese and English write them, concepts by the terminology tables, statuses from a closed set. The
types are public; the values expected are hidden, in this verifier's params."""

from __future__ import annotations

from typing import Any

from pydantic import Field, ValidationInfo, model_validator

from ...spec import AnswerField, Strict
from .._text import drug_of, normal
from ..matchers import within
from ..quantities import Amount, amount, in_unit, is_number, located_amounts, normal_unit
from ..registry import Outcome, verifier
from ..tables import compact, diagnosis_vocabulary, drug_vocabulary, first_names, synonym_key
from ..verdict import GradeContext
from ._checks import nursing_item_of
from .answer import read_date

CONTAINS = "contains"


class TypedParams(Strict):
    expect: dict[str, Any] = Field(min_length=1)
    """Each field's expected value, as its declared type reads it: a quantity's number in the declared unit, a
    number, a date (YYYY-MM-DD), an interval ``{start, end}``, a concept's name or a list of its names, a status
    option, true or false; a list: all its items and no other (``{contains: [...]}``: at least these). A text field
    is not compared here: no pass rests on a keyword."""
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
            problem = expectation_problem(spec, value)
            if problem:
                raise ValueError(f"expect.{name}: {problem}")
        unknown = [n for n in self.tol if n not in self.expect]
        if unknown:
            raise ValueError(f"tol.{unknown[0]}: no such expected field")
        return self


def expectation_problem(spec: AnswerField, value: Any) -> str | None:
    """Why an expected value does not fit its declared type, or None."""
    if spec.type == "text":
        return "a text field is not compared by value"
    if spec.type == "list":
        assert spec.items is not None  # validated
        items = value.get(CONTAINS) if isinstance(value, dict) else value
        if not isinstance(items, list):
            return f"a list (or {{{CONTAINS}: [...]}})"
        return next((p for p in (expectation_problem(spec.items, v) for v in items) if p), None)
    if spec.type == "quantity" and not is_number(value):
        return f"a number in {spec.unit}"
    if spec.type == "number" and not is_number(value):
        return "a number"
    if spec.type in ("date", "interval"):
        days = [value.get("start"), value.get("end")] if isinstance(value, dict) else [value]
        if any(read_date(d) is None for d in days):
            return "a date (YYYY-MM-DD)" if spec.type == "date" else "{start, end} dates"
    if spec.type == "status" and value not in (spec.options or []):
        return f"one of {spec.options}"
    if spec.type == "boolean" and not isinstance(value, bool):
        return "true or false"
    if spec.type == "concept":
        assert spec.terms is not None  # validated
        names = value if isinstance(value, list) else [value]
        if not any(known_key(spec.terms, n) for n in names):
            return f"{names[0]!r} is not in the {spec.terms} terminology: add it to its table"
    return None


def known_key(terms: str, name: Any) -> str | None:
    """What a concept's name stands for in its terminology (a drug by the drug tables, class members' names too; a
    diagnosis by the diagnosis table; a lab by the lab table, else as an order; an order by the order synonyms), or
    None where the terminology does not know the name."""
    text = str(name)
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


def mismatch(spec: AnswerField, want: Any, got: Any, tol: float) -> str | None:
    """Why a given value is not the expected one, or None."""
    if got is None:
        return "missing"
    if spec.type == "quantity":
        assert spec.unit is not None  # validated
        found = given_amount(got)
        if found is None or not found.unit:
            return f"{got!r} is not a quantity with its unit"
        value = found.value if found.unit == normal_unit(spec.unit) else in_unit(found, normal_unit(spec.unit))
        if value is None:
            return f"{found.value:g} {found.unit} is not in a unit of {spec.unit}"
        return None if within(value, want, tol) else f"{value:g} {spec.unit} is not {want:g} ± {tol:g}"
    if spec.type == "number":
        if not is_number(got):
            return f"{got!r} is not a number"
        return None if within(got, want, tol) else f"{got:g} is not {want:g} ± {tol:g}"
    if spec.type == "date":
        day, expected = read_date(got), read_date(want)
        if day is None:
            return f"{got!r} is not a date"
        assert expected is not None  # validated
        return None if abs((day - expected).days) <= tol else f"{day} is not {expected} ± {tol:g} day(s)"
    if spec.type == "interval":
        if not isinstance(got, dict):
            return f"{got!r} is not a {{start, end}} interval"
        ends = (mismatch(AnswerField(type="date"), want[k], got.get(k), tol) for k in ("start", "end"))
        return next((f"{k}: {p}" for k, p in zip(("start", "end"), ends) if p), None)
    if spec.type == "concept":
        assert spec.terms is not None  # validated
        names = want if isinstance(want, list) else [want]
        ok = concept_key(spec.terms, got) in {concept_key(spec.terms, n) for n in names}
        return None if ok else f"{got!r} is not {names[0]!r}"
    if spec.type == "status":
        return None if normal(str(got)).strip() == normal(str(want)).strip() else f"{got!r} is not {want!r}"
    if spec.type == "boolean":
        return None if got is want else f"{got!r} is not {str(want).lower()}"
    assert spec.type == "list" and spec.items is not None  # text is never expected (validated)
    return list_mismatch(spec.items, want, got, tol)


def list_mismatch(item: AnswerField, want: Any, got: Any, tol: float) -> str | None:
    """A list compared as a set: every expected item given, and (unless only ``contains`` is asked) no other."""
    if not isinstance(got, list):
        return f"{got!r} is not a list"
    wanted = want[CONTAINS] if isinstance(want, dict) else want
    missing = [w for w in wanted if all(mismatch(item, w, g, tol) for g in got)]
    extra = [] if isinstance(want, dict) else [g for g in got if all(mismatch(item, w, g, tol) for w in wanted)]
    if missing:
        return f"missing {', '.join(map(str, missing))}"
    return f"not expected: {', '.join(map(str, extra))}" if extra else None


@verifier("answer.typed", category="answer")
def typed(ctx: GradeContext, p: TypedParams) -> Outcome:
    """Each expected field of the typed answer has the expected value, compared by its declared type (units
    converted, dates in any written form, concepts by terminology, lists as sets); every wrong field is named with
    what was given."""
    declared, output = ctx.package.public.task.answer, ctx.result.output
    problems = [
        f"output.{name}: {problem}"
        for name, want in p.expect.items()
        if (problem := mismatch(declared[name], want, output.get(name), p.tol.get(name, 0.0)))
    ]
    return Outcome(not problems, "; ".join(problems) or f"{', '.join(p.expect)} as expected")
