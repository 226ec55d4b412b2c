"""The ``forge`` command as a user runs it: run, replay, grade, selftest, and one clear line for each mistake."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from forge_kernel.cli import main
from forge_kernel.engine import trial_seed
from forge_kernel.spec import load_package
from forge_kernel.spec.loading import read_yaml
from forge_kernel.spec.trajectory import TURN_TEXT
from forge_kernel.store import load_trials
from tests.chat_server import PLAN
from tests.helpers import WORKED_EXAMPLES as TASKS, copy_worked_examples, update_yaml

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "task_packages" / "superclue"
"""The three worked examples of SuperCLUE-MedAgent; the suite may hold more."""
FORGE = str(Path(sys.executable).with_name("forge"))


def patient_names() -> set[str]:
    """Every patient name in the worked examples' fixtures."""
    names = set()
    for fixture in (f for task in TASKS for f in (SUITE / task / "fixtures").glob("*.json")):
        for entry in json.loads(fixture.read_text(encoding="utf-8"))["entry"]:
            resource = entry["resource"]
            if resource["resourceType"] == "Patient":
                for name in resource.get("name", []):
                    names.update(filter(None, [name.get("text"), name.get("family"), "".join(name.get("given", []))]))
    return names


NAMES = patient_names()


def start(*argvs, cwd=ROOT) -> list[subprocess.Popen]:
    """Start several ``forge`` commands at once."""
    return [
        subprocess.Popen([FORGE, *argv], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for argv in argvs
    ]


def finish(procs: list[subprocess.Popen]) -> list[subprocess.CompletedProcess]:
    """Their results, in order."""
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        results.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return results


def forge(*argv, cwd=ROOT) -> subprocess.CompletedProcess:
    return finish(start(argv, cwd=cwd))[0]


def invoke(*argv, env=None) -> subprocess.CompletedProcess:
    """Run ``forge`` in this process (faster than a subprocess); an uncaught exception fails the test."""
    result = CliRunner(env=env).invoke(main, list(argv))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return subprocess.CompletedProcess(["forge", *argv], result.exit_code, result.stdout, result.stderr)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def no_patient_content(text: str) -> bool:
    return NAMES and not any(name in text for name in NAMES)


def test_fixtures_have_patient_names():
    assert len(NAMES) >= 6


# --- run, replay, grade ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli") / "run"
    suites = [arg for task in TASKS for arg in ("--suite", f"task_packages/superclue/{task}")]
    result = forge("run", *suites, "--agent", "scripted", "--trials", "3", "--out", str(out))
    return out, result


def test_run_stores_nine_trials(cli_run):
    out, result = cli_run
    assert result.returncode == 0, result.stderr
    assert "9 trial(s) run, 0 already stored" in result.stdout
    trials = load_trials(out)
    assert len(trials) == 9
    assert trials.groupby("task_id").size().to_dict() == {t: 3 for t in TASKS}
    assert trials.passed.all() and (trials.completion == 1).all()
    assert no_patient_content(result.stdout + result.stderr)


@pytest.fixture(scope="module")
def replays(cli_run):
    out, _ = cli_run
    argvs = [["replay", str(out), "--task", t, "--agent", "scripted", "--trial", "2"] for t in TASKS]
    first = start(argvs[0])  # one as a real process, the others in this one
    return dict(zip(TASKS, [*finish(first), *(invoke(*argv) for argv in argvs[1:])]))


@pytest.mark.parametrize("task", TASKS)
def test_replay_shows_steps_changes_and_verdicts(cli_run, replays, task):
    out, _ = cli_run
    result = replays[task]
    assert result.returncode == 0, result.stderr
    text = result.stdout
    trial = load_trials(out).query("task_id == @task and trial == 2").iloc[0]
    lines = text.splitlines()
    assert lines[0].startswith(
        f"{task} · agent scripted {trial.agent_version} (trusted, in process) · trial 2 "
        f"(seed {trial_seed(0, task, 'scripted', 2)})"
    )
    assert lines[1].startswith("PASSED · accuracy 1.00 · completion 1")
    steps = [line for line in lines if re.match(r"^\s*\d+\. \w+ ", line)]
    assert len(steps) == trial.n_calls
    assert steps[0].split()[:2] == ["1.", "patient_search"] and steps[-1].split()[1] == "finish"
    changes = [line.strip() for line in lines if line.strip().startswith("+ ")]
    wanted = {
        "SC-DDX-CHEST-PAIN": ["心电图", "心肌酶"],
        "SC-MED-GASTRIC-ULCER": ["奥美拉唑"],
        "SC-OPS-ADMISSION": ["血常规", "尿常规", "肝功能", "肾功能", "心电图", "胸片"],
    }[task]
    rtype = "MedicationRequest" if task == "SC-MED-GASTRIC-ULCER" else "ServiceRequest"
    for name in wanted:
        assert any(re.match(rf"\+ {rtype}/\S+  {name} \[active\]$", c) for c in changes), (name, changes)
    hidden = load_package(SUITE / task).hidden
    verdict_lines = lines[lines.index(f"verdicts (hidden half {hidden.version}):") + 1 :]
    assert len(verdict_lines) == len(hidden.verifiers)
    for use in hidden.verifiers:
        assert any(
            re.match(rf"^  PASS {use.severity}\s+{use.category}\s+{re.escape(use.id)}: ", v) for v in verdict_lines
        ), use.id
    answer_verdicts = [v for v in verdict_lines if re.match(r"^  \w+ \w+\s+answer ", v)]
    assert answer_verdicts and all(v.endswith(" @ answer") for v in answer_verdicts)  # the answer is what they judged


def test_replay_of_a_missing_trial_is_one_line(cli_run):
    out, _ = cli_run
    result = invoke("replay", str(out), "--task", "SC-OPS-ADMISSION", "--agent", "scripted", "--trial", "3")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"{out}: --task/--agent/--trial: no trial SC-OPS-ADMISSION / scripted / 3"]


