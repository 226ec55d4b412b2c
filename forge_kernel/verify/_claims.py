"""What an answer claims about the patient now, sentence by sentence: each diagnosis (the diagnosis vocabulary) or
state (``tables/language.yaml``, ``claims``) it names, affirmed or denied. Read as ConText assigns assertion status:
a denied mention is negated (the negation cues), a historical or hypothetical one, and one its clause proposes or
concludes, is no claim about now. ``answer.consistent`` compares the claims of different sentences.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache

from ._facts import clause, proposed
from ._text import cue_pattern, language, negated, normal
from .tables import TEXTS_CACHED, compact, diagnosis_vocabulary

SENTENCE = re.compile(r"[^。！？!?；;\n]+?(?:[。！？!?；;\n]|\.(?=\s|$)|$)")
"""A sentence: up to its full stop (a "." followed by a space or the end, not a decimal point)."""


@dataclass(frozen=True)
class Claim:
    """One concept a sentence names about the patient now, affirmed or denied."""

    concept: str
    affirmed: bool
    sentence: str


@dataclass(frozen=True)
class ClaimCues:
    names: re.Pattern
    """Every name of a diagnosis or a state, longest first."""
    concepts: dict[str, str]
    """Compact name -> the concept's first name."""
    opposites: tuple[frozenset[str], ...]
    off_now: re.Pattern
    """Historical and hypothetical cues."""


@cache
def claim_cues() -> ClaimCues:
    data = language()["claims"]
    concepts = dict(diagnosis_vocabulary())
    concepts |= {compact(term): names[0] for names in data["states"] for term in names}
    return ClaimCues(
        cue_pattern(list(concepts)),
        concepts,
        tuple(frozenset(pair) for pair in data["opposites"]),
        cue_pattern([*data["historical"], *data["hypothetical"]]),
    )


def about_now(text: str, start: int, end: int) -> bool:
    """The mention at ``text[start:end]`` (a normalised text) is about the patient now: neither historical nor
    hypothetical, and not proposed or concluded by its clause."""
    begins, ends = clause(text, start, end)
    return not claim_cues().off_now.search(text, begins, ends) and not proposed(text, start, end)


@lru_cache(maxsize=TEXTS_CACHED)
def claims(answer: str) -> tuple[Claim, ...]:
    """The claims of each sentence of the answer, in order."""
    cues, found = claim_cues(), []
    for sentence in SENTENCE.finditer(normal(answer)):
        text = sentence.group()
        for m in cues.names.finditer(text):
            concept = cues.concepts.get(compact(m.group()))
            if concept and about_now(text, m.start(), m.end()):
                found.append(Claim(concept, not negated(text, m.start(), m.end()), text.strip()))
    return tuple(found)


def contradiction(answer: str) -> str | None:
    """The first pair of sentences that cannot both hold, named: one affirms what another denies, or they affirm
    two opposite states; None when there is none."""
    said = claims(answer)
    for first in said:
        for second in said:
            if first.sentence == second.sentence:
                continue
            if first.concept == second.concept and first.affirmed and not second.affirmed:
                return f"says {first.concept} ({first.sentence!r}) and denies it ({second.sentence!r})"
            opposite = frozenset((first.concept, second.concept)) in claim_cues().opposites
            if opposite and first.affirmed and second.affirmed and first.concept < second.concept:
                return f"says {first.concept} ({first.sentence!r}) and {second.concept} ({second.sentence!r})"
    return None


def denied_output(answer: str, stated: dict[str, str]) -> str | None:
    """The first diagnosis the structured output states (``stated``: where -> the diagnosis's first name) that a
    sentence of the answer denies about now, named; None when there is none."""
    for where, concept in stated.items():
        denial = next((c for c in claims(answer) if c.concept == concept and not c.affirmed), None)
        if denial:
            return f"{where} says {concept} and the answer denies it ({denial.sentence!r})"
    return None
