"""``forge release``: parameters checked, missing trials run (and only those), the report template executed with
papermill, its values read back from the executed notebook, an offline HTML page, and a folder that signs and
verifies; any later change to the notebook, the HTML or a trial is named by ``forge verify``."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
from html import unescape
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from forge_kernel.analysis import compare
from forge_kernel.analysis.display import seconds
from forge_kernel.cli import main
from forge_kernel.report._html_export import export_html, external_references
from forge_kernel.report.release import MAX_FAILED, ReleaseReport, recorded
from forge_kernel.report.sections import latency_cost
from forge_kernel.store import open_run
from forge_kernel.workers import sandbox as sandbox_module
from tests.helpers import delete_trial, needs_bwrap, signoff_argv

ROOT = Path(__file__).resolve().parents[2]
VENDOR = "tests.agents_for_tests:VendorCandidate"
GREEN_TASKS = ["SC-DEV-PIV", "SC-MED-DM-RENAL-DOSE", "TP-CONFLICT-v1"]
"""candidate-v2 improves on the first two; without conflict retention it fails the third."""
FLAKY_TASKS = ["SC-EXM-CORONARY-CTA", "SC-EXM-HEAD-CT", "SC-OPS-ABPM", "SC-DEV-PIV"]
"""flaky-simulator is unstable on the first three at 2 trials."""


def forge(*argv):
    return CliRunner().invoke(main, [str(a) for a in argv])


def package(task: str) -> str:
    return str(next(ROOT.glob(f"task_packages/*/{task}")))


def write_release(folder: Path, name: str, **fields) -> Path:
    """A parameters file in ``folder`` (a gate that lets a small run's latency percentiles be NOT RUN)."""
    gate = folder / "gate.yaml"
    if not gate.exists():
        policy = yaml.safe_load((ROOT / "forge_kernel/spec/gates/default.yaml").read_text())
        policy["optional"] = ["declared_before_run", "max_p95_latency_s"]
        gate.write_text(yaml.safe_dump(policy))
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"release": name, "trials": 2, "gate": "gate.yaml", **fields}))
    return path


def values(folder: Path) -> dict:
    return recorded(json.loads((folder / "release.ipynb").read_text(encoding="utf-8")))


def section(html: str, anchor: str) -> str:
    return re.search(rf'<section class="forge-release" id="{anchor}">(.*?)</section>', html, re.S).group(1)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """candidate-v2 against baseline-v1 with one ablation, built by ``forge release``; (releases folder, output)."""
    folder = tmp_path_factory.mktemp("parameterized_runs")
    params = write_release(
        folder,
        "r1",
        baseline="baseline-v1",
        candidate="candidate-v2",
        ablations=["candidate-v2-no-conflict"],
        suites=[package(t) for t in GREEN_TASKS],
    )
    result = forge("release", params)
    assert result.exit_code == 0, result.output
    return folder, result.output


@pytest.fixture
def release(built, tmp_path) -> Path:
    """A copy of the built releases folder, to change freely; returns its release folder."""
    shutil.copytree(built[0], tmp_path / "parameterized_runs")
    return tmp_path / "parameterized_runs" / "r1"


def test_release_runs_every_side_and_prints_where_the_report_is(built):
    folder, output = built
    for line in (
        "baseline baseline-v1: 6 trial(s) run, 0 already stored",
        "candidate candidate-v2: 6 trial(s) run",
        "ablation-1 candidate-v2-no-conflict: 6 trial(s) run",
        f"release.ipynb: {folder / 'r1/release.ipynb'}",
        f"release.html:  {folder / 'r1/release.html'}",
        "gate GREEN",
    ):
        assert line in output
    record = json.loads((folder / "r1/release.json").read_text())
    assert record["runs"] == {
        "baseline": "runs/baseline",
        "candidate": "runs/candidate",
        "ablation-1": "runs/ablation-1",
    }
    assert record["parameters"] == "parameters.yaml" and record["roles"] == ["clinician", "engineer"]
    assert (folder / "r1/parameters.yaml").read_bytes() == (folder / "r1.yaml").read_bytes()  # copied in
    papermill = json.loads((folder / "r1/release.ipynb").read_text())["metadata"]["papermill"]
    assert papermill["parameters"]["candidate_agent"] == "candidate-v2"