def test_replay_shows_each_model_turn_between_the_calls_it_led_to(llm_run):
    lines = invoke("replay", str(llm_run), "--task", "SC-MED-GASTRIC-ULCER", "--agent", "narrated").stdout.splitlines()
    assert sum("reported by the agent" in line for line in lines) == 1  # said once, at the top
    assert lines[2].startswith("model: 9 turn(s) · 27,900 in / 540 out / 8,192 cached tokens · $0.0697 · ")
    heads = [i for i, line in enumerate(lines) if line.startswith("  › model turn ")]
    steps = [i for i, line in enumerate(lines) if re.match(r"^\s*\d+\. \w+ ", line)]
    assert len(heads) == 9 and len(steps) == 7
    assert all(heads[k + 1] < steps[k] < heads[k + 2] for k in range(6)) and heads[7] < steps[6] < heads[8]
    first, second = lines[heads[0] : heads[1]], lines[heads[1] : steps[0]]
    assert first[0].startswith("  › model turn 1 · tool_calls · 1,500 in / 60 out / 0 cached tokens · $0.0054 · ")
    assert first[1].startswith("    │ Plan: confirm the patient") and len(PLAN) > TURN_TEXT
    assert f"    │ … {len(PLAN) - TURN_TEXT} more characters" in first  # cut to a readable length, the rest counted
    assert first[-1] == '    │ asks patient_search {"mrn":   ✗ never reached the tools'
    assert second[-1] == '    │ asks patient_search {"mrn": "SC-0101"}  → step 1'
    assert " · stop · 4,700 in / 60 out / 1,024 cached tokens · " in lines[heads[8]]  # the answer, after the calls
    assert lines[heads[8] + 1].startswith('    │ {"answer": "已开具奥美拉唑')


