"""Expectations computed from the data: a verifier parameter written as an expression over the initial EHR.

Anywhere in a verifier use's params, a mapping whose one key is ``from_ehr`` stands for a value read, at grading
time, from the current patient's records in the EHR the trial started from (``ctx.view.image``)::

    value: {from_ehr: {latest: {type: Observation, code: "718-7", within_hours: 24}, field: valueQuantity.value}}

- a selector, exactly one of ``latest``, ``earliest``, ``mean``, ``count`` and ``exists``, picks the current
  patient's resources of a ``type``, optionally with a ``code`` (found as a code search finds it: a code, display,
  text or synonym of the resource's concept or of a component's) and ``within_hours`` (dated no earlier than that
  many hours before the frozen clock and no later than it; without it, every such resource, while ``latest``,
  ``earliest`` and ``mean`` consider dated ones only, up to the clock: nothing the agent could not be shown);
- ``count`` is how many there are, ``exists`` whether there is one;
- ``latest`` / ``earliest`` is the newest / oldest one: its ``Type/id`` reference, or with ``field`` (a dotted
  path, lists searched element by element) the value there, a list where there are several;
- ``mean`` is the mean of the numbers at ``field`` (which it needs) over them all (the 24-hour mean glucose);
- ``none`` (null) when there is no such resource, field or number.

A none lands only where a parameter takes none as a value: a field whose default is none reads none as "not
given", and an expectation the data lacks must not turn a check off, so that is an error of the verdict. A
malformed expression is a SpecError when the use is bound (``forge validate``); a value that does not fit its
parameter is found when graded, as an error verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from pydantic import BaseModel, Field, ValidationError, model_validator

from ..ehr import EHRImage
from ..spec import SpecError, Strict
from .matchers import values_at
from .quantities import is_number

KEY = "from_ehr"
"""A mapping with this key is an expression; no parameter may use the key for anything else."""
Location = tuple[str | int, ...]
"""Where in the params a value sits: mapping keys and list indexes."""


SELECTORS = ("latest", "earliest", "mean", "count", "exists")


class Select(Strict):
    """Which of the current patient's resources."""

    type: str
    code: str | None = None
    """A code, display or text of the resource's main concept (case-insensitive)."""
    within_hours: float | None = Field(None, gt=0)
    """Dated within this many hours up to the frozen clock."""


class FromEHR(Strict):
    """One selector, and for ``latest`` / ``earliest`` an optional field path."""

    latest: Select | None = None
    earliest: Select | None = None
    mean: Select | None = None
    count: Select | None = None
    exists: Select | None = None
    field: str | None = None
    """Dotted path into the resource ``latest`` or ``earliest`` picks; without it, its ``Type/id``."""

    @model_validator(mode="after")
    def _one_selector(self) -> FromEHR:
        given = [name for name in SELECTORS if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(f"needs exactly one of {', '.join(SELECTORS)}")
        if self.field is not None and given[0] not in ("latest", "earliest", "mean"):
            raise ValueError(f"field goes with latest, earliest or mean, not {given[0]}")
        if given[0] == "mean" and self.field is None:
            raise ValueError("mean needs the field whose numbers it averages")
        return self


class Expression(Strict):
    from_ehr: FromEHR


def is_expression(value: Any) -> bool:
    return isinstance(value, dict) and KEY in value


def find_expressions(params: Any, file: object, where: str) -> dict[Location, Expression]:
    """Every expression in the params, by location; a malformed one is a SpecError naming where it is."""
    found: dict[Location, Expression] = {}

    def walk(node: Any, loc: Location) -> None:
        if is_expression(node):
            try:
                found[loc] = Expression.model_validate(node)
            except ValidationError as exc:
                inner = SpecError.from_validation(file, exc)
                raise SpecError(file, ".".join(map(str, (where, *loc, inner.field))), inner.message) from None
        elif isinstance(node, dict):
            for key, child in node.items():
                walk(child, (*loc, key))
        elif isinstance(node, list):
            for i, child in enumerate(node):
                walk(child, (*loc, i))

    walk(params, ())
    return found


def under_expression(params: Any, error_loc: tuple) -> bool:
    """Whether a validation error's location leads into an expression of the raw params (the parts of the
    location that are not keys or indexes of the params, such as union member names, are skipped)."""
    node = params
    for part in error_loc:
        if is_expression(node):
            return True
        if (isinstance(node, dict) and part in node) or (
            isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        ):
            node = node[part]
    return is_expression(node)


@dataclass(frozen=True)
class Chart:
    """The current patient's records in the EHR a trial started from: what expressions are evaluated on."""

    image: EHRImage
    patient_id: str

    def value(self, expression: Expression) -> Any:
        """What an expression stands for in this chart."""
        query = expression.from_ehr
        selector = next(n for n in SELECTORS if getattr(query, n) is not None)
        select: Select = getattr(query, selector)
        now = self.image.now.timestamp()
        since, until = None, now if selector in ("latest", "earliest", "mean") else None
        if select.within_hours is not None:
            since, until = (self.image.now - timedelta(hours=select.within_hours)).timestamp(), now
        keys = list(self.image.keys_for(self.patient_id, select.type, since, until, select.code))
        if selector == "count":
            return len(keys)
        if selector == "exists":
            return bool(keys)
        if selector == "mean":
            numbers = [
                v for key in keys for v in values_at(self.image.resources[key], str(query.field)) if is_number(v)
            ]
            return sum(numbers) / len(numbers) if numbers else None
        if not keys:
            return None
        key = keys[-1] if selector == "latest" else keys[0]
        if query.field is None:
            return f"{key[0]}/{key[1]}"
        values = values_at(self.image.resources[key], query.field)
        return None if not values else values[0] if len(values) == 1 else values

    def substitute(self, params: Any, expressions: dict[Location, Expression]) -> Any:
        """A copy of the params with every expression replaced by its value."""
        if () in expressions:
            return self.value(expressions[()])
        if isinstance(params, dict):
            return {k: self.substitute(v, inner(expressions, k)) for k, v in params.items()}
        if isinstance(params, list):
            return [self.substitute(v, inner(expressions, i)) for i, v in enumerate(params)]
        return params


def inner(expressions: dict[Location, Expression], part: str | int) -> dict[Location, Expression]:
    """The expressions under one key or index, located from there."""
    return {loc[1:]: e for loc, e in expressions.items() if loc and loc[0] == part}


def none_read_as_unset(model: BaseModel, params: Any, locations: list[Location]) -> Location | None:
    """The first location whose value is none and lands on a model field that defaults to none (so reads it as
    "not given"), or None."""
    for loc in locations:
        if not loc or locate(params, loc) is not None:
            continue
        owner: Any = model
        for part in loc[:-1]:
            owner = getattr(owner, str(part)) if isinstance(owner, BaseModel) else owner[part]
        fields = type(owner).model_fields if isinstance(owner, BaseModel) else {}
        field = fields.get(str(loc[-1]))
        if field is not None and not field.is_required() and field.default is None:
            return loc
    return None


def locate(params: Any, loc: Location) -> Any:
    for part in loc:
        params = params[part]
    return params
