"""Code search by code, display text and synonyms (the tables are synthetic, for evaluation only).

A query (``code=`` of a search) matches a record of the patient and type when, compared in looked-up form (NFKC,
lower case, single spaces; so case- and width-insensitive):

1. **exact**: it is one of the codes of the record's main concept, a coding's display or the concept's text;
2. **synonym**: it is a name of a concept of the synonym tables (``tables/labs.yaml`` names, the LOINC codes
   ``tables/codes.yaml`` gives that name, ``tables/lab_synonyms.yaml`` additions) and the record has one of that
   concept's codes, or a display or text that is one of its names ("Cr", "肌酐" and "creatinine" find LOINC
   2160-0 and 38483-4; a code or a whole display stays exact);
3. **words**, only when the query is no synonym and the first two find nothing: every latin word of the query is
   a whole word of a display or text, and every Chinese run of it is part of one, with at least one latin word of
   three letters or a Chinese run of two characters ("Cr", "K" never match by words); and all the records so
   matched share one concept (the same codes). Words that fit several concepts match none: the search says which.

A code given as ``system|code`` is read as the code. Exact terms and synonyms are indexed when the image is built;
the words of a patient's displays are gathered on the first search by words.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from ._concepts import searched_concepts

if TYPE_CHECKING:
    from .image import EHRImage, Key

TABLES = Path(__file__).with_name("tables")
"""Terminology tables shared with the layers above (grading reads ``labs.yaml`` and ``codes.yaml`` too)."""
LOINC = "http://loinc.org"
MARK = "\x1f"
"""Prefix of a synonym concept's index term: no looked-up query starts with it."""
LATIN_WORD = re.compile(r"[0-9a-z]+")
CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
CLOSEST = 5
"""How many displays a search that found nothing suggests."""


@lru_cache(maxsize=65536)
def lookup_key(term: str) -> str:
    """A term as vocabularies are looked up: full-width characters as ASCII, lower-cased, single spaces, trimmed."""
    return " ".join(unicodedata.normalize("NFKC", term).lower().split())


@dataclass
class Concept:
    """One concept of the synonym tables: its LOINC codes and its names (looked-up form)."""

    name: str
    codes: set[str] = field(default_factory=set)
    names: set[str] = field(default_factory=set)


def read(name: str) -> Any:
    """``tables/<name>.yaml``, parsed (yaml imported here: reading a trial, ``forge replay``, reads no table)."""
    import yaml

    return yaml.safe_load((TABLES / f"{name}.yaml").read_text(encoding="utf-8"))


@cache
def concepts() -> dict[str, Concept]:
    """Every synonym concept by name: labs.yaml rows, codes.yaml's LOINC codes (by its term for them),
    lab_synonyms.yaml additions."""
    found: dict[str, Concept] = {}

    def concept(name: str) -> Concept:
        return found.setdefault(name, Concept(name, names={lookup_key(name)}))

    for row in read("labs")["labs"]:
        concept(row[0]).names.update(lookup_key(n) for n in row)
    for entry in read("codes")["concepts"]:
        if entry["system"] == LOINC:
            key = entry["key"] or ""
            item = concept(key[4:] if key.startswith("lab:") else entry["zh"])
            item.codes.add(lookup_key(entry["code"]))
    for row in read("lab_synonyms")["synonyms"]:
        item = concept(row["concept"])
        item.names.update(lookup_key(n) for n in row.get("names", []))
        item.codes.update(lookup_key(c) for c in row.get("codes", []))
    return found


@cache
def by_name() -> dict[str, str]:
    """Looked-up name -> its concept; a name two concepts claim is an error of the tables."""
    return unique({n: c.name for c in concepts().values() for n in c.names}, "name")


@cache
def by_code() -> dict[str, str]:
    """Looked-up LOINC code -> its concept; a code two concepts claim is an error of the tables."""
    return unique({code: c.name for c in concepts().values() for code in c.codes}, "code")


def unique(index: dict[str, str], what: str) -> dict[str, str]:
    """The index, checked that no entry belongs to two concepts."""
    claimed: dict[str, set[str]] = {}
    for c in concepts().values():
        for entry in c.codes if what == "code" else c.names:
            claimed.setdefault(entry, set()).add(c.name)
    clashes = {entry: sorted(names) for entry, names in claimed.items() if len(names) > 1}
    if clashes:
        raise ValueError(f"synonym tables: a {what} of several concepts: {clashes}")
    return index


Signature = tuple[tuple[Any, tuple[tuple[Any, Any], ...]], ...]
"""A resource's main concepts as (text, ((code, display), ...)) each: what its index terms depend on."""


def signature(main: Iterable[dict[str, Any]]) -> Signature:
    """The parts of a resource's concepts (``_concepts.searched_concepts``) that say what it is indexed under."""
    return tuple((c.get("text"), tuple((x.get("code"), x.get("display")) for x in c.get("coding", ()))) for c in main)


