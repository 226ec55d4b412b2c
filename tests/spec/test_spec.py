"""Spec layer: loading errors, content hashes, JSON Schemas and the public/hidden split (synthetic data only)."""

from __future__ import annotations

import copy
import json
import re
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml
from pydantic import ValidationError

from forge_kernel.agents import AgentTask
from forge_kernel.authoring.schemas import SCHEMA_DIR, schema_documents
from forge_kernel.ehr import fhir
from forge_kernel.spec import (
    SpecError,
    TaskPackage,
    TrajectoryFile,
    answer_schema,
    canonical_json,
    content_hash,
    find_packages,
    hashing,
    load_package,
    load_trajectory,
)
from forge_kernel.spec.loading import read_yaml
from forge_kernel.spec.suites import merged, with_hidden_defaults

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = sorted(ROOT.glob("task_packages/*/*/package.yaml"))
MARKER = "ZZ-HIDDEN-MARKER-7f3a9c"
FORGE = str(Path(sys.executable).with_name("forge"))

PUBLIC = {
    "id": "UNIT-1",
    "version": "1.0.0",
    "title": "单元测试任务",
    "suite": "unit",
    "category": "medication_management",
    "environment": {
        "ehr_image": "unit-ehr",
        "ehr_version": "1",
        "fixtures": ["fixtures/ehr.json"],
        "now": "2026-11-30T09:00:00+08:00",
        "patient_id": "p1",
    },
    "task": {
        "instruction": {"zh": "请为患者开具奥美拉唑。", "en": "Prescribe omeprazole."},
        "context": {"mrn": "MRN-1", "drug": "奥美拉唑"},
    },
    "tools": ["patient_search", "patient_history", "medication_request_create", "finish"],
    "policy": {"writable_types": ["MedicationRequest"]},
}
HIDDEN = {
    "id": "UNIT-1",
    "version": "1.0.0",
    "expected_tools": ["patient_search", "medication_request_create", "finish"],
    "verifiers": [{"id": "chain", "kind": "trace.tool_chain", "category": "trace", "params": {"exact": True}}],
    "gold": {
        "calls": [{"tool": "patient_search", "args": {"mrn": "MRN-1"}}, {"tool": "finish", "args": {}}],
        "answer": "done",
    },
}
RESOURCES = [
    fhir.patient("p1", "测试甲", "female", "1970-05-01", "MRN-1"),
    fhir.condition("c1", "p1", "胃溃疡", "2026-10-01"),
    fhir.patient("p2", "测试乙", "male", "1980-01-01", "MRN-2"),
]


def write_package(
    root: Path, public: dict | None = None, hidden: dict | None = None, resources: list[dict] | None = None
) -> Path:
    """``root/task_packages/<suite>/<id>/`` with one fixture, and ``root/verifiers/<suite>/<id>.yaml``."""
    public = copy.deepcopy(PUBLIC if public is None else public)
    folder = root / "task_packages" / public["suite"] / public["id"]
    (folder / "fixtures").mkdir(parents=True, exist_ok=True)
    (folder / "package.yaml").write_text(yaml.safe_dump(public, allow_unicode=True), encoding="utf-8")
    bundle = fhir.bundle(RESOURCES if resources is None else resources)
    (folder / "fixtures" / "ehr.json").write_text(json.dumps(bundle, ensure_ascii=False), encoding="utf-8")
    if hidden is not False:
        hidden_file = root / "verifiers" / public["suite"] / f"{public['id']}.yaml"
        hidden_file.parent.mkdir(parents=True, exist_ok=True)
        hidden_file.write_text(
            yaml.safe_dump(HIDDEN if hidden is None else hidden, allow_unicode=True), encoding="utf-8"
        )
    return folder


def with_(doc: dict, path: str, value) -> dict:
    """A copy of doc with the dotted path set to value."""
    doc = copy.deepcopy(doc)
    *parents, last = path.split(".")
    node = doc
    for part in parents:
        node = node[part]
    node[last] = value
    return doc


