"""Traceability: ``task_packages/requirements.yaml`` and the ``covers`` of every package; ``forge trace`` passes on
the bundled packages and fails, one line each, when a requirement loses its last package or a package names an
unknown one. The packages are synthetic."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from forge_kernel.spec import Coverage, SpecError, find_packages, load_package, read_requirements, trace_matrix

ROOT = Path(__file__).resolve().parents[2]
REQUIREMENTS = ROOT / "task_packages" / "requirements.yaml"
GROUP_OF_SUITE = {
    "superclue": "superclue",
    "forge-nsclc": "trial-matching",
    "forge-extraction": "trial-matching",
    "medagentbench-style": "medagentbench",
}


def forge(*argv: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "forge_kernel.cli", *argv]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture
def copy(tmp_path) -> Path:
    """The bundled suites and requirements, copied: a repository of its own to break."""
    for half in ("task_packages", "verifiers"):
        shutil.copytree(ROOT / half, tmp_path / half)
    return tmp_path


def test_trace_passes_on_the_bundled_packages_and_prints_every_requirement():
    done = forge("trace")
    assert done.returncode == 0, done.stderr
    requirements = read_requirements(REQUIREMENTS).requirements
    rows = {line.split()[0]: line.split()[1] for line in done.stdout.splitlines()[:-1]}
    assert list(rows) == [r.id for r in requirements]
    assert all(int(count) >= 1 for count in rows.values())
    assert done.stdout.splitlines()[-1].endswith("106 package(s): every requirement has a package")


def test_every_bundled_package_covers_a_requirement_of_its_suites_group():
    groups = {r.id: r.group for r in read_requirements(REQUIREMENTS).requirements}
    for folder in find_packages([ROOT / "task_packages"]):
        public = load_package(folder).public
        assert GROUP_OF_SUITE[public.suite] in {groups[c] for c in public.covers}, public.id


def test_a_requirement_that_loses_its_last_package_fails_the_trace(copy):
    shutil.rmtree(copy / "task_packages" / "forge-nsclc" / "TP-REGRESSION-LOCK-v1")
    done = forge("trace", cwd=copy)
    assert done.returncode == 1
    assert done.stderr == "task_packages/requirements.yaml: TM-UNIT-CONVERSION: no package covers it\n"
    assert "105 package(s): 1 problem(s)" in done.stdout


def test_a_package_naming_an_unknown_requirement_fails_the_trace(copy):
    package = copy / "task_packages" / "superclue" / "SC-DA-BMI" / "package.yaml"
    text = package.read_text(encoding="utf-8")
    package.write_text(text.replace("covers: [", "covers: [SAFE-NOT-A-RULE, "), encoding="utf-8")
    done = forge("trace", cwd=copy)
    assert done.returncode == 1
    assert done.stderr == (
        "task_packages/superclue/SC-DA-BMI/package.yaml: covers: SAFE-NOT-A-RULE is not a requirement of "
        "task_packages/requirements.yaml\n"
    )


def test_the_matrix_counts_each_package_under_what_it_covers_and_names_every_problem():
    requirements = read_requirements(REQUIREMENTS)
    coverages = [Coverage("P-1", Path("p1.yaml"), ("SAFE-INJECTION", "SAFE-NOPE"))]
    matrix = trace_matrix(requirements, REQUIREMENTS, coverages)
    assert matrix.rows["SAFE-INJECTION"] == ["P-1"]
    assert matrix.problems[0] == f"p1.yaml: covers: SAFE-NOPE is not a requirement of {REQUIREMENTS}"
    assert len(matrix.problems) == 1 + len(requirements.requirements) - 1


def test_a_requirement_listed_twice_or_in_no_group_is_refused(tmp_path):
    twice = tmp_path / "twice.yaml"
    twice.write_text(
        REQUIREMENTS.read_text(encoding="utf-8") + "  - {id: SAFE-INJECTION, group: safety, text: again}\n"
    )
    with pytest.raises(SpecError, match="SAFE-INJECTION is listed twice"):
        read_requirements(twice)
    assert forge("trace", "--requirements", str(twice)).returncode == 2
    lost = tmp_path / "lost.yaml"
    lost.write_text(REQUIREMENTS.read_text(encoding="utf-8").replace("group: safety", "group: safty", 1))
    with pytest.raises(SpecError, match="'safty' is not one of groups"):
        read_requirements(lost)


def test_covers_is_public_but_never_given_to_the_agent_and_absent_when_empty():
    from forge_kernel.agents.base import AgentTask

    package = load_package(ROOT / "task_packages" / "superclue" / "SC-MED-GOUT-FLARE")
    assert "SAFE-ALLERGY-CHECK" in package.public.covers
    task = AgentTask.from_package(package.public, seed=0)
    assert "SAFE-ALLERGY-CHECK" not in task.model_dump_json()
    bare = package.public.model_copy(update={"covers": []})
    assert "covers" not in bare.model_dump(mode="json")