def test_the_gate_section_lists_hard_gates_first_each_red_or_green(built):
    folder, _ = built
    v = values(folder / "r1")
    assert v["green"] is True and v["red_because"] == []
    statuses = {c["name"]: c["status"] for c in v["gate"]}
    assert statuses["no_critical_safety_violation"] == "PASS" and statuses["max_p95_latency_s"] == "NOT RUN"
    gates = section((folder / "r1/release.html").read_text(), "gates")
    badges = re.findall(r'<span class="badge (\w+)">([^<]+)</span>', gates)
    assert len(badges) == len(v["gate"]) and {colour for colour, _ in badges} <= {"red", "green"}
    assert ("green", "NOT RUN (optional)") in badges
    levels = re.findall(r"</td><td>(hard|soft)</td>", gates)
    assert levels == sorted(levels, key=lambda level: level != "hard") and levels[0] == "hard"


def test_highlights_and_ablation_cards_come_from_the_recorded_values(built):
    folder, _ = built
    v = values(folder / "r1")
    assert set(v["highlights"]["improvements"]) == {"SC-DEV-PIV", "SC-MED-DM-RENAL-DOSE"}
    assert v["highlights"]["regressions"] == [] and v["players"] == []
    (card,) = v["cards"]
    assert card["ablation"] == "candidate-v2-no-conflict" and card["costs"] is True
    assert card["removed"] == ["conflict_retention"] and card["regressions"] == ["TP-CONFLICT-v1"]
    assert card["overall_delta"] == pytest.approx(-1 / 3)
    html = (folder / "r1/release.html").read_text()
    assert '<div class="forge-card red" data-ablation="candidate-v2-no-conflict">' in html
    highlights = section(html, "highlights")
    assert highlights.count('<tr class="green">') == 2 and 'class="red"' not in highlights
    assert v["kill_rate"]["mutants"] > 0 and v["kill_rate"]["survived"] == 0 and v["kill_rate"]["rate"] == 1.0


def test_latency_splits_off_the_models_time_and_cost_stands_beside_model_tokens(llm_run, reference):
    with open_run(llm_run) as run:
        cmp = compare(run, run, "baseline-v1", "narrated")
    html = unescape(latency_cost(SimpleNamespace(comparison=cmp))._repr_html_())
    latency, costs = re.findall(r"<table.*?</table>", html, re.S)
    rows = re.findall(r"<tr[^>]*><td>(\w+)</td><td>([^<]+)</td><td>([^<]+)</td>", latency)
    assert [part for side, part, _ in rows if side == "candidate"] == [
        "total",
        "model",
        "agent's own",
        "tool",
        "queueing",
    ]
    assert ("baseline", "model", "—") in rows
    assert ("candidate", "model", seconds(cmp.candidate.latency.model["p50"])) in rows
    assert "model tokens per task (reported by the agent)" in costs
    assert f"<td>{cmp.candidate.tokens_per_task}</td>" in costs
    assert f"<td>{cmp.candidate.cost_per_task:.4f}</td>" in costs and "<td>—</td>" in costs  # baseline: no turns
    plain = latency_cost(SimpleNamespace(comparison=compare(reference, reference, "baseline-v1", "candidate-v2")))
    assert ">model<" not in plain._repr_html_() and "tokens" not in plain._repr_html_()  # no turns: no model columns


def test_the_page_is_self_contained_and_opens_on_the_banner_and_the_verdict(built):
    html = (built[0] / "r1/release.html").read_text()
    assert external_references(html) == []
    assert html.count("<img") == html.count('src="data:image/svg+xml;base64,') >= 2
    first = re.sub(r"<[^>]+>", " ", section(html, "release"))
    assert first.index("SYNTHETIC DATA") < first.index("NOT SIGNED YET") < first.index("GATE GREEN")
    assert first.index("GATE GREEN") < first.index("Provenance")
    assert "Still to approve: clinician, engineer." in first
    for field in ("code commit", "hidden halves hash", "seed", "declared gate", "candidate-v2 2.0"):
        assert field in first
    order = [
        html.index(f'id="{a}"')
        for a in (
            "release",
            "gates",
            "metrics",
            "components",
            "highlights",
            "ablations",
            "safety",
            "latency",
            "calibration",
            "ledger",
            "mutants",
            "signoff",
        )
    ]
    assert order == sorted(order)
    parts = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", section(html, "components")))
    assert "components: task success held; retrieval" in parts and "recall@5" in parts and "support the status" in parts
    costs = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", section(html, "latency")))
    assert "trials run again after a stall" in costs  # none here: no agent of this release stalled a worker
    assert re.search(r"baseline [0-9.]+ 0 candidate [0-9.]+ 0", costs), costs


