"""Which drugs of the drug table a name or prescription string means (synthetic table, for evaluation only).

A name is looked up whole first (our name or an alias, any case or width). Otherwise it is read as an RxNorm
clinical drug name ("24 HR Metformin hydrochloride 500 MG Extended Release Oral Tablet", "amoxicillin 875 MG /
clavulanate 125 MG Oral Tablet"): a leading duration or pack size ("24 HR", "200 ACTUAT") and a bracketed brand
are dropped, the components are split at " / ", and each component's ingredient is its words before the first
number (the strength), looked up as written and then without salt words (hydrochloride, sodium, ...). Ingredients that together are one row's (amoxicillin with
clavulanate) are that row; otherwise each ingredient is its own drug, and one the table does not know is unknown.
"""

from __future__ import annotations

import re
from collections.abc import Container
from dataclasses import dataclass

from ..ehr import lookup_key

SALTS_WORDS = (
    "hydrochloride hcl sodium potassium calcium magnesium maleate besylate mesylate sulfate tartrate succinate "
    "citrate bitartrate phosphate acetate fumarate propionate furoate bromide dihydrate monohydrate"
)
SALTS = frozenset(SALTS_WORDS.split())
"""Salt words an RxNorm name puts after the ingredient (losartan potassium, metformin hydrochloride)."""
PACKAGE = re.compile(r"^(?:nda\d+ )?[\d.]+ (?:hr|actuat|ml|day) ")
"""A leading duration or pack size ("24 HR", "NDA020503 200 ACTUAT", "3 ML") before the ingredient."""
BRAND = re.compile(r"\[[^\]]*\]")


@dataclass(frozen=True)
class Resolved:
    """The drug-table names a text means, and the ingredients in it that the table does not know."""

    names: tuple[str, ...]
    unknown: tuple[str, ...]


def ingredient_names(text: str) -> list[str]:
    """The ingredient part of each component of an RxNorm-style name, looked-up form ("metformin hydrochloride")."""
    plain = PACKAGE.sub("", BRAND.sub(" ", lookup_key(text)).strip())
    found = []
    for component in plain.split(" / "):
        words = component.replace(",", " ").split()
        lead = []
        for word in words:
            if word[0].isdigit():
                break
            lead.append(word)
        if lead:
            found.append(" ".join(lead))
    return found


def without_salt(ingredient: str, known: Container[str]) -> str:
    """The ingredient as the table knows it: as written, or without its salt words (if any word remains)."""
    if ingredient in known:
        return ingredient
    words = [w for w in ingredient.split() if w not in SALTS]
    return " ".join(words) if words else ingredient
