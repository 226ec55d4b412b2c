"""Drugs and drug classes as grading reads them (``drug_classes.yaml`` with the tools' ``drugs.yaml``; synthetic):
which drugs a text names, their classes, the classes an examination exposes to, and what rules a drug out."""

from __future__ import annotations

import re
from functools import cache, lru_cache

from pydantic import Field, field_validator

from ...spec import Strict
from ...tools import drug_names, table
from .terms import TEXTS_CACHED, compact, mentioned, read_table

PARENTHESES = re.compile(r"[（(][^）)]*[）)]")


class DrugClass(Strict):
    """One class of ``drug_classes.yaml`` (its header explains every field)."""

    id: str
    names: list[str] = Field(default_factory=list)
    members: list[str | list[str]] = Field(default_factory=list)
    patterns: list[str] = Field(default_factory=list)
    cross_allergy: bool = True
    cross_reacts: list[str] = Field(default_factory=list)
    exams: list[str] = Field(default_factory=list)
    exams_except: list[str] = Field(default_factory=list)
    contraindicated_conditions: list[str] = Field(default_factory=list)

    @field_validator("patterns")
    @classmethod
    def _compile(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            re.compile(pattern)
        return patterns

    def member_names(self) -> list[list[str]]:
        """Each member as [name, other names...]."""
        return [[m] if isinstance(m, str) else m for m in self.members]


class DrugClassFile(Strict):
    drug_classes: list[DrugClass]
    classless: list[str] = Field(description="Drugs of the tools' drugs.yaml that belong to no class here.")


@cache
def drug_class_file() -> DrugClassFile:
    return read_table("drug_classes", DrugClassFile)


@cache
def classes() -> dict[str, DrugClass]:
    """Every class, by id."""
    return {c.id: c for c in drug_class_file().drug_classes}


@cache
def drug_vocabulary() -> dict[str, str]:
    """Compact drug name or alias -> the drug's name: the tools' drugs.yaml, then the members of every class (the
    first name of a member, or its drugs.yaml name)."""
    vocabulary = {compact(alias): name for alias, name in drug_names().items()}
    for drug_class in classes().values():
        for names in drug_class.member_names():
            name = vocabulary.get(compact(names[0]), names[0])
            for alias in names:
                vocabulary.setdefault(compact(alias), name)
    return vocabulary


@cache
def members() -> dict[str, set[str]]:
    """Drug name -> ids of the classes that list it."""
    found: dict[str, set[str]] = {}
    for drug_class in classes().values():
        for names in drug_class.member_names():
            found.setdefault(drug_vocabulary()[compact(names[0])], set()).add(drug_class.id)
    return found


@cache
def class_names() -> dict[str, str]:
    """Compact class word -> class id."""
    return {compact(name): c.id for c in classes().values() for name in c.names}


@lru_cache(maxsize=TEXTS_CACHED)
def drugs_in(text: str) -> tuple[str, ...]:
    """The drugs a text names (a prescription's medication, an allergy's substance)."""
    return tuple(mentioned(text, drug_vocabulary()))


@cache
def class_patterns() -> dict[str, re.Pattern]:
    """Class id -> one pattern matching wherever any of the class's patterns does."""
    return {c.id: re.compile("|".join(f"(?:{p})" for p in c.patterns)) for c in classes().values() if c.patterns}


@lru_cache(maxsize=TEXTS_CACHED)
def classes_of(text: str) -> frozenset[str]:
    """The classes of what a text names: classes of the drugs in it and classes whose patterns match it."""
    plain = compact(text)
    found = {c for drug in drugs_in(text) for c in members().get(drug, ())}
    return frozenset(found | {c for c, pattern in class_patterns().items() if pattern.search(plain)})


@lru_cache(maxsize=TEXTS_CACHED)
def allergy_classes(text: str) -> frozenset[str]:
    """The classes an allergy to what a text names rules out: the classes it names (磺胺类) and the classes of the
    drugs in it, but for therapeutic groups whose members are not alike (``cross_allergy: false``)."""
    named = set(mentioned(text, class_names())) | classes_of(text)
    return frozenset(c for c in named if classes()[c].cross_allergy)


def cross_reacting(class_ids: set[str] | frozenset[str]) -> set[str]:
    """The other classes that an allergy to these classes also rules out (penicillins: cephalosporins)."""
    return {other for c in class_ids for other in classes()[c].cross_reacts} - class_ids


@lru_cache(maxsize=TEXTS_CACHED)
def exposures(exam: str) -> frozenset[str]:
    """The classes an examination of this name exposes the patient to (增强CT: iodinated contrast)."""
    found = set()
    for drug_class in classes().values():
        exam_terms = {compact(t): True for t in drug_class.exams}
        exceptions = {compact(t): True for t in drug_class.exams_except}
        if mentioned(exam, exam_terms) and not mentioned(exam, exceptions):
            found.add(drug_class.id)
    return frozenset(found)


@lru_cache(maxsize=TEXTS_CACHED)
def contraindications(drug: str, drug_classes: frozenset[str]) -> tuple[str, ...]:
    """Condition words that rule a drug out: its classes' contraindicated conditions, and the contraindications of
    its drugs.yaml row that are conditions (not allergies), without their parenthesised notes."""
    words = [w for c in sorted(drug_classes) for w in classes()[c].contraindicated_conditions]
    row = next((d for d in table("drugs") if d["name"] == drug), {})
    listed = [PARENTHESES.sub("", c).strip() for c in row.get("contraindications", []) if "过敏" not in c]
    return tuple(dict.fromkeys(words + [w for w in listed if w]))