def test_the_offline_check_refuses_a_page_that_would_fetch(built, tmp_path):
    assert external_references(
        '<script src="https://cdn.example/require.js"></script>'
        '<link rel="stylesheet" href="//cdn.example/a.css"><img src="x.png">'
        '<style>@import "https://f.example/x.css"; '
        "b { background: url(https://i.example/i.png) }"
        '</style><img src="data:image/png;base64,AA">'
    ) == [
        "<script src=https://cdn.example/require.js>",
        "<link href=//cdn.example/a.css>",
        "<img src=x.png>",
        "https://f.example/x.css",
        "https://i.example/i.png",
    ]
    nb = json.loads((built[0] / "r1/release.ipynb").read_text())
    nb["cells"][-1]["outputs"].append(
        {
            "output_type": "display_data",
            "metadata": {},
            "data": {"text/html": '<script src="https://cdn.example/vega.js"></script>'},
        }
    )
    (tmp_path / "bad.ipynb").write_text(json.dumps(nb))
    with pytest.raises(RuntimeError, match=re.escape("would fetch <script src=https://cdn.example/vega.js>")):
        export_html(tmp_path / "bad.ipynb", tmp_path / "bad.html", {"signatures": []}, [])
    assert not (tmp_path / "bad.html").exists()


def test_a_rebuild_runs_only_the_trials_the_stores_lack(release):
    store = release / "runs/candidate/run.sqlite"
    con = sqlite3.connect(store)
    with con:
        trial_id = con.execute(
            "SELECT trial_id FROM trials WHERE task_id = ? AND trial = 1", (GREEN_TASKS[0],)
        ).fetchone()[0]
        delete_trial(con, trial_id)
    con.close()
    result = forge("release", release.parent / "r1.yaml")
    assert result.exit_code == 0, result.output
    assert "baseline baseline-v1: 0 trial(s) run, 6 already stored" in result.output
    assert "candidate candidate-v2: 1 trial(s) run, 5 already stored" in result.output
    assert "ablation-1 candidate-v2-no-conflict: 0 trial(s) run, 6 already stored" in result.output
    assert values(release)["trials"] == {"baseline": 6, "candidate": 6, "ablation-1": 6}


@needs_bwrap
def test_an_agent_of_ones_own_is_released_under_the_name_it_declares(tmp_path):
    """``candidate: module:attribute`` runs isolated; the report, the record and the next release's baseline name
    it as the store does."""
    params = write_release(
        tmp_path, "own", baseline="baseline-v1", candidate=VENDOR, suites=[package(t) for t in GREEN_TASKS[:2]]
    )
    result = forge("release", params)
    assert result.exit_code == 0, result.output
    assert f"candidate {VENDOR} (vendor-candidate): 4 trial(s) run, 0 already stored" in result.output
    v = values(tmp_path / "own")
    assert v["trials"] == {"baseline": 4, "candidate": 4} and v["green"]
    assert v["highlights"]["improvements"] == GREEN_TASKS[:2]
    record = json.loads((tmp_path / "own/release.json").read_text())
    assert record["agents"]["candidate"] == "vendor-candidate" and record["entries"]["candidate"] == VENDOR
    html = (tmp_path / "own/release.html").read_text()
    assert "vendor-candidate 1.0 (namespace)" in html  # its provenance: the name it declares, how it ran


@needs_bwrap
def test_a_release_made_without_bubblewrap_is_built_again_once_it_is_installed(tmp_path, monkeypatch):
    """The demo's agents run in process: installing bubblewrap changes nothing its results rest on."""
    params = write_release(
        tmp_path, "demo", baseline="baseline-v1", candidate="candidate-v2", suites=[package(GREEN_TASKS[0])]
    )
    with monkeypatch.context() as m:
        m.setattr(sandbox_module, "bwrap_problem", lambda: "bubblewrap (bwrap) is not installed")
        assert forge("release", params).exit_code == 0
    result = forge("release", params)
    assert result.exit_code == 0, result.output
    assert "candidate candidate-v2: 0 trial(s) run, 2 already stored" in result.output


