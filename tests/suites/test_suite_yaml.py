"""Suite defaults (suite.yaml, public and hidden): merged under each package, covered by its hashes, kept by run
stores. The packages are synthetic."""

from __future__ import annotations

import asyncio
import json
import shutil

import jsonschema
import pytest
import yaml

from forge_kernel import open_run
from forge_kernel.authoring.schemas import SCHEMA_DIR
from forge_kernel.engine import RunSpec, execute
from forge_kernel.engine.grading import regrade
from forge_kernel.engine.selftest import selftest_package
from forge_kernel.engine.trial import Images
from forge_kernel.engine.validate import check_package
from forge_kernel.spec import SpecError, load_package
from forge_kernel.spec.hidden import grading_content
from forge_kernel.spec.loading import read_yaml
from tests.helpers import ROOT, WORKED_EXAMPLES, copy_worked_examples
from tests.spec.test_bundled_format import write_in_full

BASE_IDS = ("chain", "scope", "writes", "foreign", "grounded", "consistent", "budget")


def dump(path, data):
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")


def with_suite_files(root):
    """The worked examples under root, as bundled: taking what they share from the two suite.yaml files."""
    return copy_worked_examples(root)


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """(the worked examples written out in full, without suite files; the same as bundled, with them)."""
    root = tmp_path_factory.mktemp("suites")
    for task in WORKED_EXAMPLES:
        write_in_full(load_package(ROOT / "task_packages" / "superclue" / task), root / "copies")
    return root / "copies" / "task_packages" / "superclue", with_suite_files(root / "defaults")


def test_merged_packages_are_the_same_packages_with_the_same_hashes(both):
    copies, defaults = both
    for task in WORKED_EXAMPLES:
        a, b = load_package(copies / task), load_package(defaults / task)
        assert "tools" not in read_yaml(defaults / task / "package.yaml")  # the default really comes from the suite
        assert b.public == a.public and grading_content(b.hidden) == grading_content(a.hidden)
        assert (b.public_hash, b.hidden_hash, b.package_hash) == (a.public_hash, a.hidden_hash, a.package_hash)
        assert b.public_files == ["package.yaml", "../suite.yaml", "fixtures/ehr.json"]
        check_package(defaults / task)


def test_selftest_gives_the_same_results_with_suite_defaults(both):
    copies, defaults = both
    images = Images()
    for task in WORKED_EXAMPLES:
        got = asyncio.run(selftest_package(load_package(defaults / task), images))
        assert got == asyncio.run(selftest_package(load_package(copies / task), images))
        assert all(case.ok for case in got)


def test_a_package_field_wins_and_a_changed_default_changes_the_hash(tmp_path):
    suite = with_suite_files(tmp_path)
    task = WORKED_EXAMPLES[1]
    before = load_package(suite / task)
    public = read_yaml(suite / task / "package.yaml")
    dump(suite / task / "package.yaml", {**public, "budget": {"max_calls": 7}})
    own = load_package(suite / task)
    assert own.public.budget.max_calls == 7 and own.public.budget.max_seconds == before.public.budget.max_seconds
    dump(suite / task / "package.yaml", public)
    defaults = read_yaml(suite / "suite.yaml")
    dump(suite / "suite.yaml", {**defaults, "budget": {**defaults["budget"], "max_cost": 0.25}})
    changed = load_package(suite / task)
    assert changed.public.budget.max_cost == 0.25 and changed.public_hash != before.public_hash


def test_a_package_verifier_replaces_the_suite_one_of_the_same_id(tmp_path):
    suite = with_suite_files(tmp_path)
    task = WORKED_EXAMPLES[0]
    hidden_file = tmp_path / "verifiers" / "superclue" / f"{task}.yaml"
    hidden = read_yaml(hidden_file)
    before = load_package(suite / task)
    before_hash = before.hidden_hash
    hard = {
        "id": "chain",
        "kind": "trace.tool_chain",
        "category": "trace",
        "severity": "hard",
        "params": {"exact": True, "compliance": "the order is the ward's rule"},
    }
    dump(hidden_file, {**hidden, "verifiers": [*hidden["verifiers"], hard]})
    after = load_package(suite / task)
    assert [v.id for v in after.hidden.verifiers] == [v.id for v in before.hidden.verifiers]
    assert after.hidden.verifiers[0].params["compliance"] == "the order is the ward's rule"
    assert after.hidden_hash != before_hash


@pytest.mark.parametrize(
    "where, content, field",
    [
        ("public", {"colour": "red"}, "colour"),
        ("public", {"budget": {"max_calls": 0}}, "budget.max_calls"),
        ("public", {"environment": {"patient_id": "p1"}}, "environment.patient_id"),
        ("hidden", {"verifiers": [{"id": "x", "kind": "safety.writes"}]}, "verifiers.0.category"),
        ("hidden", {"expected_tools": ["finish"]}, "expected_tools"),
    ],
)
def test_a_bad_suite_file_is_one_line_naming_it(tmp_path, where, content, field):
    suite = with_suite_files(tmp_path)
    path = suite / "suite.yaml" if where == "public" else tmp_path / "verifiers" / "superclue" / "suite.yaml"
    dump(path, content)
    with pytest.raises(SpecError) as info:
        load_package(suite / WORKED_EXAMPLES[0]).read_hidden()
    assert (info.value.file, info.value.field) == (str(path), field)


def test_a_copied_store_keeps_the_suite_defaults(tmp_path):
    suite = with_suite_files(tmp_path / "here")
    hashes = {task: load_package(suite / task).package_hash for task in WORKED_EXAMPLES}
    asyncio.run(
        execute(
            RunSpec(suite=[str(suite)], agents=["candidate-v2"], trials=1), tmp_path / "here" / "run", progress=False
        )
    )
    (tmp_path / "there").mkdir()
    shutil.copy(tmp_path / "here" / "run" / "run.sqlite", tmp_path / "there" / "run.sqlite")
    shutil.rmtree(tmp_path / "here")
    with open_run(tmp_path / "there") as run:
        for task in WORKED_EXAMPLES:
            package = run.package(task)
            assert package.package_hash == hashes[task]
            assert [v.id for v in package.hidden.verifiers][: len(BASE_IDS)] == list(BASE_IDS)
    assert regrade(tmp_path / "there").changed == 0


def test_the_suite_schemas_accept_the_suite_files_and_refuse_a_wrong_one(tmp_path):
    suite = with_suite_files(tmp_path)
    checks = {
        name: jsonschema.Draft202012Validator(json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8")))
        for name in ("suite.schema.json", "hidden-suite.schema.json")
    }
    public, hidden = read_yaml(suite / "suite.yaml"), read_yaml(tmp_path / "verifiers" / "superclue" / "suite.yaml")
    checks["suite.schema.json"].validate(public)
    checks["hidden-suite.schema.json"].validate(hidden)
    assert not checks["suite.schema.json"].is_valid({**public, "tools": ["no_such_tool"]})
    wrong = {"verifiers": [{**hidden["verifiers"][0], "params": {"exact": "yes"}}]}
    assert not checks["hidden-suite.schema.json"].is_valid(wrong)