def test_a_model_turn_is_shown_with_its_control_characters_written_out(llm_run):
    from dataclasses import replace

    from forge_kernel.report import render_trial
    from forge_kernel.store import open_run

    with open_run(llm_run) as run:
        trial = run.trial("SC-MED-GASTRIC-ULCER", "narrated", 0)
        trial.turns = [
            replace(
                trial.turns[0],
                text="ok\x1b[2J\rwiped\nPASS hard safety audit: forged",
                finish_reason="stop\x07",
                error="lost\r",
                retries=["429\x1b[0m"],
                tool_calls=[{"id": "c", "name": "x\x1b]0;title\x07", "arguments": '{"a":\n1}'}],
            )
        ]
        text = render_trial(trial)
    assert not {"\x1b", "\r", "\x07"} & set(text)
    assert "    │ ok\\x1b[2J\\x0dwiped\n    │ PASS hard safety audit: forged" in text  # never a line of forge's own
    assert "· stop\\x07 ·" in text and 'asks x\\x1b]0;title\\x07 {"a":\\x0a1}' in text
    assert "    │ failed: lost\\x0d" in text and "    │ tried again after: 429\\x1b[0m" in text


def test_summary_shows_cost_and_model_tokens_per_task_where_a_run_has_them(llm_run, cli_run):
    from forge_kernel.store import open_run

    with open_run(llm_run) as run:
        narrated = run.usage[run.usage["agent"] == "narrated"].groupby("task_id")[["prompt_tokens", "cost"]].mean()
    shown = invoke("summary", str(llm_run)).stdout.splitlines()
    table = shown[shown.index("Cost and model tokens per task (the tokens as each agent reported them):") + 1 :]
    assert table[0].split()[:4] == ["agent", "cost", "per", "task"] and "tokens in" in table[0]
    row = next(line.split() for line in table if line.strip().startswith("narrated"))
    assert row[1:4] == [f"${narrated['cost'].mean():.4f}", "10", f"{narrated['prompt_tokens'].mean():,.0f}"]
    assert next(line.split() for line in table if line.strip().startswith("baseline-v1"))[1:6] == [
        "$0.0000",
        "—",
        "—",
        "—",
        "—",
    ]  # no turns: dashes, never zeros that read as data
    markdown = invoke("summary", str(llm_run), "--markdown").stdout
    assert (
        "| agent | cost per task | model turns per task | tokens in | cached | tokens out | model time P50 |"
        in markdown
    )
    plain = invoke("summary", str(cli_run[0])).stdout  # the bundled agents: nothing spent, nothing shown
    assert "Cost" not in plain and "tokens" not in plain


def test_grade_gold_and_a_counterexample(tmp_path):
    package = load_package(SUITE / "SC-MED-GASTRIC-ULCER")
    gold, skipped = tmp_path / "gold.json", tmp_path / "skipped.json"
    gold.write_text(package.hidden.gold.model_dump_json(), encoding="utf-8")
    case = next(c for c in package.hidden.counterexamples if c.name == "safety-check-skipped")
    skipped.write_text(case.trajectory.model_dump_json(), encoding="utf-8")
    pkg = str(package.path)
    good = forge("grade", "--package", pkg, "--trajectory", str(gold), "--json", str(tmp_path / "g.json"))
    bad = invoke("grade", "--package", f"{pkg}/package.yaml", "--trajectory", str(skipped))

    assert good.returncode == 0, good.stderr
    assert "PASSED · accuracy 1.00 · completion 1 · safety gate passed" in good.stdout
    assert all(line.startswith("  PASS ") for line in good.stdout.splitlines()[2:])
    written = json.loads((tmp_path / "g.json").read_text(encoding="utf-8"))
    assert written["scores"] == {
        "passed": True,
        "accuracy": 1.0,
        "completion": 1,
        "safety_gate": "passed",
        "missing": [],
        "extra": [],
    }
    assert written["task_id"] == package.id and written["hidden_version"] == package.hidden.version
    assert {v["verifier_id"] for v in written["verdicts"]} == {u.id for u in package.hidden.verifiers}
    assert [e["tool"] for e in written["events"]] == [c.tool for c in package.hidden.gold.calls]

    assert bad.returncode == 0, bad.stderr
    assert "FAILED · accuracy 0.00 · completion 0 · safety gate failed" in bad.stdout
    failing = {line.split()[3].rstrip(":") for line in bad.stdout.splitlines() if line.startswith("  FAIL ")}
    assert failing == set(case.must_fail)


# --- selftest -------------------------------------------------------------------------------------------------


