"""The replay player's Python side, through widget state; its static page as text; the Lab launcher's settings."""

from __future__ import annotations

import json
import re

import pytest

from forge_kernel import open_run
from forge_kernel.spec import SpecError
from forge_kernel.spec.compact import SYNTHETIC_BANNER
from forge_kernel.spec.errors import StoreError
from forge_kernel.spec.trajectory import TURN_TEXT, compact_json
from forge_kernel.widgets import ReplayPlayer, play, player_html, write_player_page
from forge_kernel.widgets._frontend import ESM
from forge_kernel.widgets.lab import QUIET, lab_command, quiet_lab

TASK = "SC-MED-GASTRIC-ULCER"


@pytest.fixture(scope="module")
def run(reference_run):
    with open_run(reference_run) as run:
        yield run


def as_synced(trial) -> dict:
    """A trial's compact form as the front end receives it (the 64-bit seed as text)."""
    data = json.loads(trial.compact().model_dump_json())
    return {**data, "seed": str(data["seed"])}


def test_the_trait_holds_the_compact_trajectory(run):
    trial = run.trial(TASK, "unsafe-shortcut", 0)
    player = play(trial)
    assert json.loads(player.trajectory) == as_synced(trial) and player.other is None
    state = player.get_state()  # the trial travels as one binary buffer of JSON
    assert isinstance(state["trajectory"], bytes) and json.loads(state["trajectory"])["banner"] == SYNTHETIC_BANNER
    assert state["_esm"] == ESM
    assert ReplayPlayer(run.path, task=TASK, agent="unsafe-shortcut", trial=0).trajectory == player.trajectory
    assert json.loads(player.trajectory)["seed"] == str(trial.seed) and trial.seed > 2**53  # text: JS keeps 53 bits


def test_a_side_by_side_player_holds_both_trials(run):
    by_tuple = ReplayPlayer(run, task=TASK, agent="candidate-v2", trial=0, other=("unsafe-shortcut", 0))
    by_trial = play(run.trial(TASK, "candidate-v2", 0), other=run.trial(TASK, "unsafe-shortcut", 0))
    assert by_tuple.trajectory == by_trial.trajectory and by_tuple.other == by_trial.other
    assert json.loads(by_tuple.trajectory) == as_synced(run.trial(TASK, "candidate-v2", 0))
    assert json.loads(by_tuple.other) == as_synced(run.trial(TASK, "unsafe-shortcut", 0))
    unstable = play(run.trial(TASK, "flaky-simulator", 0), other=("flaky-simulator", 2))
    assert (json.loads(unstable.trajectory)["trial"], json.loads(unstable.other)["trial"]) == (0, 2)


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"agent": "nobody"}, StoreError, "no trial SC-MED-GASTRIC-ULCER / nobody / 0"),
        ({"trial": 7}, StoreError, "no trial SC-MED-GASTRIC-ULCER / unsafe-shortcut / 7"),
        ({"other": ("unsafe-shortcut", 0)}, SpecError, "other: unsafe-shortcut trial 0 beside itself"),
        ({"other": "baseline-v1"}, TypeError, "expected a Trial (run.trial(...)) or a CompactTrajectory, not str"),
    ],
)
def test_bad_arguments_are_one_clear_error(run, kwargs, error, message):
    with pytest.raises(error, match=re.escape(message)):
        ReplayPlayer(run, **{"task": TASK, "agent": "unsafe-shortcut", "trial": 0, **kwargs})


def test_side_by_side_needs_the_same_task(run):
    with pytest.raises(SpecError, match="other: a trial of SC-OPS-ADMISSION; side by side needs SC-MED-GASTRIC-ULCER"):
        play(run.trial(TASK, "candidate-v2", 0), other=run.trial("SC-OPS-ADMISSION", "candidate-v2", 0))


def embedded(html: str) -> dict:
    """The JSON the static fragment carries (state and module source)."""
    return json.loads(re.search(r'<script type="application/json" id="mf-\w+-data">(.*?)</script>', html, re.S)[1])


