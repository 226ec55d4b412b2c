"""``forge select``: what a change needs, read from the mapping ``parameterized_runs/impact.yaml``; run in git
repositories made for the test. The packages it names are synthetic."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from forge_kernel.engine import read_impact, select_for_change
from forge_kernel.engine.impact import pattern_regex

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "parameterized_runs" / "impact.yaml"
SUITES = ("superclue", "forge-nsclc", "medagentbench-style", "forge-extraction")


def forge(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    """``forge ARGV`` as a user runs it in ``cwd``, the code of this repository."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "forge_kernel.cli", *argv]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=test", "-c", "user.email=test@example.invalid", "commit", "-qm", message)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def repo(tmp_path) -> Path:
    """A git repository holding the bundled mapping and a hidden half per suite (synthetic), committed once."""
    git(tmp_path, "init", "-q")
    write(tmp_path / "parameterized_runs" / "impact.yaml", BUNDLED.read_text(encoding="utf-8"))
    for suite in SUITES:
        write(tmp_path / "verifiers" / suite / "X-1.yaml", "verifiers: []\n")
    write(tmp_path / "forge_kernel" / "verify" / "kinds" / "_state.py", "'''A verifier kind.'''\n")
    write(tmp_path / "README.md", "synthetic\n")
    commit_all(tmp_path, "first")
    return tmp_path


def lines_after(out: str, header: str) -> str:
    return next(line for line in out.splitlines() if line.startswith(header))