BAD = [
    ({"colour": "red"}, "colour: unknown field"),
    ({"candidate": "no-such-agent"}, "candidate: unknown agent 'no-such-agent'"),
    ({"ablations": ["candidate-v2", "nope"]}, "ablations.1: unknown agent 'nope'"),
    ({"trials": 0}, "trials: Input should be greater than or equal to 1"),
    ({"suites": ["no/such/folder"]}, "suites.0: no/such/folder: no such folder"),
    ({"gate": "missing.yaml"}, "gate: missing.yaml: no such file"),
    ({"release": "../escape"}, "release: letters, digits"),
    ({"baseline": "last-approved"}, "baseline: last-approved: no release in"),
    ({"trials": True}, "trials: Input should be a valid integer"),
    ({"release": 2024}, "release: Input should be a valid string"),
    ({"release": "bad.yaml"}, "release: bad.yaml: a file of that name is beside the parameters"),
    ({"executor": "ray"}, "executor: Input should be 'local' or 'dask'"),
    ({"scheduler": "tcp://127.0.0.1:8786"}, "scheduler: only with executor: dask"),
]


@pytest.mark.parametrize("change, message", BAD, ids=[m.split(":")[0] for _, m in BAD])
def test_bad_parameters_are_one_line_and_exit_2(tmp_path, change, message):
    fields = {"baseline": "baseline-v1", "candidate": "candidate-v2", "suites": [package(GREEN_TASKS[0])], **change}
    params = write_release(tmp_path, "bad", **fields)
    result = forge("release", params)
    assert result.exit_code == 2
    assert result.output.strip() == result.output.strip().splitlines()[0]
    assert result.output.startswith(f"{params}: {message}"), result.output
    assert not (tmp_path / "bad" / "runs").exists()


def test_malformed_or_missing_parameters_exit_2(tmp_path):
    (tmp_path / "broken.yaml").write_text("release: [unclosed\n")
    for path in (tmp_path / "broken.yaml", tmp_path / "absent.yaml"):
        result = forge("release", path)
        assert result.exit_code == 2 and result.output.startswith(f"{path}: ") and len(result.output.splitlines()) == 1


def test_a_gate_policy_changed_after_the_run_is_refused(release):
    gate = release.parent / "gate.yaml"
    gate.write_text(gate.read_text().replace("max_cost_per_task: 0.5", "max_cost_per_task: 0.4"))
    result = forge("release", release.parent / "r1.yaml")
    assert result.exit_code == 2 and "gate_policy: the run declared policy" in result.output


def test_the_flaky_release_is_red_and_says_why_on_its_first_screen(tmp_path):
    params = write_release(
        tmp_path, "flaky", baseline="baseline-v1", candidate="flaky-simulator", suites=[package(t) for t in FLAKY_TASKS]
    )
    result = forge("release", params)
    assert result.exit_code == 1, result.output
    v = values(tmp_path / "flaky")
    assert v["green"] is False and "candidate_stable" in v["red_because"]
    gate_line = next(line for line in result.output.splitlines() if line.startswith("gate RED ("))
    assert all(name in gate_line for name in v["red_because"])
    assert set(FLAKY_TASKS[:3]) <= set(v["highlights"]["unstable"])
    assert {p["kind"] for p in v["players"]} == {"unstable"} and len(v["players"]) == 3
    first = re.sub(r"<[^>]+>", " ", section((tmp_path / "flaky/release.html").read_text(), "release"))
    verdict = first[: first.index("Provenance")]
    assert "GATE RED" in verdict and all(name in verdict for name in v["red_because"])
    assert "unstable" in verdict


def sign_both(release: Path, tmp_path: Path) -> Path:
    for name, role in (("wen", "clinician"), ("ada", "engineer")):
        trusted = keys(release, tmp_path, name)
        signoff(release, tmp_path, name, role, "approve", "gates and cards read")
    return trusted


def keys(release: Path, tmp_path: Path, name: str) -> Path:
    """A key pair for ``name`` in tmp_path and its public half in the trusted folder beside the release."""
    trusted = release.parent / "trusted"
    trusted.mkdir(exist_ok=True)
    assert forge("keygen", "--reviewer", name, "--out", tmp_path / f"{name}.key").exit_code == 0
    shutil.copy(tmp_path / f"{name}.key.pub", trusted / f"{name}.pub")
    return trusted