def edited_package(root: Path, old: str, new: str) -> Path:
    """The unit package with ``old`` replaced by ``new`` in its package.yaml text; that file."""
    manifest = write_package(root) / "package.yaml"
    manifest.write_text(manifest.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")
    return manifest


def spec_error(fn, *args) -> SpecError:
    with pytest.raises(SpecError) as info:
        fn(*args)
    err = info.value
    assert str(err) == f"{err.file}: {err.field}: {err.message}"
    assert "\n" not in str(err)
    return err


# --- loading errors -----------------------------------------------------------------------------------------------


def test_a_good_package_loads(tmp_path):
    package = load_package(write_package(tmp_path))
    assert package.id == "UNIT-1"
    assert [r["id"] for r in package.resources] == ["p1", "c1", "p2"]
    assert package.hidden.verifiers[0].id == "chain"
    assert package.hidden_path == tmp_path / "verifiers" / "unit" / "UNIT-1.yaml"
    assert load_package(package.path / "package.yaml").public == package.public


@pytest.mark.parametrize(
    "path, value, field",
    [
        ("colour", "red", "colour"),
        ("environment.colour", "red", "environment.colour"),
        ("budget", {"max_calls": 5, "max_cals": 6}, "budget.max_cals"),
    ],
)
def test_unknown_field_names_file_and_field(tmp_path, path, value, field):
    folder = write_package(tmp_path, with_(PUBLIC, path, value))
    err = spec_error(load_package, folder)
    assert err.file == str(folder / "package.yaml")
    assert err.field == field
    assert err.message == "unknown field"


@pytest.mark.parametrize(
    "path, value",
    [("budget", {"max_calls": "many"}), ("tools", "finish"), ("environment.now", "not a time"), ("risk", "extreme")],
)
def test_wrong_type_names_the_field(tmp_path, path, value):
    folder = write_package(tmp_path, with_(PUBLIC, path, value))
    err = spec_error(load_package, folder)
    assert err.file == str(folder / "package.yaml")
    expected = "budget.max_calls" if path == "budget" else path
    assert err.field == expected
    assert err.message and err.message != "unknown field"


def test_a_clock_without_a_time_zone_is_one_line(tmp_path):
    err = spec_error(load_package, write_package(tmp_path, with_(PUBLIC, "environment.now", "2026-11-30T09:00:00")))
    assert (err.field, err.message) == ("environment.now", "Input should have timezone info")


@pytest.mark.parametrize("suite", ["../escape", "a/b", "/abs", "..", ".hidden"])
def test_a_suite_is_a_plain_name(tmp_path, suite):
    folder = write_package(tmp_path)
    (folder / "package.yaml").write_text(yaml.safe_dump(with_(PUBLIC, "suite", suite)), encoding="utf-8")
    err = spec_error(load_package, folder)
    assert (err.field, err.message) == ("suite", "String should match pattern '^[A-Za-z0-9][A-Za-z0-9._-]*$'")


@pytest.mark.parametrize("name", ["suite", "Suite"])
def test_no_package_is_called_like_the_suite_defaults(tmp_path, name):
    """verifiers/<suite>/suite.yaml holds a suite's hidden defaults: a package of that id would have its hidden half
    read from, or written over, that file."""
    folder = write_package(tmp_path)
    (folder / "package.yaml").write_text(yaml.safe_dump(with_(PUBLIC, "id", name)), encoding="utf-8")
    err = spec_error(load_package, folder)
    assert (err.field, err.message) == (
        "id",
        f"Value error, {name!r} is taken: verifiers/<suite>/suite.yaml holds the suite's hidden defaults",
    )


@pytest.mark.parametrize("how", ["dot-dot", "absolute", "symlink"])
def test_a_fixture_must_stay_inside_the_package_folder(tmp_path, how):
    folder = write_package(tmp_path)
    outside = tmp_path / "outside.json"
    shutil.copy(folder / "fixtures" / "ehr.json", outside)
    name = {"dot-dot": "../../../outside.json", "absolute": str(outside), "symlink": "fixtures/link.json"}[how]
    (folder / "fixtures" / "link.json").symlink_to(outside)
    (folder / "package.yaml").write_text(yaml.safe_dump(with_(PUBLIC, "environment.fixtures", [name])))
    err = spec_error(load_package, folder)
    assert (err.field, err.message) == ("environment.fixtures.0", f"must stay inside the package folder: {name}")


def test_missing_required_field(tmp_path):
    public = copy.deepcopy(PUBLIC)
    del public["environment"]["patient_id"]
    err = spec_error(load_package, write_package(tmp_path, public))
    assert err.field == "environment.patient_id"
    assert "required" in err.message.lower()


@pytest.mark.parametrize(
    "text, line",
    [
        ("id: X\nversion: '1'\ntitle: a: b\n", 3),
        ("id: X\ntools:\n  - a\n - b\n", 4),
        ("id: X\n\tversion: 1\n", 2),
        ("id: X\n? [a, b]\n: 1\n", 2),
    ],
)
def test_malformed_yaml_gives_the_line(tmp_path, text, line):
    folder = write_package(tmp_path)
    (folder / "package.yaml").write_text(text, encoding="utf-8")
    err = spec_error(load_package, folder)
    assert err.file == str(folder / "package.yaml")
    assert err.field == f"line {line}"


def test_a_key_given_twice_is_an_error_not_a_silent_overwrite(tmp_path):
    folder = write_package(tmp_path)
    text = (folder / "package.yaml").read_text(encoding="utf-8")
    (folder / "package.yaml").write_text(text + "tools: [finish]\n", encoding="utf-8")
    err = spec_error(load_package, folder)
    assert err.message == "duplicate key 'tools'"
    assert err.field.startswith("line ")


ALIAS_BOMB = f"      a: &a [{', '.join(['lol'] * 9)}]\n" + "".join(
    f"      {b}: &{b} [{', '.join([f'*{a}'] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi")
)
"""Nine levels of nine aliases, 0.5 KB of YAML: 9**9 (387 million) strings once expanded."""


