"""The workbench notebooks run top to bottom (nbclient, a real kernel) on the bundled packages, making their sample
run into a folder of the test's; their outputs and their widgets' saved state say what they showed."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from forge_kernel import open_run
from forge_kernel.analysis import compare

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
NAMES = ("01_quickstart", "02_replay_failures", "04_compare_runs")


def with_run_dir(notebook, run_dir: Path):
    """The notebook with its parameters cell pointed at ``run_dir`` (as papermill injects parameters)."""
    (cell,) = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
    cell.source = cell.source.replace('"../runs/notebooks', f'"{run_dir}')
    assert str(run_dir) in cell.source
    return notebook


@pytest.fixture(scope="module")
def executed(tmp_path_factory) -> dict:
    """Each notebook executed in the notebooks folder (01 makes the sample run, 02 and 04 reuse it)."""
    run_dir = tmp_path_factory.mktemp("notebooks") / "run"
    done = {}
    for name in NAMES:
        notebook = with_run_dir(nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4), run_dir)
        NotebookClient(
            notebook,
            kernel_name="python3",
            timeout=600,
            store_widget_state=True,
            resources={"metadata": {"path": str(NOTEBOOKS)}},
        ).execute()
        done[name] = notebook
    done["run_dir"] = run_dir
    return done


def text_of(notebook) -> str:
    """Every stream and plain-text output, in order."""
    parts = []
    for cell in notebook.cells:
        for out in cell.get("outputs", []):
            assert out.output_type != "error", f"{out.ename}: {out.evalue}"
            parts.append(out.get("text", "") + out.get("data", {}).get("text/plain", ""))
    return "\n".join(parts)


def widgets(notebook, anywidget_id: str) -> list[dict]:
    """The saved state of every widget of one class, its binary buffers decoded (as JSON)."""
    states = notebook.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"].values()
    found = []
    for model in states:
        if model["state"].get("_anywidget_id") == f"forge_kernel.widgets.{anywidget_id}":
            state = dict(model["state"])
            for buffer in model.get("buffers", []):
                state[buffer["path"][0]] = json.loads(base64.b64decode(buffer["data"]))
            found.append(state)
    return found


def progress_bar(notebook) -> str:
    """The text of the progress bars (tqdm's widgets) as they ended."""
    states = notebook.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"].values()
    return " ".join(m["state"]["value"] for m in states if m["model_name"] == "HTMLModel")


def test_the_notebooks_are_committed_without_outputs():
    for name in (*NAMES, "05_evaluate_a_model"):  # 05 runs where the local model is (tests/models/test_local_model.py)
        notebook = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
        assert all(not c.get("outputs") for c in notebook.cells if c.cell_type == "code"), name
        assert "Synthetic data only" in notebook.cells[0].source and notebook.metadata.kernelspec.name == "python3"


def test_quickstart_makes_the_run_and_shows_the_dashboard(executed):
    text = text_of(executed["01_quickstart"])
    with open_run(executed["run_dir"]) as run:
        trials, failed = len(run.outcomes), int((~run.outcomes["passed"]).sum())
    assert trials == 18 * 6 * 3 and f"{trials}/{trials}" in progress_bar(executed["01_quickstart"])
    outputs = [out for cell in executed["01_quickstart"].cells for out in cell.get("outputs", [])]
    assert not [
        out for out in outputs if out.get("name") == "stderr"
    ]  # a widget, not red text that reads like an error
    assert text.count("SYNTHETIC DATA") >= 2 and "pass_rate" in text
    (table,) = widgets(executed["01_quickstart"], "failures.FailureTable")
    assert table["total"] == failed == len(table["rows"]) and table["filters"] == {}
    (dashboard,) = widgets(executed["01_quickstart"], "dashboard.RunDashboard")
    assert dashboard["heading"]["trials"] == trials and set(dashboard["charts"]) == {
        "pass_rates",
        "overall",
        "safety",
        "latency",
    }
    assert dashboard["gate"] is None and f"{failed} failed trials of {trials}" in text


def test_replay_failures_opens_the_first_failure_of_unsafe_shortcut(executed):
    notebook = executed["02_replay_failures"]
    (table,) = widgets(notebook, "failures.FailureTable")
    assert table["filters"] == {"agent": "unsafe-shortcut"} and {r["agent"] for r in table["rows"]} == {
        "unsafe-shortcut"
    }
    first = table["rows"][0]
    assert first["critical"] and table["selected"] == first["trial_id"]
    assert table["triage_file"].endswith("triage.yaml") and table["reviewer"] == "reviewer"
    (player,) = widgets(notebook, "player.ReplayPlayer")
    played = player["trajectory"]
    assert (played["task_id"], played["agent"], played["trial"]) == (
        first["task_id"],
        "unsafe-shortcut",
        first["trial"],
    )
    failing = [v for v in played["verdicts"] if v["category"] == "safety" and not v["passed"]]
    assert failing and failing[0]["steps"]
    assert f"{failing[0]['id']} failed at step(s) {failing[0]['steps']}" in text_of(notebook)


def test_compare_runs_shows_the_comparison_the_gate_and_a_pair(executed):
    notebook = executed["04_compare_runs"]
    text = text_of(notebook)
    with open_run(executed["run_dir"]) as run:
        expected = compare(run, run, "baseline-v1", "candidate-v2")
    assert f"improvements: {len(expected.improvements)} {', '.join(expected.improvements)}" in text
    assert f"regressions: {len(expected.regressions)}" in text and "Release gate GREEN" in text
    assert "Ablation: candidate-v2-no-conflict" in text and "Ablation: candidate-v2-no-domain-gate" in text
    (dashboard,) = widgets(notebook, "dashboard.RunDashboard")
    assert dashboard["gate"]["green"] is True and dashboard["gate"]["candidate"] == "candidate-v2"
    (player,) = widgets(notebook, "player.ReplayPlayer")
    a, b = player["trajectory"], player["other"]
    assert a["task_id"] == b["task_id"] and a["passed"] and not b["passed"]
    assert f"{a['task_id']}: {a['agent']} (A) beside {b['agent']} (B)" in text
