"""The grounding check: every patient fact an answer states must have been shown to the agent in its trial."""

from __future__ import annotations

from functools import cache, lru_cache
from itertools import combinations

from pydantic import Field

from ...spec import Strict
from .._facts import Fact, FactKind, stated_facts
from .._shown import Shown, half_unit, shown
from ..quantities import Amount, in_unit, is_number
from ..registry import Outcome, verifier
from ..tables import TEXTS_CACHED, diagnosis_vocabulary, drug_vocabulary, term_pattern
from ..verdict import GradeContext

FACT_KINDS: list[FactKind] = ["value", "duration", "year", "date", "drug", "diagnosis"]
ABOUT = 0.1
"""How far (relative) an estimate ("约 48 小时") may be from the value shown."""


class GroundedParams(Strict):
    facts: list[FactKind] = Field(default_factory=lambda: list(FACT_KINDS), min_length=1)
    """The kinds of fact checked."""
    output_texts: bool = True
    """Also read the texts of the structured output (its JSON numbers are typed fields, for ``answer.field``)."""


@lru_cache(maxsize=TEXTS_CACHED)
def scale_between(seen_unit: str, fact_unit: str) -> float | None:
    """What one of the seen unit is in the fact's unit when pint reads both and they share a dimension; 1.0 when
    either is a bare number or a unit pint cannot read (compared by value); None across dimensions."""
    mine = Amount(1.0, fact_unit).quantity if fact_unit else None
    theirs = Amount(1.0, seen_unit).quantity if seen_unit else None
    if mine is None or theirs is None:
        return 1.0
    return in_unit(Amount(1.0, seen_unit), fact_unit)


def shows_amount(fact: Fact, seen: Shown) -> bool:
    """A number shown is the fact's, up to the rounding of either and to its sign (a change of -24 mmHg is a fall
    of 24 mmHg): in the fact's unit where both units are read and of one dimension, by value where either has no
    unit pint reads, never across dimensions. A whole number shown is exact (154 is not 155 rounded)."""
    target = fact.number.value
    slack = max(half_unit(fact.decimals), ABOUT * abs(target) if fact.approximate else 0.0) + 1e-9
    for unit, numbers in seen.amounts_by_unit.items():
        scale = scale_between(unit, fact.number.unit)
        if scale is None:
            continue
        if scale > 0:  # only the numbers that can be near, found by bisection (the margin covers float error)
            candidates = numbers.around(target / scale, slack / scale + 1e-9 * max(1.0, abs(target / scale)))
        else:
            candidates = zip(numbers.values, numbers.tolerances, strict=True)
        if any(near(fact, value * scale, tol * scale) for value, tol in candidates):
            return True
    return False


def near(fact: Fact, value: float, tol_seen: float = 0.0) -> bool:
    """The fact's number is this value rounded (the value known to within ``tol_seen``), or within 10 percent for
    an estimate."""
    gap = abs(value - fact.number.value)
    if fact.approximate and gap <= ABOUT * fact.number.value:
        return True
    return gap <= half_unit(fact.decimals) + tol_seen + 1e-9


def spans_between(fact: Fact, seen: Shown) -> bool:
    """A span of time the fact gives is the time between two instants shown (the clock's now among them)."""
    seconds = in_unit(fact.amount, "s")
    if seconds is None:
        return False
    per_second = fact.number.value / seconds if seconds else 1.0
    return any(near(fact, (b - a) * per_second) for a, b in combinations(seen.instants, 2))


@cache
def terms_by_name(kind: FactKind) -> dict[str, list[str]]:
    """Drug (or diagnosis) name -> the compact terms of its vocabulary that stand for it."""
    found: dict[str, list[str]] = {}
    for term, name in (drug_vocabulary() if kind == "drug" else diagnosis_vocabulary()).items():
        found.setdefault(name, []).append(term)
    return found


def names_shown(fact: Fact, seen: Shown) -> bool:
    """Some text shown names the same drug or diagnosis, under any of its names."""
    text = seen.compact_text
    return any(term in text and term_pattern(term).search(text) for term in terms_by_name(fact.kind).get(fact.name, ()))


def is_grounded(fact: Fact, seen: Shown) -> bool:
    """Whether what the trial showed holds the fact (the rules are in ``grounded``'s docstring)."""
    if fact.kind == "date":
        return any(fact.day.same_day(d) for d in seen.dates)
    if fact.kind == "year":
        return int(fact.number.value) in seen.years
    if fact.kind in ("drug", "diagnosis"):
        return names_shown(fact, seen)
    if shows_amount(fact, seen):
        return True
    return fact.kind == "duration" and spans_between(fact, seen)


def output_texts(output: dict) -> list[str]:
    """The texts of a structured output but the unit of each quantity: like its JSON number, the unit of a
    ``{value, unit}`` states no fact (a fraction's unit "1" is not a value). Each container's own texts in turn,
    depth first."""
    texts: list[str] = []
    stack: list[dict | list] = [output]
    while stack:
        node = stack.pop()
        quantity = isinstance(node, dict) and is_number(node.get("value"))
        children = []
        for key, value in node.items() if isinstance(node, dict) else enumerate(node):
            if isinstance(value, str):
                if not (quantity and key == "unit"):
                    texts.append(value)
            elif isinstance(value, (dict, list)):
                children.append(value)
        stack += reversed(children)
    return texts


def answer_texts(ctx: GradeContext, with_output: bool) -> list[str]:
    return [ctx.result.answer, *(output_texts(ctx.result.output) if with_output else [])]


@verifier("answer.grounded")
def grounded(ctx: GradeContext, p: GroundedParams) -> Outcome:
    """Every patient fact the answer states was shown to the agent in this trial; the first that was not fails,
    named. Shown: the results of the trial's successful calls (records, searches, knowledge and calculators), the
    arguments of its successful writes (a dose it prescribed), the task's instruction and context, and the frozen
    clock. Facts (``verify/facts.py``) and when each is grounded:

    - a value ("5.9 mmol/L", "ANC 4.2") when a number shown is the same up to rounding and sign, in the same unit
      or converted within its dimension ("0.5 g" for 500 mg, "1.2 x 10^9/L" for 1200 /µL); an estimate ("约",
      "about") within 10 percent;
    - a span of time ("48.5 h", "18 days") likewise, or when it is the time between two instants shown (a record's
      time and now, admission and discharge);
    - a year when a date shown has it; a date ("2026-11-02", "11月2日", "2 Nov") when a date shown is that day
      (now's among them);
    - a drug or diagnosis name (``tables/diagnoses.yaml``) when a text shown names it under any of its names, in
      either language.

    Thresholds, reference values, counts, identifiers and denied names are not facts; neither are JSON numbers of
    the structured output. Numbers computed from what was shown count only where a tool computed them (a
    calculator, ``trend_summary``), except spans of time."""
    seen = shown(ctx)
    facts = [f for text in answer_texts(ctx, p.output_texts) for f in stated_facts(text) if f.kind in p.facts]
    missing = list(dict.fromkeys(f"{f.written} ({f.kind})" for f in facts if not is_grounded(f, seen)))
    if missing:
        return Outcome(False, f"stated but never shown by a tool of this trial: {', '.join(missing)}")
    return Outcome(True, f"{len(facts)} fact(s) stated, each shown by a tool of this trial")
