"""What a term or an order's name stands for, read from the grading vocabularies (synthetic, for evaluation only).

``synonym_key`` says what a term stands for, so that a panel, a drug, a route or a frequency written in other
words compares equal: 血常规 = CBC = complete blood count, omeprazole = 奥美拉唑, 口服 = po = oral, 每日一次 = qd.
``order_identity`` says which orders an order's name stands for, to find duplicate orders.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

from ...spec import Strict
from ...tools import dose_code
from .drugs import drug_vocabulary, drugs_in
from .terms import compact, read_table

PARTS = re.compile(r"[+/、,，;；()（）]")
"""What separates the parts of an order's name ("血常规+CRP", "全血细胞计数（CBC）")."""


class Synonyms(Strict):
    """One thing and the other names it goes by."""

    name: str
    terms: list[str]


class OrderSynonymsFile(Strict):
    order_synonyms: list[Synonyms]


@cache
def order_names() -> dict[str, str]:
    """Compact order name or synonym -> the order's name (``order_synonyms.yaml``)."""
    rows = read_table("order_synonyms", OrderSynonymsFile).order_synonyms
    return {compact(term): row.name for row in rows for term in [row.name, *row.terms]}


@lru_cache(maxsize=16384)
def synonym_key(term: str) -> str:
    """What a term stands for: ``route:<code>``, ``frequency:<code>``, ``order:<name>`` or ``drug:<name>`` when a
    table knows it (looked up whole); else the term itself, compact."""
    key = compact(term)
    for kind in ("route", "frequency"):
        code = dose_code(kind, key)
        if code:
            return f"{kind}:{code}"
    if key in order_names():
        return f"order:{order_names()[key]}"
    if key in drug_vocabulary():
        return f"drug:{drug_vocabulary()[key]}"
    return key


@lru_cache(maxsize=4096)
def order_identity(rtype: str, name: str) -> frozenset[str]:
    """What an order of this name orders, to compare with other orders: the drugs a prescription names, or the
    known examinations and panels an order's name or its parts are ("心电图（术前）" is an ECG); else its
    compact name."""
    if rtype == "MedicationRequest":
        found = {f"drug:{d}" for d in drugs_in(name)}
    else:
        parts = [name, *PARTS.split(name)]
        found = {f"order:{order_names()[compact(p)]}" for p in parts if compact(p) in order_names()}
    return frozenset(found or {compact(name)})
