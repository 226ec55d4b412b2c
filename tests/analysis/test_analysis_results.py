"""Analysis results on the reference run, as a notebook meets them: every rendering (text, HTML, the MIME bundle)
starts with the synthetic-data banner, the trial ids a comparison carries open the trials behind each task, and
ablation cards share the candidate's side."""

from __future__ import annotations

from html import escape

import pytest

from forge_kernel.analysis import (
    ablation_cards,
    agent_side,
    compare,
    comparison,
    evaluate,
    failure_ledger,
    load_policy,
    pass_rates,
    run_summary,
)
from forge_kernel.spec import SpecError
from forge_kernel.spec.compact import SYNTHETIC_BANNER

ABLATIONS = ["candidate-v2-no-conflict", "candidate-v2-no-domain-gate"]


@pytest.fixture(scope="module")
def results(reference) -> dict:
    cmp = compare(reference, reference, "baseline-v1", "candidate-v2")
    return {
        "comparison": cmp,
        "gate": evaluate(cmp, load_policy()),
        "ablation": ablation_cards(reference, "candidate-v2", ABLATIONS)[0],
        "ledger": failure_ledger(reference),
        "pass rates": pass_rates(reference, "suite"),
        "summary": run_summary(reference),
    }


@pytest.mark.parametrize("name", ["comparison", "gate", "ablation", "ledger", "pass rates", "summary"])
def test_every_rendering_starts_with_the_banner(results, name):
    result = results[name]
    text, html = str(result), result._repr_html_()
    assert text.startswith(SYNTHETIC_BANNER + "\n") and repr(result) == text
    assert escape(SYNTHETIC_BANNER) in html.split("</p>", 1)[0]  # the first paragraph
    assert result._repr_mimebundle_() == {"text/plain": text, "text/html": html}
    assert len(text.splitlines()) > 1


def test_the_comparison_shows_its_highlights_with_their_trial_ids(results):
    cmp = results["comparison"]
    assert cmp.improvements and all(task in str(cmp) for task in cmp.improvements)
    first = cmp.task(cmp.improvements[0])
    shown = ", ".join(map(str, first.candidate.trial_ids))
    assert f"trials {shown}" in str(cmp) and f"trials {shown}" in cmp._repr_html_()


def test_the_trial_ids_behind_each_task_open_its_trials(reference, results):
    cmp = results["comparison"]
    for task in cmp.tasks[:10]:
        for side, agent in ((task.baseline, "baseline-v1"), (task.candidate, "candidate-v2")):
            trials = [reference.trial_by_id(i) for i in side.trial_ids]
            assert [(t.task_id, t.agent, t.trial) for t in trials] == [(task.task_id, agent, k) for k in range(3)]
            assert sum(t.grading.scores.passed for t in trials) == side.passes


def test_ablation_cards_compute_the_candidate_side_once(reference, monkeypatch):
    built = []
    real = comparison.side_summary
    monkeypatch.setattr(comparison, "side_summary", lambda side: built.append(side.agent) or real(side))
    cards = ablation_cards(reference, "candidate-v2", ABLATIONS)
    assert [c.ablation for c in cards] == ABLATIONS
    assert sorted(built) == sorted(["candidate-v2", *ABLATIONS])


def test_naming_an_agent_the_run_does_not_hold_is_an_error(reference):
    with pytest.raises(SpecError, match="no agent 'nobody'"):
        agent_side(reference, "nobody", "--candidate-agent")