def test_an_alias_bomb_is_refused_quickly_and_in_bounded_memory(tmp_path):
    manifest = edited_package(tmp_path, "  context:\n", "  context:\n    bomb:\n" + ALIAS_BOMB)
    limit = 2**30  # 1 GiB of address space for the whole process

    def bounded():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    result = subprocess.run(
        [FORGE, "validate", str(manifest.parent)], capture_output=True, text=True, timeout=60, preexec_fn=bounded
    )
    line = next(i for i, row in enumerate(manifest.read_text().splitlines(), 1) if "*a" in row)
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [f"{manifest}: line {line}: alias *a: aliases are not allowed"]


def test_an_anchor_without_alias_is_fine_and_an_alias_names_its_line(tmp_path):
    manifest = edited_package(tmp_path, "title:", "title: &t")
    assert load_package(manifest).public.title == PUBLIC["title"]
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(text + "slices: {copy: *t}\n", encoding="utf-8")
    err = spec_error(load_package, manifest)
    assert (err.field, err.message) == (f"line {len(text.splitlines()) + 1}", "alias *t: aliases are not allowed")


def test_yaml_is_read_with_the_1_2_core_types_so_yes_on_and_12_30_stay_strings(tmp_path):
    path = tmp_path / "doc.yaml"
    path.write_text(
        "on: yes\noff: no\ny: n\nstart: 12:30\ncode: 012\noctal: 0o12\nhex: 0x1f\nday: 2026-11-30\n"
        "plain: [true, False, 1, -2, 1.5, 1e3, null, ~, '']\n",
        encoding="utf-8",
    )
    doc = read_yaml(path)
    assert doc == {
        "on": "yes",
        "off": "no",
        "y": "n",
        "start": "12:30",
        "code": "012",
        "octal": "0o12",
        "hex": "0x1f",
        "day": "2026-11-30",
        "plain": [True, False, 1, -2, 1.5, 1000.0, None, None, ""],
    }
    assert [type(v) for v in doc["plain"]] == [bool, bool, int, int, float, float, type(None), type(None), str]


@pytest.mark.parametrize("depth, field", [(300, "(file)"), (100_000, re.compile(r"line \d+"))])
def test_yaml_nested_too_deep_is_one_line(tmp_path, depth, field):
    manifest = edited_package(tmp_path, "  context:\n", f"  context:\n    deep: {'[' * depth}{']' * depth}\n")
    err = spec_error(load_package, manifest)
    assert err.file == str(manifest) and "nest" in err.message
    assert field.fullmatch(err.field) if isinstance(field, re.Pattern) else err.field == field