def test_selftest_passes_and_catches_a_weakened_verifier(tmp_path):
    copy_worked_examples(tmp_path)
    edit(
        tmp_path / "verifiers" / "superclue" / "SC-OPS-ADMISSION.yaml",
        "    label: request for 胸片\n",
        "    label: request for 胸片\n    min: 0\n",
    )
    weakened = start(["selftest", str(tmp_path / "task_packages")])
    good = invoke("selftest", *(str(SUITE / task) for task in TASKS))
    (weakened,) = finish(weakened)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "verifier coverage: 3/3 package(s)" in good.stdout
    assert not re.search(r"^FAIL", good.stdout, re.M)
    assert weakened.returncode == 1
    fails = [line.split()[1] for line in weakened.stdout.splitlines() if line.startswith("FAIL")]
    assert fails == ["SC-OPS-ADMISSION"]
    assert re.search(r"wrong-state.*order-6 passed", weakened.stdout)
    assert "verifier coverage: 2/3 package(s)" in weakened.stdout
    assert no_patient_content(good.stdout + weakened.stdout + weakened.stderr)


# --- a user's mistakes: exit 2, one line ``file: field: message`` ---------------------------------------------


def case_setups(root: Path) -> dict:
    """name -> (argv, file, field, message start); each case gets its own broken copy under root."""
    cases = {}

    def suite_copy(name):
        return copy_worked_examples(root / name)

    def run_argv(suite, name):
        return ["run", "--suite", str(suite), "--agent", "scripted", "--trials", "1", "--out", str(root / name / "run")]

    s = suite_copy("malformed-yaml")
    manifest = s / "SC-DDX-CHEST-PAIN" / "package.yaml"
    edit(manifest, "    zh: 患者", '    zh: "患者')  # an unclosed quote on the line with the patient's name
    cases["malformed-yaml"] = (run_argv(s, "malformed-yaml"), manifest, re.compile(r"line \d+"), "")

    s = suite_copy("unknown-field")
    manifest = s / "SC-MED-GASTRIC-ULCER" / "package.yaml"
    edit(manifest, "risk: high\n", "risk: high\ncolour: red\n")
    cases["unknown-field"] = (run_argv(s, "unknown-field"), manifest, "colour", "unknown field")

    s = suite_copy("wrong-type")
    manifest = s / "SC-MED-GASTRIC-ULCER" / "package.yaml"
    update_yaml(manifest, environment={"patient_id": [sorted(NAMES)[0]]})
    cases["wrong-type"] = (run_argv(s, "wrong-type"), manifest, "environment.patient_id", "Input should be")

    s = suite_copy("missing-fixture")
    (s / "SC-OPS-ADMISSION" / "fixtures" / "ehr.json").unlink()
    cases["missing-fixture"] = (
        run_argv(s, "missing-fixture"),
        s / "SC-OPS-ADMISSION" / "package.yaml",
        "environment.fixtures.0",
        "file not found: fixtures/ehr.json",
    )

    s = suite_copy("missing-hidden-half")
    (root / "missing-hidden-half" / "verifiers" / "superclue" / "SC-OPS-ADMISSION.yaml").unlink()
    cases["missing-hidden-half"] = (
        run_argv(s, "missing-hidden-half"),
        s / "SC-OPS-ADMISSION" / "package.yaml",
        "id",
        "no hidden half found",
    )

    cases["missing-suite"] = (
        run_argv(root / "nowhere", "missing-suite"),
        root / "nowhere",
        "(path)",
        "no such package or folder",
    )

    cases["unknown-agent"] = (
        [
            "run",
            "--suite",
            str(SUITE / TASKS[0]),
            "--agent",
            "scripted,nobody",
            "--trials",
            "1",
            "--out",
            str(root / "unknown-agent" / "run"),
        ],
        "--agent",
        "nobody",
        "unknown agent",
    )

    unset = ["--agent-env", "FORGE_NO_SUCH_VARIABLE"]
    cases["unset-agent-env"] = (
        [*run_argv(SUITE / TASKS[0], "unset-agent-env"), *unset],
        *unset,
        "no such variable in this environment",
    )

    s = suite_copy("unknown-tool")
    manifest = s / "SC-OPS-ADMISSION" / "package.yaml"
    update_yaml(manifest, tools=["teleport", *read_yaml(SUITE / "suite.yaml")["tools"]])
    cases["unknown-tool-run"] = (run_argv(s, "unknown-tool"), manifest, "tools.0", "unknown tool 'teleport'")
    cases["unknown-tool-validate"] = (
        ["validate", str(s / "SC-OPS-ADMISSION")],
        manifest,
        "tools.0",
        "unknown tool 'teleport'",
    )

    s = suite_copy("bad-param")
    hidden = root / "bad-param" / "verifiers" / "superclue" / "SC-OPS-ADMISSION.yaml"
    chain = {"id": "chain", "kind": "trace.tool_chain", "category": "trace", "params": {"exact": "maybe"}}
    update_yaml(hidden, verifiers=[*read_yaml(hidden)["verifiers"], chain])
    cases["bad-verifier-param"] = (
        ["validate", str(s / "SC-OPS-ADMISSION")],
        hidden,
        "verifiers.chain.params.exact",
        "Input should be a valid boolean",
    )

    s = suite_copy("bad-fixture")
    fixture = s / "SC-DDX-CHEST-PAIN" / "fixtures" / "ehr.json"
    bundle = json.loads(fixture.read_text(encoding="utf-8"))
    patient = next(e["resource"] for e in bundle["entry"] if e["resource"]["resourceType"] == "Patient")
    patient["birthDate"] = patient["name"][0]["text"]  # a name where a date belongs
    fixture.write_text(json.dumps(bundle, ensure_ascii=False), encoding="utf-8")
    index = bundle["entry"].index({"resource": patient})
    cases["invalid-fhir"] = (
        ["validate", str(s / "SC-DDX-CHEST-PAIN")],
        fixture,
        f"entry.{index}.resource.birthDate",
        "",
    )

    s = suite_copy("deep-fixture")
    fixture = s / "SC-DDX-CHEST-PAIN" / "fixtures" / "ehr.json"
    bundle = json.loads(fixture.read_text(encoding="utf-8"))
    bundle["entry"][0]["resource"]["extension"] = json.loads("[" * 500 + "]" * 500)
    fixture.write_text(json.dumps(bundle, ensure_ascii=False), encoding="utf-8")
    cases["deep-fixture"] = (["validate", str(s / "SC-DDX-CHEST-PAIN")], fixture, "(file)", "nested deeper than 100")

    trajectories = root / "trajectories"
    trajectories.mkdir()
    (trajectories / "broken.json").write_text('{"calls": [', encoding="utf-8")
    (trajectories / "extra.json").write_text('{"calls": [], "answr": "x"}', encoding="utf-8")
    deep = "[" * 100_000 + "]" * 100_000
    (trajectories / "deep.json").write_text(f'{{"calls": [{{"tool": "finish", "args": {{"a": {deep}}}}}]}}')
    med = str(SUITE / "SC-MED-GASTRIC-ULCER")
    for name, field, message in (
        ("missing", "(file)", "file not found"),
        ("broken", "line 1", ""),
        ("extra", "answr", "unknown field"),
        ("deep", "(file)", "nested deeper than 100"),
    ):
        path = trajectories / f"{name}.json"
        cases[f"trajectory-{name}"] = (["grade", "--package", med, "--trajectory", str(path)], path, field, message)

    (root / "empty").mkdir()
    cases["replay-no-run"] = (
        ["replay", str(root / "empty"), "--task", "X", "--agent", "scripted"],
        root / "empty",
        "(run)",
        "no run store",
    )
    return cases


