"""Extraction of a protocol's criteria: the nodes an agent read from the protocol text (criterion, inclusion or
exclusion, operator, threshold and unit, look-back window) held against the gold nodes of the hidden half, scored
by node (precision, recall, F1), by field (exact match) and by severe error (an inclusion read as an exclusion, an
operator turned round, a threshold off by a unit's factor). The scores are the verdict's ``measures``."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from pydantic import Field, ValidationInfo, model_validator

from ...spec import AnswerField, Strict
from .._text import normal
from ..quantities import Amount, in_unit, is_number, normal_unit
from ..registry import Outcome, verifier
from ..tables import TEXTS_CACHED, compact, term_pattern
from ..verdict import GradeContext
from ._typed import given_amount, known_key

Kind = Literal["inclusion", "exclusion"]
Operator = Literal[">=", ">", "<=", "<", "=", "present", "absent"]
OPERATOR_WORDS = {"≥": ">=", "≤": "<=", "==": "=", "=>": ">=", "=<": "<="}
DIRECTION = {">=": 1, ">": 1, "<=": -1, "<": -1, "present": 2, "absent": -2, "=": 0}
"""An operator's direction: two operators whose directions are opposite read the criterion the other way round."""
FIELDS = ("kind", "operator", "threshold", "window")
"""The fields of a node compared once it is matched to a gold node."""
NODE_FIELDS = ("criterion", "kind", "operator", "threshold", "unit", "window")
"""The fields the task's typed answer must declare for every node."""
CONCEPT_TERMS = ("labs", "diagnoses", "drugs")
"""The terminologies a criterion's name is looked up in (a lab, a diagnosis, a drug), before its words."""
MEASURES = ("node_f1", "node_precision", "node_recall", "exact_f1", "field_accuracy", "severe_errors")
MEASURE = re.compile(r"\b(" + "|".join(MEASURES) + r") (\d+(?:\.\d+)?)")


class GoldNode(Strict):
    """One criterion of the protocol as it should be read."""

    criterion: list[str] = Field(min_length=1)
    """Names or codes of what it tests (a lab, diagnosis, drug or score), any of which stands for it."""
    id: str | None = None
    """Its label in the protocol (I3, E1): only breaks ties between nodes of one concept."""
    kind: Kind
    operator: Operator
    threshold: float | None = None
    unit: str | None = None
    """The threshold's unit (none: a bare number, e.g. a score)."""
    window_days: float | None = None
    """The look-back window in days (none: no window)."""


class ExtractionParams(Strict):
    nodes: list[GoldNode] = Field(min_length=1)
    """The protocol's criteria (leaves of its tree), in any order."""
    field: str = "criteria"
    """The output field holding the agent's nodes: a list of records declaring criterion, kind, operator,
    threshold, unit and window."""
    min_node_f1: float = Field(1.0, ge=0, le=1)
    min_field_accuracy: float = Field(1.0, ge=0, le=1)
    """The share of the matched nodes' fields (kind, operator, threshold, window) read right."""
    max_severe_errors: int = Field(0, ge=0)

    @model_validator(mode="after")
    def _declared(self, info: ValidationInfo) -> ExtractionParams:
        declared: dict[str, AnswerField] | None = (info.context or {}).get("answer")
        if declared is None:  # validated without its package
            return self
        spec = declared.get(self.field)
        fields = spec.items.fields if spec and spec.items else None
        missing = [f for f in NODE_FIELDS if f not in (fields or {})]
        if not missing:
            return self
        raise ValueError(f"field: the task's answer declares no list {self.field!r} of records with {missing}")