def test_yaml_that_is_not_a_mapping(tmp_path):
    folder = write_package(tmp_path)
    (folder / "package.yaml").write_text("- a\n- b\n", encoding="utf-8")
    assert spec_error(load_package, folder).field == "(root)"


def test_missing_package_yaml(tmp_path):
    err = spec_error(load_package, tmp_path / "nowhere")
    assert err.file == str(tmp_path / "nowhere" / "package.yaml")
    assert err.message == "file not found"


def test_missing_fixture_file(tmp_path):
    public = with_(PUBLIC, "environment.fixtures", ["fixtures/ehr.json", "fixtures/missing.json"])
    folder = write_package(tmp_path, public)
    err = spec_error(load_package, folder)
    assert err.file == str(folder / "package.yaml")
    assert err.field == "environment.fixtures.1"
    assert "missing.json" in err.message


def test_fixture_with_bad_json_gives_its_line(tmp_path):
    folder = write_package(tmp_path)
    (folder / "fixtures" / "ehr.json").write_text('{\n  "resourceType": "Bundle",\n  "entry": [,]\n}', encoding="utf-8")
    err = spec_error(load_package, folder)
    assert err.file == str(folder / "fixtures" / "ehr.json")
    assert err.field == "line 3"


def test_fixture_that_is_not_a_bundle_or_lacks_ids(tmp_path):
    folder = write_package(tmp_path)
    (folder / "fixtures" / "ehr.json").write_text(json.dumps(RESOURCES[0]), encoding="utf-8")
    assert spec_error(load_package, folder).field == "resourceType"
    no_id = {k: v for k, v in RESOURCES[1].items() if k != "id"}
    write_package(tmp_path, resources=[RESOURCES[0], no_id])
    assert spec_error(load_package, folder).field == "entry.1.resource"


def test_text_that_is_not_utf8_is_a_spec_error(tmp_path):
    """A package.yaml or fixture saved in GBK (a common editor default) must not end in a traceback."""
    folder = write_package(tmp_path)
    manifest = folder / "package.yaml"
    original = manifest.read_text(encoding="utf-8")
    manifest.write_bytes(original.encode("gbk"))
    err = spec_error(load_package, folder)
    assert (err.file, err.field) == (str(manifest), "(file)")
    manifest.write_text(original, encoding="utf-8")
    fixture = folder / "fixtures" / "ehr.json"
    fixture.write_bytes(fixture.read_text(encoding="utf-8").encode("gbk"))
    err = spec_error(load_package, folder)
    assert (err.file, err.field) == (str(fixture), "(file)")


def test_fixture_that_is_a_folder_is_a_spec_error(tmp_path):
    folder = write_package(tmp_path, with_(PUBLIC, "environment.fixtures", ["fixtures"]))
    err = spec_error(load_package, folder)
    assert err.field == "environment.fixtures.0"


def test_bundle_entry_must_be_a_list(tmp_path):
    folder = write_package(tmp_path)
    (folder / "fixtures" / "ehr.json").write_text('{"resourceType": "Bundle", "entry": null}', encoding="utf-8")
    assert load_package(folder).resources == []
    (folder / "fixtures" / "ehr.json").write_text('{"resourceType": "Bundle", "entry": {"a": 1}}', encoding="utf-8")
    assert spec_error(load_package, folder).field == "entry"


def test_a_resource_defined_twice_is_a_spec_error(tmp_path):
    """The same type and id with other content in two fixtures: which one is the record? (The same content is kept
    once: tests/ehr/test_realformat.py.)"""
    folder = write_package(tmp_path, with_(PUBLIC, "environment.fixtures", ["fixtures/ehr.json", "fixtures/more.json"]))
    more = fhir.bundle([fhir.condition("c1", "p1", "高血压", "2020-01-01")])
    (folder / "fixtures" / "more.json").write_text(json.dumps(more, ensure_ascii=False), encoding="utf-8")
    err = spec_error(load_package, folder)
    assert err.file == str(folder / "fixtures" / "more.json")
    assert err.field == "entry.0.resource"
    assert "Condition/c1" in err.message


def test_missing_hidden_half_is_an_error_only_when_asked_for(tmp_path):
    folder = write_package(tmp_path, hidden=False)
    package = load_package(folder)  # the public half alone loads
    err = spec_error(lambda: package.hidden)
    assert err.file == str(folder / "package.yaml")
    assert err.field == "id"
    assert "verifiers/unit/UNIT-1.yaml" in err.message
    spec_error(lambda: package.package_hash)