def test_since_the_last_commit_a_changed_hidden_half_names_its_suite_only(repo):
    write(repo / "verifiers" / "forge-nsclc" / "X-1.yaml", "verifiers: [{id: a, kind: budget.limits}]\n")
    commit_all(repo, "a verifier changed")
    done = forge("select", "--since", "HEAD~1", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert "a suite's packages or hidden halves (verifiers/{suite}/**) -> suites forge-nsclc" in done.stdout
    assert "  verifiers/forge-nsclc/X-1.yaml" in done.stdout
    assert lines_after(done.stdout, "suites").endswith(": forge-nsclc")
    assert "tests/suites/test_suite_nsclc.py" in lines_after(done.stdout, "test groups")
    assert "everything" not in done.stdout


def test_a_changed_verifier_kind_names_every_suite_and_the_verifier_tests(repo):
    write(repo / "forge_kernel" / "verify" / "kinds" / "_state.py", "'''A verifier kind, changed.'''\n")
    commit_all(repo, "a verifier kind changed")
    done = forge("select", "--since", "HEAD~1", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert lines_after(done.stdout, "suites").endswith(
        ": superclue, forge-nsclc, medagentbench-style, forge-extraction"
    )
    assert "tests/verify" in lines_after(done.stdout, "test groups").split()


def test_uncommitted_and_new_files_count_as_changed(repo):
    write(repo / "verifiers" / "superclue" / "X-1.yaml", "verifiers: [{id: b, kind: budget.limits}]\n")
    write(repo / "verifiers" / "medagentbench-style" / "X-2.yaml", "verifiers: []\n")
    done = forge("select", "--since", "HEAD", cwd=repo)
    assert lines_after(done.stdout, "suites").endswith(": superclue, medagentbench-style"), done.stdout


def test_a_path_no_pattern_matches_selects_everything_and_says_so(repo):
    done = forge("select", "--changed", "pyproject.toml", cwd=repo)
    assert "no pattern of parameterized_runs/impact.yaml matches these -> everything (the safe default)" in done.stdout
    assert lines_after(done.stdout, "suites").endswith(
        ": superclue, forge-nsclc, medagentbench-style, forge-extraction"
    )
    assert lines_after(done.stdout, "test groups") == "test groups: tests"


def test_an_unknown_ref_or_a_missing_mapping_is_one_line_and_exit_2(repo):
    done = forge("select", "--since", "no-such-ref", cwd=repo)
    assert (done.returncode, done.stderr) == (2, "--since: no-such-ref: no such commit\n")
    (repo / "parameterized_runs" / "impact.yaml").unlink()
    done = forge("select", "--changed", "README.md", cwd=repo)
    assert (done.returncode, done.stderr) == (2, "parameterized_runs/impact.yaml: (file): file not found\n")


def test_a_mapping_naming_an_unknown_suite_is_refused_with_its_field(repo):
    mapping = repo / "parameterized_runs" / "impact.yaml"
    mapping.write_text(mapping.read_text(encoding="utf-8").replace('suites: ["{suite}"]', "suites: [nope]"))
    done = forge("select", "--changed", "README.md", cwd=repo)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "rules.0.suites: 'nope' is no suite of the mapping" in done.stderr


def test_changed_and_since_go_alone(repo):
    for argv in (
        ["select"],
        ["select", "--changed"],
        ["select", "README.md"],
        ["select", "--since", "HEAD", "--changed", "x"],
    ):
        done = forge(*argv, cwd=repo)
        assert done.returncode == 2 and "give one of the two" in done.stderr, argv


RUN_MAP = """suites:
  superclue: {packages: task_packages/superclue, tests: []}
rules:
  - {why: the code, paths: [code/**], tests: [tests/test_ok.py]}
  - {why: the broken code, paths: [broken/**], tests: [tests/test_broken.py]}
  - {why: a typo, paths: [typo/**], tests: [tests/test_missing.py]}
  - {why: the suite, paths: ["task_packages/{suite}/**"], suites: ["{suite}"]}
"""


@pytest.fixture
def run_repo(tmp_path) -> Path:
    write(tmp_path / "parameterized_runs" / "impact.yaml", RUN_MAP)
    write(tmp_path / "tests" / "test_ok.py", "def test_ok():\n    assert True\n")
    write(tmp_path / "tests" / "test_broken.py", "def test_broken():\n    assert False\n")
    return tmp_path


def test_run_runs_the_test_groups_and_exits_1_when_one_fails(run_repo):
    passed = forge("select", "--changed", "code/a.py", "--run", cwd=run_repo)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "$ pytest -q tests/test_ok.py" in passed.stdout and "1 passed" in passed.stdout
    failed = forge("select", "--changed", "broken/a.py", "--run", cwd=run_repo)
    assert failed.returncode == 1 and "FAILED: pytest -q tests/test_broken.py" in failed.stderr


def test_run_refuses_a_test_group_that_does_not_exist_before_running_anything(run_repo):
    done = forge("select", "--changed", "typo/a.py", "code/b.py", "--run", cwd=run_repo)
    assert (done.returncode, done.stderr) == (
        2,
        "parameterized_runs/impact.yaml: tests/test_missing.py: no such file or folder in this repository\n",
    )
    assert "$ " not in done.stdout


def test_run_selftests_a_selected_suite_with_mutants(run_repo):
    shutil.copytree(
        ROOT / "task_packages" / "superclue" / "SC-DA-BMI", run_repo / "task_packages" / "superclue" / "SC-DA-BMI"
    )
    for name in (
        "task_packages/superclue/suite.yaml",
        "verifiers/superclue/suite.yaml",
        "verifiers/superclue/SC-DA-BMI.yaml",
    ):
        copy_file(ROOT / name, run_repo / name)
    done = forge("select", "--changed", "task_packages/superclue/SC-DA-BMI/package.yaml", "--run", cwd=run_repo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "$ forge selftest --mutants task_packages/superclue" in done.stdout
    assert "verifier coverage: 1/1 package(s)" in done.stdout


def copy_file(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


def test_patterns_read_a_star_inside_a_folder_two_stars_at_any_depth_and_a_suite_by_name():
    suites = ["superclue", "forge-nsclc"]
    assert pattern_regex("forge_kernel/verify/**", suites).fullmatch("forge_kernel/verify/kinds/_typed.py")
    assert not pattern_regex("forge_kernel/verify/**", suites).fullmatch("forge_kernel/verifyx/a.py")
    assert pattern_regex("**/*.py", suites).fullmatch("setup.py")
    assert not pattern_regex("tests/*.py", suites).fullmatch("tests/verify/test_a.py")
    hit = pattern_regex("task_packages/{suite}/**", suites).fullmatch("task_packages/forge-nsclc/TP-X/package.yaml")
    assert hit and hit["suite"] == "forge-nsclc"
    assert not pattern_regex("task_packages/{suite}/**", suites).fullmatch("task_packages/ehr_images/s/1/a.json")


def test_a_changed_test_runs_itself_and_code_alone_is_not_a_match():
    impact = read_impact(BUNDLED)
    selection = select_for_change(["tests/verify/test_doses.py"], impact)
    assert "tests/verify/test_doses.py" in selection.tests and not selection.everything
    scripts = select_for_change(["scripts/dev.py"], impact)
    assert scripts.everything and scripts.unmatched == ["scripts/dev.py"]  # matched only by the lint rule


def test_the_bundled_mapping_names_existing_suites_and_tests_and_maps_the_layout():
    impact = read_impact(BUNDLED)
    named = [*impact.everything, *(t for r in impact.rules for t in r.tests if "{path}" not in t)]
    named += [t for s in impact.suites.values() for t in [s.packages, *s.tests]]
    assert [p for p in named if not (ROOT / p).exists()] == []
    assert set(impact.suites) == {p.name for p in (ROOT / "task_packages").iterdir() if (p / "suite.yaml").exists()}
    widgets = select_for_change(["forge_kernel/widgets/player.py", "frontend/src/x.ts"], impact)
    assert (widgets.suites, widgets.tests[:2]) == ([], ["tests/widgets", "tests/browser"])
    tools = select_for_change(["forge_kernel/tools/_writes.py"], impact)
    assert tools.suites == list(SUITES) and "tests/tools" in tools.tests
    agents = select_for_change(["forge_kernel/agents/planner/_nsclc.py"], impact)
    assert agents.suites == [] and "tests/suites" in agents.tests
    report = select_for_change(["forge_kernel/report/build.py"], impact)
    assert report.tests[0] == "tests/report"