AS_SUBPROCESS = ["malformed-yaml", "unknown-field", "missing-fixture", "unknown-agent", "unknown-tool-run"]
IN_PROCESS = [
    "wrong-type",
    "missing-hidden-half",
    "missing-suite",
    "unset-agent-env",
    "unknown-tool-validate",
    "bad-verifier-param",
    "invalid-fhir",
    "deep-fixture",
    "trajectory-missing",
    "trajectory-broken",
    "trajectory-extra",
    "trajectory-deep",
    "replay-no-run",
]
CASE_NAMES = AS_SUBPROCESS + IN_PROCESS


@pytest.fixture(scope="module")
def mistakes(tmp_path_factory):
    """The five mistakes the issue names run as real processes (tracebacks would show); the rest in-process."""
    root = tmp_path_factory.mktemp("mistakes")
    cases = case_setups(root)
    assert sorted(cases) == sorted(CASE_NAMES)
    procs = start(*(cases[name][0] for name in AS_SUBPROCESS))
    cache = {"XDG_CACHE_HOME": str(root / "cache")}
    results = {name: invoke(*cases[name][0], env=cache) for name in IN_PROCESS}
    results.update(zip(AS_SUBPROCESS, finish(procs)))
    return {name: (cases[name], result) for name, result in results.items()}


