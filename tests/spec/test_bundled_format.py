"""How the bundled packages are written: what a suite shares in its suite.yaml files, each package's own fields beside
them, every case as edits of the gold; at most half the lines of the same packages written out in full. The
packages are synthetic."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from forge_kernel.spec import find_packages, load_package
from forge_kernel.spec.hidden import CASE_LISTS
from forge_kernel.spec.loading import read_yaml
from forge_kernel.spec.suites import SUITE_FILE

ROOT = Path(__file__).resolve().parents[2]
SUITES = ("forge-nsclc", "medagentbench-style", "superclue")


def in_full(package) -> tuple[dict, dict]:
    """(public half, hidden half) of a loaded package written out in full: no suite file, every case a whole
    trajectory (only what differs from the models' own defaults is written)."""
    public = package.public.model_dump(mode="json", exclude_defaults=True)
    hidden = package.hidden.model_dump(
        mode="json", exclude_defaults=True, exclude={name: {"__all__": {"edits"}} for name in CASE_LISTS}
    )
    return public, hidden


def block_yaml(data: dict) -> str:
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=120)


def write_in_full(package, root: Path) -> Path:
    """The package written out in full under root; its folder."""
    public, hidden = in_full(package)
    folder = root / "task_packages" / package.public.suite / package.id
    folder.mkdir(parents=True)
    (folder / "package.yaml").write_text(block_yaml(public), encoding="utf-8")
    for name in package.fixture_hashes:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes((package.path / name).read_bytes())
    images = root / "task_packages" / "ehr_images"
    if package.image is not None and not images.exists():
        shutil.copytree(ROOT / "task_packages" / "ehr_images", images)  # a shared image, found above the package
    hidden_file = root / "verifiers" / package.public.suite / f"{package.id}.yaml"
    hidden_file.parent.mkdir(parents=True, exist_ok=True)
    hidden_file.write_text(block_yaml(hidden), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def packages() -> list:
    loaded = [load_package(path) for path in find_packages([ROOT / "task_packages"])]
    for package in loaded:
        package.read_hidden()
    return loaded


def lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_the_bundled_yaml_is_at_most_half_the_full_form(packages):
    written = sum(lines(p) for half in ("task_packages", "verifiers") for p in (ROOT / half).rglob("*.yaml"))
    full = sum(len(block_yaml(half).splitlines()) for package in packages for half in in_full(package))
    assert len(packages) == 106
    assert written * 2 <= full, (written, full)


def test_the_full_form_is_the_same_package(packages, tmp_path):
    """What the line count compares against is the very same packages: same models, same hashes."""
    for package in packages:
        again = load_package(write_in_full(package, tmp_path))
        assert (again.public_hash, again.hidden_hash) == (package.public_hash, package.hidden_hash), package.id
        image_files = [f for f in again.public_files if "/ehr_images/" in f]
        assert [f for f in again.public_files if f not in image_files] == ["package.yaml", *package.fixture_hashes]
        assert bool(image_files) == (package.image is not None)


def test_every_case_is_written_as_edits_of_the_gold():
    for suite in SUITES:
        for path in (ROOT / "verifiers" / suite).glob("*.yaml"):
            cases = [c for name in CASE_LISTS for c in read_yaml(path).get(name, [])]
            assert all("edits" in c and "trajectory" not in c for c in cases), path


def defaults_taken(defaults: dict, owns: list[dict]) -> dict[str, int]:
    """Per default (a top-level field, or a key of a mapping field): how many of the packages' own files take it,
    i.e. leave it to the suite."""
    taken = {}
    for key, value in defaults.items():
        paths = [(key, sub) for sub in value] if isinstance(value, dict) else [(key,)]
        for path in paths:
            taken[".".join(path)] = sum(not has(own, path) for own in owns)
    return taken


def has(data: dict, path: tuple) -> bool:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return False
        data = data[key]
    return True


def base_verifiers_taken(defaults: dict, owns: list[dict]) -> dict[str, int]:
    """Per base verifier: how many hidden halves take it as it is (none of their own with its id)."""
    return {
        base["id"]: sum(all(v["id"] != base["id"] for v in own.get("verifiers", [])) for own in owns)
        for base in defaults["verifiers"]
    }


@pytest.mark.parametrize("suite", SUITES)
def test_each_suite_default_is_taken_by_most_of_its_packages(suite):
    folders = [p.parent for p in (ROOT / "task_packages" / suite).glob("*/package.yaml")]
    publics = [read_yaml(f / "package.yaml") for f in folders]
    hiddens = [read_yaml(ROOT / "verifiers" / suite / f"{f.name}.yaml") for f in folders]
    public = defaults_taken(read_yaml(ROOT / "task_packages" / suite / SUITE_FILE), publics)
    hidden = base_verifiers_taken(read_yaml(ROOT / "verifiers" / suite / SUITE_FILE), hiddens)
    assert public and hidden
    for name, count in {**public, **hidden}.items():
        assert count * 2 > len(folders), (suite, name, count)


@pytest.mark.parametrize("suite", SUITES)
def test_no_package_repeats_a_suite_default(suite):
    defaults = read_yaml(ROOT / "task_packages" / suite / SUITE_FILE)
    for path in (ROOT / "task_packages" / suite).glob("*/package.yaml"):
        own = read_yaml(path)
        for key, value in defaults.items():
            if isinstance(value, dict):
                assert all(own.get(key, {}).get(sub, object()) != v for sub, v in value.items()), (path, key)
            else:
                assert own.get(key, object()) != value, (path, key)


def test_a_dead_default_is_seen():
    """The counting the checks above rest on: a default every package overrides, or a base verifier every package
    replaces, is taken by none."""
    owns = [{"budget": {"max_calls": 5}, "tools": ["finish"]}, {"budget": {"max_calls": 7}}]
    assert defaults_taken({"budget": {"max_calls": 20, "max_cost": 0.5}, "tools": ["a"]}, owns) == {
        "budget.max_calls": 0,
        "budget.max_cost": 2,
        "tools": 1,
    }
    hiddens = [{"verifiers": [{"id": "chain"}]}, {"verifiers": [{"id": "chain"}, {"id": "x"}]}]
    assert base_verifiers_taken({"verifiers": [{"id": "chain"}, {"id": "scope"}]}, hiddens) == {"chain": 0, "scope": 2}
