"""An answer judged for what it claims: a diagnosis or state affirmed in one sentence and denied in another, or two
opposite states, fail ``answer.consistent``, naming the sentences; historical, hypothetical and proposed mentions are
no claim about now. The ``claim-negated`` mutant is rejected by it in every bundled package it applies to, and no
bundled answer contradicts itself (synthetic data only)."""

from __future__ import annotations

import asyncio

import pytest

from forge_kernel.engine import Images
from forge_kernel.engine.selftest import mutation_test, selftest_package
from forge_kernel.spec import find_packages, load_package
from forge_kernel.verify._claims import contradiction, denied_output
from forge_kernel.verify.kinds import answer as answer_kinds
from tests.helpers import ROOT


@pytest.mark.parametrize(
    "answer, named",
    [
        ("患者发热。复查后无发热。", "says 发热 ('患者发热。') and denies it ('复查后无发热。')"),
        ("Patient is febrile. No fever.", "says 发热 ('patient is febrile.') and denies it ('no fever.')"),
        ("诊断社区获得性肺炎。Community-acquired pneumonia was ruled out.", "says 社区获得性肺炎"),
        ("呼吸性酸中毒，失代偿。代偿良好。", "says 代偿 ('代偿良好。') and 失代偿"),
        ("Decompensated. Compensated by the kidneys.", "says 代偿"),
    ],
)
def test_a_claim_denied_or_opposed_in_another_sentence_is_named(answer, named):
    found = contradiction(answer)
    assert found is not None and found.startswith(named), found


@pytest.mark.parametrize(
    "answer",
    [
        "无发热，但昨日曾发热。",  # one sentence
        "患者发热。既往无发热。",  # historical
        "Fever since admission. No fever last week.",  # historical
        "有上消化道出血。建议排除上消化道出血。",  # proposed
        "Suspected pulmonary embolism. No pulmonary embolism on CT.",  # a suspicion is no claim
        "高血压。注意低血压风险，无低血压。",  # hypothetical, then another concept
        "呼吸性酸中毒，代偿。",
        "No fever. No infection.",
    ],
)
def test_no_contradiction_where_the_sentences_can_both_hold(answer):
    assert contradiction(answer) is None


def bundled():
    return [load_package(f) for f in find_packages([str(ROOT / "task_packages")])]


def test_no_bundled_answer_contradicts_itself():
    """Every gold, counterexample and valid variant of the bundled packages: the check trips none of them."""
    answers = [
        (p.id, t.answer)
        for p in bundled()
        for t in [p.hidden.gold, *(c.trajectory for c in p.hidden.counterexamples)]
        + [v.trajectory for v in p.hidden.valid_variants]
    ]
    assert len(answers) > 500
    assert [(pid, found) for pid, a in answers if (found := contradiction(a))] == []


@pytest.fixture(scope="module")
def negated_claims():
    """Per bundled package with a claim, the claim-negated mutant's result (about 10 s of CPU)."""

    async def run():
        images = Images()
        return [
            r
            for p in bundled()
            for r in (await mutation_test(p, images)).results
            if r.mutant.operator == "claim-negated"
        ]

    return asyncio.run(run())


def test_the_claim_negated_mutant_applies_widely_and_only_the_consistency_check_rejects_it(negated_claims):
    assert len(negated_claims) >= 15
    assert {r.status for r in negated_claims} == {"rejected"}
    assert {r.detail for r in negated_claims} == {"fails consistent"}


def test_without_the_check_a_negated_claim_survives(monkeypatch):
    package = load_package(ROOT / "task_packages" / "superclue" / "SC-DEV-CVC")
    monkeypatch.setattr(answer_kinds, "contradiction", lambda answer: None)  # the verifier broken: sees none
    report = asyncio.run(mutation_test(package, Images()))
    assert [r.status for r in report.results if r.mutant.operator == "claim-negated"] == ["survived"]


def test_a_diagnosis_the_output_states_and_the_answer_denies_is_named():
    stated = {"output.leading": "急性心力衰竭"}
    found = denied_output("已申请BNP。目前无急性心力衰竭。", stated)
    assert found == "output.leading says 急性心力衰竭 and the answer denies it ('目前无急性心力衰竭。')"
    assert denied_output("首先考虑急性心力衰竭。", stated) is None
    assert denied_output("建议排除急性心力衰竭。", stated) is None  # a proposal, not a claim about now


def test_without_the_output_check_the_bundled_denial_passes(monkeypatch):
    package = load_package(ROOT / "task_packages" / "superclue" / "SC-DDX-DYSPNEA")
    failing = [r.case for r in asyncio.run(selftest_package(package, Images())) if not r.ok]
    assert failing == []
    monkeypatch.setattr(answer_kinds, "denied_output", lambda answer, stated: None)  # the check broken
    failing = [r.case for r in asyncio.run(selftest_package(package, Images())) if not r.ok]
    assert failing == ["leading-denied-in-the-answer"]