def test_hidden_id_mismatch(tmp_path):
    folder = write_package(tmp_path, hidden=with_(HIDDEN, "id", "UNIT-2"))
    package = load_package(folder)
    err = spec_error(lambda: package.hidden)
    assert err.file == str(tmp_path / "verifiers" / "unit" / "UNIT-1.yaml")
    assert err.field == "id"
    assert "UNIT-2" in err.message and "UNIT-1" in err.message


def test_hidden_half_errors_name_the_hidden_file(tmp_path):
    hidden = with_(HIDDEN, "verifiers", [{"id": "v", "kind": "k", "category": "style"}])
    package = load_package(write_package(tmp_path, hidden=hidden))
    err = spec_error(lambda: package.hidden)
    assert err.file == str(tmp_path / "verifiers" / "unit" / "UNIT-1.yaml")
    assert err.field == "verifiers.0.category"


def test_load_trajectory_errors(tmp_path):
    good = tmp_path / "t.json"
    good.write_text(json.dumps({"calls": [{"tool": "finish"}], "answer": "x"}), encoding="utf-8")
    assert load_trajectory(good).calls[0].tool == "finish"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"calls": [{"tool": "finish", "arguments": {}}]}), encoding="utf-8")
    err = spec_error(load_trajectory, bad)
    assert (err.field, err.message) == ("calls.0.arguments", "unknown field")
    assert spec_error(load_trajectory, tmp_path / "none.json").message == "file not found"


def test_find_packages(tmp_path):
    a = write_package(tmp_path)
    b = write_package(tmp_path, with_(PUBLIC, "id", "UNIT-0"))
    assert find_packages([tmp_path]) == sorted([a, b])
    assert find_packages([a / "package.yaml"]) == [a]
    assert spec_error(find_packages, [tmp_path / "nope"]).field == "(path)"
    (tmp_path / "empty").mkdir()
    spec_error(find_packages, [tmp_path / "empty"])


# --- content hashes -----------------------------------------------------------------------------------------------


def hashes(folder: Path) -> tuple[str, str, str]:
    package = load_package(folder)
    return package.public_hash, package.hidden_hash, package.package_hash


def test_hashes_have_the_documented_form():
    value = {"b": [1, "二"], "a": None}
    assert canonical_json(value) == '{"a":null,"b":[1,"二"]}'
    digest = content_hash("x", value)
    assert digest.startswith("sha256:") and len(digest) == len("sha256:") + 64
    assert content_hash("x", value) == content_hash("x", {"a": None, "b": [1, "二"]})
    assert content_hash("x", value) != content_hash("y", value)


def test_hash_carries_the_format_version(monkeypatch):
    before = content_hash("x", {"a": 1})
    monkeypatch.setattr(hashing, "FORMAT_VERSION", hashing.FORMAT_VERSION + 1)
    assert hashing.content_hash("x", {"a": 1}) != before


def test_hashes_are_stable_across_loads_and_locations(tmp_path):
    folder = write_package(tmp_path / "one")
    first = hashes(folder)
    assert hashes(folder) == first
    shutil.copytree(tmp_path / "one", tmp_path / "two")
    assert hashes(tmp_path / "two" / "task_packages" / "unit" / "UNIT-1") == first
    assert len(set(first)) == 3


def test_key_order_in_yaml_does_not_change_hashes(tmp_path):
    folder = write_package(tmp_path)
    first = hashes(folder)
    reordered = dict(reversed(list(PUBLIC.items())))
    (folder / "package.yaml").write_text(
        yaml.safe_dump(reordered, allow_unicode=True, sort_keys=False), encoding="utf-8"
    )
    assert (folder / "package.yaml").read_text(encoding="utf-8").startswith("policy:")
    assert hashes(folder) == first


def test_one_fixture_byte_changes_the_public_and_package_hash(tmp_path):
    folder = write_package(tmp_path)
    public, hidden, package = hashes(folder)
    fixture = folder / "fixtures" / "ehr.json"
    fixture.write_bytes(fixture.read_bytes() + b" ")
    assert load_package(folder).resources == RESOURCES  # same content, different bytes
    public2, hidden2, package2 = hashes(folder)
    assert public2 != public and package2 != package
    assert hidden2 == hidden