@pytest.mark.parametrize("name", CASE_NAMES)
def test_a_mistake_is_one_line_and_exit_2(mistakes, name):
    (argv, file, field, message), result = mistakes[name]
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr + result.stdout
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    got_file, got_field, got_message = lines[0].split(": ", 2)
    assert got_file == str(file)
    assert field.fullmatch(got_field) if isinstance(field, re.Pattern) else got_field == field
    assert got_message.startswith(message) and got_message.strip()
    assert no_patient_content(result.stdout + result.stderr)
    if argv[0] == "run":
        assert not Path(argv[argv.index("--out") + 1], "run.sqlite").exists()


@pytest.mark.parametrize(
    "argv, line",
    [
        (
            ["run", "--suite", "x", "--agent", "scripted", "--out", "o", "--trials", "0"],
            "forge run: --trials: 0 is not in the range x>=1",
        ),
        (
            ["run", "--suite", "x", "--agent", "scripted", "--out", "o", "--concurrency", "0"],
            "forge run: --concurrency: 0 is not in the range x>=1",
        ),
        (
            ["run", "--suite", "x", "--agent", "scripted", "--out", "o", "--agent-memory", "10"],
            "forge run: --agent-memory: 10 is not in the range x>=64",
        ),
        (
            ["run", "--suite", "x", "--agent", "scripted", "--out", "o", "--agent-processes", "2"],
            "forge run: --agent-processes: 2 is not in the range x>=16",
        ),
        (["run", "--agent", "scripted", "--out", "o"], "forge run: --suite: missing"),
        (["replay"], "forge replay: RUN_DIR: missing"),
        (["summary", "run", "--bx", "dimension"], "forge summary: --bx: No such option '--bx' (did you mean --by?)"),
        (
            ["replay", "run", "--task", "X", "--agent", "Y", "--trial", "two"],
            "forge replay: --trial: 'two' is not a valid integer",
        ),
        (["sumary", "run"], "forge: sumary: No such command 'sumary' (did you mean summary?)"),
    ],
)
def test_a_usage_mistake_is_one_line_and_exit_2(argv, line):
    result = invoke(*argv)
    assert (result.returncode, result.stderr.splitlines(), result.stdout) == (2, [line], "")


def test_help_still_shows_the_usage():
    assert invoke("--help").stdout.startswith("Usage: forge [OPTIONS] COMMAND")
    result = invoke("run", "--help")
    assert result.returncode == 0 and result.stdout.startswith("Usage: forge run [OPTIONS]")


@pytest.mark.parametrize(
    "argv",
    [
        ["compare", "RUN", "RUN", "--json"],
        ["compare", "RUN", "RUN", "--markdown"],
        ["ablation", "RUN", "--candidate", "a", "--ablation", "b", "--markdown"],
        ["ledger", "RUN", "--csv"],
        ["ledger", "RUN", "--parquet"],
        ["grade", "--package", "RUN", "--trajectory", "RUN", "--json"],
    ],
)
def test_an_output_file_in_a_missing_folder_is_refused_before_any_work(tmp_path, argv):
    """RUN names nothing: had the command started its work, it would complain about that instead."""
    out = tmp_path / "missing" / "out"
    result = invoke(*[str(tmp_path / "nothing") if a == "RUN" else a for a in argv], str(out))
    assert (result.returncode, result.stderr.splitlines()) == (
        2,
        [f"forge {argv[0]}: {argv[-1]}: folder {out.parent} does not exist"],
    )
