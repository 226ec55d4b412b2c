"""Cue phrases are found by one trie-shaped regex per table: the same places, longest phrase first, whole words for
Latin ones, as the plain alternation of every phrase (kept here as the reference) finds them, on every bundled answer
and every cue table of the grading (synthetic data only)."""

from __future__ import annotations

import re

import pytest

from forge_kernel.spec import find_packages, load_package
from forge_kernel.verify._claims import claim_cues
from forge_kernel.verify._text import cue_pattern, is_word_char, language, normal
from tests.helpers import ROOT


def alternation(phrases: list[str]) -> re.Pattern:
    """The reference: every phrase, longest first, Latin ones as whole words."""
    written = sorted({normal(p) for p in phrases}, key=len, reverse=True)
    return re.compile("|".join(rf"\b{re.escape(p)}\b" if is_word_char(p[0]) else re.escape(p) for p in written))


def cue_tables(node) -> list[list[str]]:
    """Every list of phrases in the grading's language table."""
    if isinstance(node, list) and all(isinstance(x, str) for x in node):
        return [node]
    children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else []
    return [table for child in children for table in cue_tables(child)]


ANSWERS = [
    normal(t.answer)
    for f in find_packages([str(ROOT / "task_packages")])
    for h in [load_package(f).hidden]
    for t in [h.gold, *(c.trajectory for c in h.counterexamples), *(v.trajectory for v in h.valid_variants)]
] + [normal(x) for x in ["no evidence of pneumonia", "non-obese, not only", "未发热，不排除肺栓塞", "none of these"]]


@pytest.mark.parametrize("table", [*cue_tables(language()), list(claim_cues().concepts)], ids=lambda t: t[0])
def test_the_trie_finds_what_the_alternation_of_every_phrase_finds(table):
    trie, reference = cue_pattern(table), alternation(table)
    assert [[m.span() for m in trie.finditer(a)] for a in ANSWERS] == [
        [m.span() for m in reference.finditer(a)] for a in ANSWERS
    ]


def test_the_longest_phrase_wins_and_a_latin_phrase_is_a_whole_word():
    pattern = cue_pattern(["no", "no evidence of", "代偿", "失代偿", "non"])
    assert [m.group() for m in pattern.finditer("no evidence of none; 失代偿, 代偿; non-obese")] == [
        "no evidence of",
        "失代偿",
        "代偿",
        "non",
    ]