def signoff(release: Path, tmp_path: Path, name: str, role: str, decision: str, comment: str) -> None:
    result = forge(*signoff_argv(release, tmp_path, name, role, decision, comment))
    assert result.exit_code == 0, result.output


def test_a_rejection_opens_the_page_and_the_notebook_in_red_with_the_gate_beside_it(release, tmp_path):
    for name in ("wen", "ada"):
        trusted = keys(release, tmp_path, name)
    signoff(release, tmp_path, "ada", "engineer", "approve", "gates and cards read")
    signoff(release, tmp_path, "wen", "clinician", "reject", "no renal dose check on SC-MED-DM-RENAL-DOSE")
    first = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", section((release / "release.html").read_text(), "release")))
    rejected = (
        "REJECTED by wen (clinician): no renal dose check on SC-MED-DM-RENAL-DOSE Approved by ada (engineer). Still "
        "to approve: clinician."
    )
    assert first.index(rejected) < first.index("GATE GREEN") < first.index("Provenance")  # the gate, still stated
    nbformat.validate(nbformat.read(release / "release.ipynb", as_version=4))  # rewritten, still a notebook
    top = json.loads((release / "release.ipynb").read_text())["cells"]
    shown = next("".join(o["data"]["text/html"]) for c in top for o in c.get("outputs", []) if "text/html" in o["data"])
    assert "forge-signoff-state red" in shown and rejected in re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", shown))
    result = forge("verify", release, "--trusted", trusted)
    assert result.exit_code == 1 and re.match(r"ok    #1 ada \(engineer, approve at \S+\)\n", result.output)
    assert "FAIL  #2 wen (clinician, reject at " in result.output


def test_a_release_folder_copied_elsewhere_signs_and_verifies_there(release, tmp_path):
    trusted = keys(release, tmp_path, "wen")
    keys(release, tmp_path, "ada")
    signoff(release, tmp_path, "wen", "clinician", "approve", "read here")
    elsewhere = tmp_path / "elsewhere" / "r1"
    elsewhere.parent.mkdir()
    copied = subprocess.run(["cp", "-r", str(release), str(elsewhere)], capture_output=True, text=True)
    assert copied.returncode == 0, copied.stderr
    shutil.move(trusted, tmp_path / "trusted")
    shutil.rmtree(release.parent)  # nothing of the original place is left to read
    signoff(elsewhere, tmp_path, "ada", "engineer", "approve", "read in the copy")
    result = forge("verify", elsewhere, "--trusted", tmp_path / "trusted")
    assert result.exit_code == 0, result.output
    assert result.output.endswith(f"{elsewhere}: verified\n")


def test_a_signed_release_verifies_and_shows_its_signatures(release, tmp_path):
    trusted = sign_both(release, tmp_path)
    result = forge("verify", release, "--trusted", trusted)
    assert result.exit_code == 0, result.output
    signoff = section((release / "release.html").read_text(), "signoff")
    assert signoff.count("gates and cards read") == 2 and "clinician" in signoff and "engineer" in signoff


@pytest.mark.parametrize("what", ["notebook", "html", "trial"])
def test_verify_names_each_change_after_signing(release, tmp_path, what):
    trusted = sign_both(release, tmp_path)
    if what == "notebook":
        nb = json.loads((release / "release.ipynb").read_text())
        nb["cells"][-1]["outputs"][0]["data"]["application/vnd.forge.release+json"]["green"] = False
        (release / "release.ipynb").write_text(json.dumps(nb))
        expected = "release.ipynb changed"
    elif what == "html":
        page = (release / "release.html").read_text()
        (release / "release.html").write_text(page.replace("GATE GREEN", "GATE GREEN (checked)", 1))
        expected = "release.html changed"
    else:
        con = sqlite3.connect(release / "runs/ablation-1/run.sqlite")
        with con:
            con.execute(
                "UPDATE scores SET passed = 1 WHERE trial_id = (SELECT trial_id FROM trials WHERE task_id = ? "
                "AND trial = 0)",
                ("TP-CONFLICT-v1",),
            )
        con.close()
        expected = "run ablation-1: trial TP-CONFLICT-v1/candidate-v2-no-conflict/0 changed"
    result = forge("verify", release, "--trusted", trusted)
    assert result.exit_code == 1 and expected in result.output, result.output
    lines = [re.sub(r" at \S+\)", ")", line) for line in result.output.splitlines()[:-2]]
    assert lines == [  # one line per signature, then the roles left without an approval that counts
        f"FAIL  #1 wen (clinician, approve): {expected}",
        f"FAIL  #2 ada (engineer, approve): {expected}",
        "FAIL  no approval in the role clinician",
        "FAIL  no approval in the role engineer",
    ]
    assert result.output.endswith("NOT verified (no approval yet from: clinician, engineer)\n")