def test_the_static_fragment_carries_everything_inline(run):
    trial = run.trial(TASK, "unsafe-shortcut", 0)
    compact = trial.compact()
    hostile = compact.model_copy(update={"answer": "</script><script>alert(1)</script>"})
    html = player_html(hostile, other=run.trial(TASK, "candidate-v2", 0))
    data = embedded(html)
    assert data["state"]["trajectory"]["answer"] == hostile.answer and "</script><script>" not in html
    assert data["state"]["other"]["agent"] == "candidate-v2"
    assert data["esm"] == ESM
    assert "<link" not in html and " src=" not in html  # nothing to fetch: styles and module are inline
    assert SYNTHETIC_BANNER in html


def test_a_player_page_is_a_whole_document(run, tmp_path):
    path = write_player_page(tmp_path / "replay.html", run.trial(TASK, "unsafe-shortcut", 0))
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and '<meta charset="utf-8">' in page
    assert "<title>SC-MED-GASTRIC-ULCER · unsafe-shortcut trial 0 · replay (synthetic data)</title>" in page
    assert embedded(page)["state"]["trajectory"]["agent"] == "unsafe-shortcut"


def test_lab_starts_quiet_on_loopback_with_a_token(tmp_path):
    path = quiet_lab(tmp_path)
    path.write_text(json.dumps({"other": {"kept": True}}), encoding="utf-8")
    assert json.loads(quiet_lab(tmp_path).read_text(encoding="utf-8")) == {"other": {"kept": True}, **QUIET}
    command = lab_command(tmp_path, 8899, "secret")
    assert {
        "--ServerApp.ip=127.0.0.1",
        "--ServerApp.port=8899",
        "--IdentityProvider.token=secret",
        "--no-browser",
    } <= set(command)


def test_the_state_carries_the_stored_events_undecoded(run):
    trial = run.trial(TASK, "unsafe-shortcut", 0)
    player = ReplayPlayer(
        run, task=TASK, agent="unsafe-shortcut", trial=0, other=trial.run.trial(TASK, "candidate-v2", 0)
    )
    assert json.loads(player.trajectory)["steps"] == [json.loads(compact_json(vars(e))) for e in trial.events]
    fresh = run.trial(TASK, "unsafe-shortcut", 0)
    assert json.loads(fresh.compact_json()) == json.loads(trial.compact().model_dump_json())
    assert fresh._events is None  # the JSON came from the store's own text


def test_an_llm_trial_carries_its_model_turns_cut_to_a_readable_length(llm_run):
    with open_run(llm_run) as run:
        trial = run.trial(TASK, "narrated", 0)
        state = json.loads(play(trial).trajectory)
        html = player_html(trial)
    turns = state["turns"]
    assert len(turns) == len(trial.turns)
    assert state["cost"] == trial.cost == pytest.approx(sum(t.cost for t in trial.turns))  # what the turns were charged
    plan = trial.turns[0].text
    assert len(plan) > TURN_TEXT and turns[0]["text"] == plan[:TURN_TEXT]
    assert turns[0]["text_cut"] == len(plan) - TURN_TEXT  # the rest counted, not sent
    assert turns[0]["calls"] == [{"name": "patient_search", "arguments": '{"mrn": ', "step": None}]  # never sent
    asked = [c["step"] for t in turns[1:] for c in t["calls"]]
    assert asked == [s["step"] for s in state["steps"]] and [t["after_step"] for t in turns[1:]] == list(range(8))
    assert {k: turns[1][k] for k in ("prompt_tokens", "completion_tokens", "cached_tokens")} == {
        "prompt_tokens": 1900,
        "completion_tokens": 60,
        "cached_tokens": 1024,
    }
    assert json.loads(turns[-1]["text"])["answer"] == state["answer"] and turns[-1]["finish_reason"] == "stop"
    assert embedded(html)["state"]["trajectory"]["turns"] == turns  # the static page carries the same


def test_a_trial_without_model_turns_has_none(run):
    state = json.loads(play(run.trial(TASK, "candidate-v2", 0)).trajectory)
    assert state["turns"] == [] and state["cost"] == 0