def test_a_public_change_changes_the_public_hash(tmp_path):
    public, hidden, package = hashes(write_package(tmp_path))
    public2, hidden2, package2 = hashes(write_package(tmp_path, with_(PUBLIC, "budget", {"max_calls": 7})))
    assert public2 != public and package2 != package and hidden2 == hidden


def test_a_hidden_change_leaves_the_public_hash_alone(tmp_path):
    public, hidden, package = hashes(write_package(tmp_path))
    changed = with_(HIDDEN, "verifiers", [{**HIDDEN["verifiers"][0], "params": {"exact": False}}])
    public2, hidden2, package2 = hashes(write_package(tmp_path, hidden=changed))
    assert public2 == public
    assert hidden2 != hidden and package2 != package


def test_public_hash_needs_no_hidden_half(tmp_path):
    with_hidden = load_package(write_package(tmp_path / "a")).public_hash
    assert load_package(write_package(tmp_path / "b", hidden=False)).public_hash == with_hidden


# --- JSON Schemas -------------------------------------------------------------------------------------------------


def schema(name: str) -> dict:
    return json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))


def validator(name: str) -> jsonschema.Draft202012Validator:
    doc = schema(name)
    jsonschema.Draft202012Validator.check_schema(doc)
    return jsonschema.Draft202012Validator(doc)


def test_schema_files_are_in_sync_with_the_models():
    """If this fails, run ``python -m forge_kernel.authoring.schemas``."""
    docs = schema_documents()
    assert sorted(docs) == sorted(p.name for p in SCHEMA_DIR.glob("*.schema.json"))
    for name, text in docs.items():
        assert (SCHEMA_DIR / name).read_text(encoding="utf-8") == text, name


def test_bundled_packages_exist():
    assert BUNDLED, "the example suite should ship at least one package"


@pytest.mark.parametrize("manifest", BUNDLED, ids=lambda p: p.parent.name)
def test_bundled_halves_validate_against_the_schemas(manifest):
    """Each half over its suite's defaults, as the loader merges them; the suite files against their own schemas."""
    suite, own = read_yaml(manifest.parent.parent / "suite.yaml"), read_yaml(manifest)
    validator("suite.schema.json").validate(suite)
    validator("taskpackage.schema.json").validate(merged(suite, own))
    package = load_package(manifest)
    base = read_yaml(package.hidden_defaults_path)
    validator("hidden-suite.schema.json").validate(base)
    hidden = with_hidden_defaults(base, read_yaml(package.hidden_path))
    validator("hidden.schema.json").validate(hidden)
    trajectories = validator("trajectory.schema.json")
    trajectories.validate(json.loads(json.dumps(hidden["gold"])))
    for counterexample in package.hidden.counterexamples:
        trajectories.validate(counterexample.trajectory.model_dump(mode="json", exclude_none=True))


