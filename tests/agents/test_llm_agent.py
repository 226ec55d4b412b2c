"""The ``llm`` agent against a real chat-completions server on 127.0.0.1 (tests/chat_server.py), through the official
SDK and ``forge run``: its loop, each mishap a user meets, and the model's side of the record (SYNTHETIC data)."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from forge_kernel.agents.llm import PROMPT_VERSION
from forge_kernel.cli import main
from forge_kernel.engine import RunSpec, execute
from forge_kernel.models import Price, RateLimiter, RateLimits
from forge_kernel.report.release import recorded
from forge_kernel.spec import SpecError
from forge_kernel.store import load_trials, open_run
from tests.chat_server import ChatServer, gold_script
from tests.helpers import copy_packages, copy_worked_examples, needs_bwrap


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    return copy_worked_examples(tmp_path_factory.mktemp("llm"))


@pytest.fixture(scope="module")
def server(suite):
    with ChatServer(gold_script(sorted(p.parent for p in suite.rglob("package.yaml")))) as chat:
        yield chat


def config(folder: Path, server: ChatServer, name: str = "model", **fields) -> str:
    """A model config file for the scripted server; its ``llm:`` entry."""
    path = folder / f"{name}.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "base_url": server.url,
                "model": "gold",
                "seed": 0,
                "timeout_s": 1.0,
                "price": {"input": 2.0, "output": 8.0},
                **fields,
            }
        )
    )
    return f"llm:{path}"


def run(suite: Path, out: Path, *agents: str, **spec) -> Path:
    asyncio.run(execute(RunSpec(suite=[str(suite)], agents=list(agents), trials=1, **spec), out, progress=False))
    return out


@needs_bwrap
def test_a_model_that_plays_the_gold_passes_every_task_and_its_turns_are_on_the_record(suite, server, tmp_path):
    out = run(suite, tmp_path / "run", config(tmp_path, server))
    trials = load_trials(out)
    assert len(trials) == 3 and trials.passed.all(), trials[["task_id", "status", "reason"]]
    with open_run(out) as stored:
        card = stored.manifest["agents"][0]
        assert (card["name"], card["trusted"], card["isolation"]) == ("model", False, "namespace")
        assert card["version"].startswith("gold+") and card["config"]["prompt_version"] == PROMPT_VERSION
        for row in trials.itertuples():
            trial = stored.trial(row.task_id, "model", 0)
            assert [t.after_step for t in trial.turns] == list(range(len(trial.events) + 1))
            assert [c["name"] for t in trial.turns for c in t.tool_calls] == [e.tool for e in trial.events]
            assert all(t.prompt_tokens == 120 and t.completion_tokens == 20 for t in trial.turns)
            assert trial.cost == pytest.approx(len(trial.turns) * (120 * 2.0 + 20 * 8.0) / 1e6)
            assert json.loads(trial.turns[-1].text)["answer"] == trial.result.answer
            assert [(t.turn, t.after_step) for t in trial.compact().turns] == [
                (t.turn, t.after_step) for t in trial.turns
            ]  # the player
    assert all(r["tool_choice"] == "auto" for r in server.requests if r.get("tools"))  # a local server needs it said


@needs_bwrap
@pytest.mark.parametrize(
    "model, retried",
    [("rate-limited-once", "rate_limited: 429"), ("server-error-once", "server_error: 503"), ("slow-once", "timeout")],
)
def test_a_rate_limit_a_server_error_or_a_timeout_is_tried_again_and_recorded(suite, server, tmp_path, model, retried):
    out = run(suite, tmp_path / "run", config(tmp_path, server, model=model))
    trials = load_trials(out)
    assert trials.passed.all(), trials[["task_id", "status", "reason"]]
    with open_run(out) as stored:
        first = stored.trial(trials.task_id[0], "model", 0).turns[0]
    assert len(first.retries) == 1 and first.retries[0].startswith(retried), first.retries


@needs_bwrap
@pytest.mark.parametrize("model, code", [("malformed-args-once", None), ("unknown-tool-once", "unknown_tool")])
def test_malformed_arguments_go_back_to_the_model_and_an_unknown_tool_is_refused_on_the_record(
    suite, server, tmp_path, model, code
):
    out = run(suite, tmp_path / "run", config(tmp_path, server, model=model))
    with open_run(out) as stored:
        trial = stored.trial("SC-MED-GASTRIC-ULCER", "model", 0)
    first = trial.turns[0].tool_calls[0]
    if code is None:  # it never reached the tools: the model's turn keeps what it wrote, and it wrote again
        assert first["arguments"] == '{"mrn": ' and trial.turns[1].after_step == 0
    else:
        assert (trial.events[0].tool, trial.events[0].error["code"]) == ("delete_everything", code)
    assert len(trial.turns) == len(trial.events) + 2 - (code is not None) and trial.grading.scores.passed


@needs_bwrap
def test_parallel_tool_calls_run_in_order_from_one_turn(suite, server, tmp_path):
    out = run(suite, tmp_path / "run", config(tmp_path, server, model="parallel"))
    trials = load_trials(out)
    assert trials.passed.all(), trials[["task_id", "status", "reason"]]
    with open_run(out) as stored:
        trial = stored.trial("SC-MED-GASTRIC-ULCER", "model", 0)
    assert len(trial.turns) == 2 and [c["name"] for c in trial.turns[0].tool_calls] == [e.tool for e in trial.events]
    assert trial.turns[1].after_step == len(trial.events)


@needs_bwrap
@pytest.mark.parametrize(
    "model, status, self_status, reason",
    [
        ("refuses", "completed", "gave_up", None),
        ("no-tool-call", "completed", "completed", None),
        (
            "context-length",
            "agent_error",
            "error",
            "ModelError: context_length: 400 This model's maximum context length",
        ),
        ("always-rate-limited", "agent_error", "error", "ModelError: rate_limited: 429 Rate limit reached"),
    ],
)
def test_a_refusal_no_call_a_context_length_error_or_endless_rate_limits_end_the_trial_as_a_user_expects(
    suite, server, tmp_path, model, status, self_status, reason
):
    out = run(suite, tmp_path / "run", config(tmp_path, server, model=model, retries=1))
    trials = load_trials(out)
    assert set(trials.status) == {status} and set(trials.self_status) == {self_status} and not trials.passed.any()
    assert all((r or "").startswith(reason or "") for r in trials.reason), trials.reason
    with open_run(out) as stored:
        turn = stored.trial("SC-MED-GASTRIC-ULCER", "model", 0).turns[0]
    assert (turn.error or "").startswith((reason or "").removeprefix("ModelError: "))
    assert trials.answer[0] == {
        "refuses": "I can't help with a patient's chart.",
        "no-tool-call": "The patient seems fine.",
    }.get(model, "")


@needs_bwrap
def test_several_models_compare_in_one_run_each_by_its_own_name_and_version(suite, server, tmp_path):
    out = run(suite, tmp_path / "run", config(tmp_path, server, "a"), config(tmp_path, server, "b", temperature=0.7))
    with open_run(out) as stored:
        cards = {a["name"]: a for a in stored.manifest["agents"]}
    assert set(cards) == {"a", "b"} and cards["a"]["version"] != cards["b"]["version"]
    assert cards["a"]["config"]["config_hash"] != cards["b"]["config"]["config_hash"]
    assert len(load_trials(out)) == 6


@needs_bwrap
def test_the_key_reaches_the_model_and_no_other_agents_sandbox(suite, server, tmp_path, monkeypatch):
    monkeypatch.setenv("FORGE_TEST_MODEL_KEY", "sk-synthetic-test-key")
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "hostile"))
    before = len(server.keys)
    out = run(
        suite,
        tmp_path / "run",
        config(tmp_path, server, api_key_env="FORGE_TEST_MODEL_KEY"),
        "hostile_agents:EnvReader",
    )
    assert set(server.keys[before:]) == {"sk-synthetic-test-key"}
    with open_run(out) as stored:
        assert "sk-synthetic-test-key" not in json.dumps(stored.manifest)
    seen = [json.loads(a) for a in load_trials(out).query("agent == 'env-reader'").answer]
    assert seen and all("FORGE_TEST_MODEL_KEY" not in s["names"] for s in seen)


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"temperature": "hot"}, "temperature: Input should be a valid number"),
        ({"base_url": "ftp://x"}, "base_url: String should match pattern"),
        ({"api_key_env": "NO_SUCH_FORGE_KEY"}, "api_key_env: NO_SUCH_FORGE_KEY is not set in this environment"),
        ({"colour": "red"}, "colour: unknown field"),
    ],
)
def test_a_bad_model_config_is_one_line_before_anything_runs(suite, server, tmp_path, fields, message):
    entry = config(tmp_path, server, **fields)
    with pytest.raises(SpecError) as err:
        run(suite, tmp_path / "run", entry)
    assert str(err.value).startswith(f"{entry.removeprefix('llm:')}: {message}")
    assert not (tmp_path / "run").exists()


def test_rate_limits_hold_for_every_process_forked_after_the_limiter():
    """The buckets live in memory shared with the workers the agent's zygote forks: a request in a child waits for
    what the parent took."""
    limiter = RateLimiter(RateLimits(requests_per_minute=120, tokens_per_minute=600_000))
    for _ in range(120):  # the bucket's whole minute, at once
        asyncio.run(limiter.acquire(10))
    read, write = os.pipe()
    if (child := os.fork()) == 0:
        started = time.monotonic()
        asyncio.run(limiter.acquire(10))
        os.write(write, f"{time.monotonic() - started}".encode())
        os._exit(0)
    os.waitpid(child, 0)
    waited = float(os.read(read, 64))
    assert 0.3 < waited < 2.0  # two requests a second: the next one half a second later
    unlimited = RateLimiter(RateLimits())
    assert not unlimited.active and asyncio.run(unlimited.acquire(10**9)) is None


def test_the_price_table_prices_cached_prompt_tokens_apart():
    price = Price(input=2.0, output=8.0, cached_input=0.5)
    assert price.cost(1000, 100, cached=400) == pytest.approx((600 * 2.0 + 400 * 0.5 + 100 * 8.0) / 1e6)
    assert Price(input=2.0).cost(1000, 0, cached=400) == pytest.approx(1000 * 2.0 / 1e6)


def test_a_trusted_model_config_runs_in_process(suite, server, tmp_path):
    entry = config(tmp_path, server)
    out = run(suite, tmp_path / "run", entry, trust=[entry])
    with open_run(out) as stored:
        assert stored.manifest["agents"][0]["isolation"] == "in-process"
    assert load_trials(out).passed.all()


NSCLC = ["TP-ANC-UNKNOWN-v1", "TP-CONFLICT-v1", "TP-CROSS-PATIENT-v1", "TP-ELIGIBLE-v1", "TP-EXCLUSION-v1"]


@needs_bwrap
def test_a_model_is_released_against_a_reference_agent_like_any_agent(tmp_path):
    """The worked examples and five forge-nsclc packages, the llm agent as candidate in a release: its trials pass
    through summary, compare, replay and the release notebook, with its tokens and cost."""
    suites = [copy_worked_examples(tmp_path / "a"), copy_packages(tmp_path / "b", "forge-nsclc", NSCLC)]
    folders = sorted(p.parent for s in suites for p in s.rglob("package.yaml"))
    with ChatServer(gold_script(folders)) as chat:
        releases = tmp_path / "parameterized_runs"
        releases.mkdir()
        config(releases, chat, "gold-model")
        (releases / "model.yaml").write_text(
            yaml.safe_dump(
                {
                    "release": "model",
                    "baseline": "baseline-v1",
                    "candidate": "llm:gold-model.yaml",
                    "trials": 1,
                    "suites": [os.path.relpath(s, releases) for s in suites],
                }
            )
        )
        released = CliRunner().invoke(main, ["release", str(releases / "model.yaml")])
    assert released.exit_code in (0, 1), released.output
    assert "candidate llm:" in released.output and "(gold-model): 8 trial(s) run" in released.output
    values = recorded(json.loads((releases / "model/release.ipynb").read_text(encoding="utf-8")))
    assert values["trials"] == {"baseline": 8, "candidate": 8}
    run_dir = releases / "model/runs/candidate"
    trials = load_trials(run_dir)
    assert trials.passed.all() and (trials.cost > 0).all()
    summary = CliRunner().invoke(main, ["summary", str(run_dir)])
    assert "gold-model" in summary.output
    replay = CliRunner().invoke(main, ["replay", str(run_dir), "--task", NSCLC[0], "--agent", "gold-model"])
    assert replay.exit_code == 0 and "PASSED" in replay.output
    compared = CliRunner().invoke(main, ["compare", str(releases / "model/runs/baseline"), str(run_dir)])
    assert compared.exit_code in (0, 1) and "gold-model" in compared.output


@needs_bwrap
def test_forge_run_takes_a_model_config_and_prints_it_beside_a_reference_agent(suite, server, tmp_path):
    entry = config(tmp_path, server, "cli-model")
    result = CliRunner().invoke(
        main,
        [
            "run",
            "--suite",
            str(suite),
            "--agent",
            f"{entry},baseline-v1",
            "--trials",
            "1",
            "--out",
            str(tmp_path / "run"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "3 trial(s) run" not in result.output and "6 trial(s) run" in result.output
    assert "namespace sandbox: cli-model" in result.output and "trusted, in process: baseline-v1" in result.output