@dataclass(frozen=True)
class Node:
    """An agent's node, read: its fields normalised, its window in days."""

    label: str
    criterion: str
    kind: str
    operator: str
    threshold: Any
    unit: str
    window: Amount | None

    @classmethod
    def read(cls, given: Any) -> Node:
        item = given if isinstance(given, dict) else {}
        operator = normal(str(item.get("operator") or "")).strip()
        window = item.get("window")
        return cls(
            label=compact(str(item.get("id") or "")),
            criterion=str(item.get("criterion") or ""),
            kind=normal(str(item.get("kind") or "")).strip(),
            operator=OPERATOR_WORDS.get(operator, operator),
            threshold=item.get("threshold"),
            unit=str(item.get("unit") or ""),
            window=None if window is None else given_amount(window),
        )


@lru_cache(maxsize=TEXTS_CACHED)
def concept_key(name: str) -> str:
    """What a criterion's name stands for: its key in the first terminology that knows it, else its compact text
    (remembered per name: a gold node's names are compared with every node of every trial)."""
    return next((key for terms in CONCEPT_TERMS if (key := known_key(terms, name))), compact(name))


def same_concept(gold: GoldNode, name: str) -> bool:
    """The name stands for the gold node's concept: by terminology (a lab, diagnosis or drug, by name or code), or
    it names one of the gold names as a whole word ("Absolute neutrophil count (ANC)" names ANC)."""
    if not name.strip():
        return False
    key, text = concept_key(name), compact(name)
    return any(concept_key(n) == key or term_pattern(compact(n)).search(text) for n in gold.criterion)


def threshold_in_gold_unit(gold: GoldNode, node: Node) -> float | None:
    """The node's threshold in the gold unit (a bare number where the gold has none), or None where it is none
    or cannot be converted."""
    if not is_number(node.threshold):
        return None
    if not gold.unit:
        return None if node.unit.strip() else float(node.threshold)
    return in_unit(Amount(float(node.threshold), normal_unit(node.unit)), normal_unit(gold.unit))


def field_right(gold: GoldNode, node: Node, name: str) -> bool:
    """One field of a matched node read as the gold has it."""
    if name == "kind":
        return node.kind == gold.kind
    if name == "operator":
        return node.operator == gold.operator
    if name == "threshold":
        if gold.threshold is None:
            return node.threshold is None
        value = threshold_in_gold_unit(gold, node)
        return value is not None and math.isclose(value, gold.threshold, rel_tol=1e-6)
    if gold.window_days is None:
        return node.window is None
    days = None if node.window is None else in_unit(node.window, "day")
    return days is not None and math.isclose(days, gold.window_days, rel_tol=1e-6)


def severe_errors(gold: GoldNode, node: Node) -> list[str]:
    """What in a matched node reads the criterion the other way or by another magnitude."""
    found = []
    if node.kind in ("inclusion", "exclusion") and node.kind != gold.kind:
        found.append(f"an {gold.kind} criterion read as an {node.kind} one")
    mine, theirs = DIRECTION.get(node.operator, 0), DIRECTION[gold.operator]
    if theirs and mine == -theirs:
        found.append(f"operator {node.operator} turned round from {gold.operator}")
    if gold.threshold is not None and is_number(node.threshold) and not field_right(gold, node, "threshold"):
        value = threshold_in_gold_unit(gold, node)
        ratio = None if not value or not gold.threshold else math.log10(abs(value / gold.threshold))
        by_factor = ratio is not None and abs(ratio - round(ratio)) < 1e-6 and round(ratio) != 0
        if by_factor or (value is None and math.isclose(float(node.threshold), gold.threshold)):
            found.append(f"threshold {node.threshold:g} {node.unit} off by a unit's factor from {gold.threshold:g}")
    return found


def pair_score(gold: GoldNode, node: Node) -> tuple[int, int]:
    """How well a node fits a gold node of its concept: the same label first, then the fields read right."""
    same_label = int(bool(gold.id) and node.label == compact(gold.id or ""))
    return same_label, sum(field_right(gold, node, f) for f in FIELDS)