@lru_cache(maxsize=65536)
def terms_of(parts: Signature) -> tuple[frozenset[str], frozenset[str]]:
    """(codes, labels) of a resource's main concepts, looked-up form; remembered, as records share concepts."""
    codes = {lookup_key(str(code)) for _, coding in parts for code, _ in coding if code}
    labels = {lookup_key(str(text)) for text, _ in parts if text}
    labels |= {lookup_key(str(display)) for _, coding in parts for _, display in coding if display}
    return frozenset(codes), frozenset(labels)


@lru_cache(maxsize=65536)
def index_terms(parts: Signature) -> frozenset[str]:
    """What a resource is indexed under: its codes and labels (exact rule), and its synonym concepts."""
    codes, labels = terms_of(parts)
    names, codes_index = by_name(), by_code()
    synonyms = {MARK + c for c in map(codes_index.get, codes) if c} | {MARK + c for c in map(names.get, labels) if c}
    return codes | labels | synonyms


def query_terms(query: str) -> list[str]:
    """The index terms a query looks up: itself (a ``system|code`` as its code) and its synonym concept."""
    wanted = lookup_key(query)
    wanted = wanted.rsplit("|", 1)[1] if "|" in wanted and not wanted.endswith("|") else wanted
    concept = by_name().get(wanted)
    return [wanted, MARK + concept] if concept else [wanted]


def words_fit(query: str, label: str) -> bool:
    """Whether every word of the query is in the label (latin: a whole word; Chinese: anywhere)."""
    words = set(LATIN_WORD.findall(label))
    return all(w in words for w in LATIN_WORD.findall(query)) and all(r in label for r in CJK_RUN.findall(query))


def words_enough(query: str) -> bool:
    """Whether a query can match by words: a latin word of three letters or a Chinese run of two characters."""
    return any(len(w) >= 3 for w in LATIN_WORD.findall(query)) or any(len(r) >= 2 for r in CJK_RUN.findall(query))


@dataclass
class Labels:
    """The displays and texts of a patient's records of one type: label -> keys, and each key's codes."""

    keys: dict[str, list[Key]] = field(default_factory=dict)
    codes: dict[Key, frozenset[str]] = field(default_factory=dict)

    def matching_words(self, query: str) -> tuple[list[Key], list[str]]:
        """(keys, labels) of the records whose labels fit the query's words: keys only if they share a concept."""
        fitting = sorted(label for label in self.keys if words_fit(query, label))
        keys = list(dict.fromkeys(k for label in fitting for k in self.keys[label]))
        concepts = {self.codes[k] or frozenset({label}) for label in fitting for k in self.keys[label]}
        return (keys if len(concepts) == 1 else []), fitting

    def closest(self, query: str) -> list[str]:
        """The labels most like the query, best first."""
        return difflib.get_close_matches(lookup_key(query), list(self.keys), n=CLOSEST, cutoff=0.0)


_LABELS: WeakKeyDictionary[EHRImage, dict[tuple[str, str], Labels]] = WeakKeyDictionary()


def labels(image: EHRImage, patient: str, rtype: str) -> Labels:
    """The labels of a patient's records of one type in an image, gathered once."""
    cached = _LABELS.setdefault(image, {})
    if (patient, rtype) not in cached:
        found = Labels()
        for key in image.keys_for(patient, rtype):
            codes, names = terms_of(signature(searched_concepts(image.resources[key])))
            found.codes[key] = codes
            for label in names:
                found.keys.setdefault(label, []).append(key)
        cached[(patient, rtype)] = found
    return cached[(patient, rtype)]


def matching_keys(image: EHRImage, patient: str, rtype: str, query: str) -> set[Key]:
    """Keys of a patient's records of one type that the query matches, by the rules of this module."""
    terms = query_terms(query)
    found = {key for term in terms for key in image.coded(patient, rtype, term)}
    if found or len(terms) > 1 or not words_enough(terms[0]):
        return found
    return set(labels(image, patient, rtype).matching_words(terms[0])[0])


def resource_matches(resource: dict[str, Any], query: str) -> bool:
    """Whether a query matches one resource by code, label or synonym (a trial's own writes, not indexed)."""
    return not index_terms(signature(searched_concepts(resource))).isdisjoint(query_terms(query))


def search_hint(image: EHRImage, patient: str, rtype: str, query: str) -> dict[str, Any]:
    """What to tell an agent whose search found nothing: that nothing matched, and the displays present that have
    all its words (when they are of several concepts) or else those closest to it."""
    found = labels(image, patient, rtype)
    wanted = lookup_key(query)
    fitting = found.matching_words(wanted)[1] if words_enough(wanted) else []
    hint: dict[str, Any] = {"message": f"no {rtype} of this patient matches {query!r}"}
    return hint | ({"candidates": fitting} if fitting else {"closest": found.closest(query)})