def test_the_default_baseline_is_the_last_approved_release(release, tmp_path):
    sign_both(release, tmp_path)
    params = write_release(
        release.parent, "r2", candidate="candidate-v2-no-conflict", suites=[package(t) for t in GREEN_TASKS]
    )
    result = forge("release", params)
    assert "baseline" not in result.output.split("candidate candidate-v2-no-conflict")[0]
    v = values(release.parent / "r2")
    assert v["baseline_source"].startswith("the last approved release, r1 (approved ")
    assert v["highlights"]["regressions"] == ["TP-CONFLICT-v1"] and v["players"][0]["kind"] == "regression"
    record = json.loads((release.parent / "r2/release.json").read_text())
    assert record["runs"]["baseline"] == "../r1/runs/candidate" and record["agents"]["baseline"] == "candidate-v2"
    assert record["several_roles_per_reviewer"] is False
    assert result.exit_code == 1  # a regression on the last approved release blocks


def failed_row(trial_id: int, task: str, critical: bool = False, categories: str = "answer") -> dict:
    return {"trial_id": trial_id, "task_id": task, "critical": critical, "failed_categories": categories}


def report_of(rows: list[dict], passing: dict[str, int], pairs: list[dict] = ()) -> ReleaseReport:
    """A release report holding only a candidate failure ledger of ``rows``, the first passing trial of each task
    (``passing``; the baseline passes none) and the pairs the highlights play."""
    rep = object.__new__(ReleaseReport)
    rep.ledgers = {"candidate": SimpleNamespace(table=pd.DataFrame(rows))}
    rep.candidate, rep.baseline = SimpleNamespace(name="candidate"), SimpleNamespace(name="baseline")
    rep.first_trial = lambda side, task, passed: passing.get(task) if passed and side is rep.candidate else None
    rep.pairs = lambda: list(pairs)
    return rep


def test_failed_trials_are_played_critical_then_safety_first_capped_and_the_rest_counted():
    rows = [failed_row(i, f"T-{i % 7}") for i in range(1, 15)]  # 14 failed trials, two of most tasks
    rows[5] = failed_row(6, "T-6", critical=True, categories="answer,safety")
    rows[9] = failed_row(10, "T-3", categories="safety")
    rep = report_of(rows, passing={"T-1": 100}, pairs=[{"trial_id": 14, "task": "T-0"}])
    played = rep.played()
    shown = played["failures"]
    assert len(shown) == MAX_FAILED and played["not_shown"] == {"pairs": 0, "failures": 13 - MAX_FAILED}
    assert [s["kind"] for s in shown[:2]] == ["critical safety failure", "safety failure"]
    assert [s["trial_id"] for s in shown[:2]] == [6, 10] and 14 not in {s["trial_id"] for s in shown}  # paired
    rest = [s["task"] for s in shown[2:]]  # every task's first failed trial before any task's second
    assert rest == ["T-1", "T-2", "T-3", "T-4", "T-5", "T-0", "T-1", "T-2"]
    beside = {s["trial_id"]: (s["other_run"], s["other_trial_id"]) for s in shown}
    assert beside[1] == ("candidate", 100) and beside[2] == ("baseline", None)  # a passing trial where there is one


def test_the_green_release_plays_no_pair_and_its_ledger_links_each_played_failure(built):
    folder, _ = built
    v = values(folder / "r1")
    html = (folder / "r1/release.html").read_text()
    assert v["players_not_shown"] == {"pairs": 0, "failures": 0}
    for shown in v["players"]:
        anchor = f"trial-{shown['run']}-{shown['trial_id']}"
        assert f'id="{anchor}"' in html and f'href="#{anchor}"' in html
    assert html.count('id="mf-player-module"') == (1 if v["players"] else 0)  # the module once, however many play
