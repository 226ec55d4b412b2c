"""Grading vocabularies (synthetic, for evaluation only): the YAML tables beside this module, read with the
YAML 1.2 reader and checked by models, plus the tools' drug and dose-term tables.

``synonym_key`` says what a term stands for, so that a panel, a drug, a route or a frequency written in other
words compares equal: 血常规 = CBC = complete blood count, omeprazole = 奥美拉唑, 口服 = po = oral, 每日一次 = qd.
"""
from __future__ import annotations

from functools import cache
from pathlib import Path

from ...spec.loading import parse_model, read_yaml
from ...spec.package import Strict
from ...tools.knowledge import dose_code, drug_names, lookup_key

HERE = Path(__file__).parent


class Synonyms(Strict):
    """One thing and the other names it goes by."""

    name: str
    terms: list[str]


class OrderSynonymsFile(Strict):
    order_synonyms: list[Synonyms]


@cache
def order_names() -> dict[str, str]:
    """Looked-up order name or synonym -> the order's name (``order_synonyms.yaml``)."""
    path = HERE / "order_synonyms.yaml"
    rows = parse_model(OrderSynonymsFile, read_yaml(path), path).order_synonyms
    return {lookup_key(term): row.name for row in rows for term in [row.name, *row.terms]}


def synonym_key(term: str) -> str:
    """What a term stands for: ``route:<code>``, ``frequency:<code>``, ``order:<name>`` or ``drug:<name>`` when a
    table knows it (looked up whole); else the term itself, as looked up (trimmed, lower-cased, ASCII widths)."""
    key = lookup_key(term)
    for kind in ("route", "frequency"):
        code = dose_code(kind, key)
        if code:
            return f"{kind}:{code}"
    if key in order_names():
        return f"order:{order_names()[key]}"
    if key in drug_names():
        return f"drug:{drug_names()[key]}"
    return key
