"""Terms in text, as the grading vocabularies compare them, and the reading of their YAML files."""

from __future__ import annotations

import re
from functools import cache, lru_cache
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, RootModel

from ...ehr import TABLES as EHR_TABLES
from ...spec import parse_model, read_yaml
from ...tools import lookup_key

HERE = Path(__file__).parent
BELOW = {"codes", "labs"}
"""Tables kept in the ehr layer's ``tables/``, which code search reads too."""
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
"""A Chinese character."""
SPACE_BY_CJK = re.compile(rf"\s+(?={CJK.pattern})|(?<={CJK.pattern})\s+")
"""Spaces before or after a Chinese character."""
TEXTS_CACHED = 4096
"""How many texts each look-up by text remembers (the tables are fixed, so a text's answer is too)."""
Model = TypeVar("Model", bound=BaseModel)
Value = TypeVar("Value")


def read_table(name: str, model: type[Model]) -> Model:
    """``<name>.yaml`` beside this module (or, for the tables in BELOW, the ehr layer's), read with the YAML 1.2
    reader and checked by ``model``."""
    path = (EHR_TABLES if name in BELOW else HERE) / f"{name}.yaml"
    return parse_model(model, read_yaml(path), path)


class NamesFile(RootModel[dict[str, list[list[str]]]]):
    """A table of names: under its own name, each thing's name, then the other names it goes by."""


@cache
def first_names(table: str) -> dict[str, str]:
    """Compact name or synonym -> the thing's first name, from ``<table>.yaml`` (``diagnoses``, ``labs``)."""
    rows = read_table(table, NamesFile).root[table]
    return {compact(term): row[0] for row in rows for term in row}


@lru_cache(maxsize=TEXTS_CACHED)
def compact(text: str) -> str:
    """A term as it is compared: looked-up form (lower case, ASCII widths, single spaces), and no space next to a
    Chinese character ("增强 CT" and "增强CT" are one term). Remembered per text."""
    return SPACE_BY_CJK.sub("", lookup_key(text))


@cache
def term_pattern(term: str) -> re.Pattern:
    """Where a compact term appears: a Chinese term anywhere, a latin one as a whole word."""
    escaped = re.escape(term)
    return re.compile(escaped if CJK.search(term) else rf"(?<![a-z0-9]){escaped}(?![a-z0-9])")


def mentioned(text: str, vocabulary: dict[str, Value]) -> list[Value]:
    """The values of the vocabulary's (compact) terms that the text names, in order; a term found only inside a
    longer term found is left out (对比剂 inside 钆对比剂, 福莫特罗 inside 布地奈德福莫特罗)."""
    plain = compact(text)
    spans = [
        (m.start(), m.end(), value)
        for term, value in vocabulary.items()
        if term and term in plain
        for m in term_pattern(term).finditer(plain)
    ]
    inner = {(a, b) for a, b, _ in spans for c, d, _ in spans if c <= a and b <= d and (c, d) != (a, b)}
    return list(dict.fromkeys(value for a, b, value in sorted(spans, key=lambda s: s[0]) if (a, b) not in inner))