def test_a_trajectory_file_validates(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(
        json.dumps(
            {
                "task_id": "UNIT-1",
                "agent": "x",
                "answer": "ok",
                "confidence": 0.5,
                "calls": [{"tool": "patient_search", "args": {"mrn": "MRN-1"}}],
            }
        ),
        encoding="utf-8",
    )
    validator("trajectory.schema.json").validate(json.loads(path.read_text(encoding="utf-8")))
    assert load_trajectory(path).confidence == 0.5


@pytest.mark.parametrize(
    "name, doc",
    [
        ("taskpackage.schema.json", {**PUBLIC, "colour": "red"}),
        ("taskpackage.schema.json", with_(PUBLIC, "budget", {"max_calls": 0})),
        ("taskpackage.schema.json", {k: v for k, v in PUBLIC.items() if k != "tools"}),
        ("hidden.schema.json", with_(HIDDEN, "verifiers", [])),
        ("trajectory.schema.json", {"calls": [{"tool": "x"}], "confidence": 2}),
        ("trajectory.schema.json", {"answer": "no calls"}),
    ],
)
def test_schemas_reject_what_the_models_reject(name, doc):
    assert list(validator(name).iter_errors(doc))
    model = {"taskpackage.schema.json": TaskPackage, "trajectory.schema.json": TrajectoryFile}.get(name)
    if model is not None:
        with pytest.raises(ValidationError):
            model.model_validate(doc)


def test_schemas_accept_the_unit_documents():
    validator("taskpackage.schema.json").validate(PUBLIC)
    validator("hidden.schema.json").validate(HIDDEN)


# --- the agent sees the public half only ----------------------------------------------------------------------------


def marked_hidden() -> dict:
    hidden = copy.deepcopy(HIDDEN)
    hidden["verifiers"].append(
        {
            "id": f"v-{MARKER}",
            "kind": "state.resource",
            "category": "success",
            "params": {"type": "MedicationRequest", "label": MARKER},
        }
    )
    hidden["gold"]["answer"] = f"gold answer {MARKER}"
    hidden["gold"]["calls"].insert(1, {"tool": "patient_history", "args": {"patient_id": "p1", "note": MARKER}})
    hidden["counterexamples"] = [
        {"name": MARKER, "trajectory": {"calls": [], "answer": MARKER}, "must_fail": ["chain"]}
    ]
    return hidden


def test_agent_task_carries_nothing_of_the_hidden_half(tmp_path):
    package = load_package(write_package(tmp_path, hidden=marked_hidden()))
    assert MARKER in canonical_json(package.hidden.model_dump(mode="json"))  # the marker is really there
    task = AgentTask.from_package(package.public, seed=11)
    text = task.model_dump_json()
    assert MARKER not in text
    assert "must_fail" not in text and "expected_tools" not in text and "gold" not in text


def test_agent_task_does_not_need_the_hidden_half(tmp_path):
    package = load_package(write_package(tmp_path, hidden=False))
    task = AgentTask.from_package(package.public, seed=3)
    assert task.task_id == "UNIT-1" and task.seed == 3


def test_agent_task_fields_come_from_public_fields(tmp_path):
    public = load_package(write_package(tmp_path, hidden=marked_hidden())).public
    task = AgentTask.from_package(public, seed=5)
    sources = {
        "task_id": public.id,
        "version": public.version,
        "title": public.title,
        "category": public.category,
        "language": public.task.language,
        "instruction": public.task.instruction[public.task.language],
        "instructions": public.task.instruction,
        "context": public.task.context,
        "now": public.environment.now,
        "budget": public.budget,
        "seed": 5,
        "answer_schema": answer_schema(public.task.answer) if public.task.answer else None,
    }
    assert set(AgentTask.model_fields) == set(sources) | {"tool_names", "tool_definitions"}, (
        "a new AgentTask field needs a public source"
    )
    for name, value in sources.items():
        assert getattr(task, name) == value, name
    assert [t["function"]["name"] for t in task.tools] == task.tool_names == public.tools


def test_each_trial_gets_its_own_copy_of_the_task():
    """A trusted in-process agent that changes its task changes nothing another trial sees."""
    template = AgentTask.from_package(load_package(ROOT / "task_packages/superclue/SC-MED-GASTRIC-ULCER").public, 0)
    first = template.for_trial(1)
    first.context.clear(), first.instructions.clear(), first.tool_names.clear(), first.tools.clear()
    object.__setattr__(first.budget, "max_calls", 10**6)
    second = template.for_trial(2)
    assert second.seed == 2 and second.context and second.instructions and second.tool_names and second.tools
    assert second.budget.max_calls == template.budget.max_calls == 20 and second == template.for_trial(2)


def test_agent_task_instruction_follows_the_language(tmp_path):
    public = load_package(write_package(tmp_path, with_(PUBLIC, "task.language", "en"))).public
    task = AgentTask.from_package(public, seed=0)
    assert task.instruction == "Prescribe omeprazole."
    assert task.instructions == {"zh": "请为患者开具奥美拉唑。", "en": "Prescribe omeprazole."}


def test_the_default_gate_policy_validates_against_its_schema():
    gate = yaml.safe_load((ROOT / "forge_kernel/spec/gates/default.yaml").read_text(encoding="utf-8"))
    validator("gate-policy.schema.json").validate(gate)
    assert not validator("gate-policy.schema.json").is_valid({**gate, "hard": {"typo_gate": True}})