def matched_pairs(gold: list[GoldNode], nodes: list[Node]) -> list[tuple[int, int]]:
    """(gold index, node index) pairs of one concept, each taken once, the best fitting first."""
    candidates = sorted(
        (
            (pair_score(g, n), i, j)
            for i, g in enumerate(gold)
            for j, n in enumerate(nodes)
            if same_concept(g, n.criterion)
        ),
        key=lambda c: (-c[0][0], -c[0][1], c[1], c[2]),
    )
    pairs: list[tuple[int, int]] = []
    for _, i, j in candidates:
        if all(i != a and j != b for a, b in pairs):
            pairs.append((i, j))
    return pairs


def f1(right: int, given: int, expected: int) -> tuple[float, float, float]:
    """Precision, recall and F1 of ``right`` out of ``given`` against ``expected``."""
    precision = right / given if given else 0.0
    recall = right / expected if expected else 0.0
    return precision, recall, (2 * precision * recall / (precision + recall) if right else 0.0)


@dataclass(frozen=True)
class Scores:
    """What an extraction scores, with the problems found."""

    measures: dict[str, float]
    problems: list[str]


def scored(gold: list[GoldNode], given: list[Any]) -> Scores:
    """Match the given nodes to the gold ones and score them by node, field and severe error."""
    nodes = [Node.read(g) for g in given]
    pairs = matched_pairs(gold, nodes)
    problems: list[str] = []
    right_fields = exact = severe = 0
    for i, j in pairs:
        g, n = gold[i], nodes[j]
        wrong = [f for f in FIELDS if not field_right(g, n, f)]
        right_fields += len(FIELDS) - len(wrong)
        exact += not wrong
        grave = severe_errors(g, n)
        severe += len(grave)
        name = g.id or g.criterion[0]
        problems += [f"{name}.{f} wrong" for f in wrong] + [f"{name}: severe: {s}" for s in grave]
    taken_gold, taken_nodes = {i for i, _ in pairs}, {j for _, j in pairs}
    problems += [
        f"missed {g.id or ''} {g.criterion[0]}".replace("  ", " ") for i, g in enumerate(gold) if i not in taken_gold
    ]
    problems += [f"not in the protocol: {n.criterion!r}" for j, n in enumerate(nodes) if j not in taken_nodes]
    precision, recall, node_f1 = f1(len(pairs), len(nodes), len(gold))
    measures = {
        "node_f1": node_f1,
        "node_precision": precision,
        "node_recall": recall,
        "exact_f1": f1(exact, len(nodes), len(gold))[2],
        "field_accuracy": right_fields / (len(FIELDS) * len(pairs)) if pairs else 0.0,
        "severe_errors": float(severe),
    }
    return Scores(measures, problems)


def measures_in(reason: str) -> dict[str, float]:
    """The measures an ``extraction.criteria`` verdict's reason states (a stored verdict keeps its reason only)."""
    return {name: float(value) for name, value in MEASURE.findall(reason)}


@verifier("extraction.criteria", category="answer")
def criteria(ctx: GradeContext, p: ExtractionParams) -> Outcome:
    """The criteria an agent extracted from a protocol's text, matched to the gold nodes by concept (terminology or
    name): node precision, recall and F1, exact-node F1, the share of fields read right (inclusion or exclusion,
    operator, threshold with its unit converted, window) and the severe errors (inclusion read as exclusion, an
    operator turned round, a threshold off by a unit's factor); passes when F1 and field accuracy reach their
    minimums and the severe errors stay within their maximum. The scores are the verdict's measures."""
    given = ctx.result.output.get(p.field)
    s = scored(p.nodes, given if isinstance(given, list) else [])
    m = s.measures
    passed = (
        m["node_f1"] >= p.min_node_f1 - 1e-9
        and m["field_accuracy"] >= p.min_field_accuracy - 1e-9
        and m["severe_errors"] <= p.max_severe_errors
    )
    stated = ", ".join(
        f"{name} {m[name]:.3f}" if name != "severe_errors" else f"{name} {m[name]:g}" for name in MEASURES
    )
    return Outcome(passed, stated + (": " + "; ".join(s.problems) if s.problems else ""), measures=tuple(m.items()))
