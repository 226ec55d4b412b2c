"""``forge import-synthea``: Synthea's patient bundles (the trimmed real-format fixtures, synthetic) into a named
image that loads as the bundles do, each resource validated, shared ones once, nothing half-written."""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from forge_kernel.cli import main
from forge_kernel.spec import synthea
from forge_kernel.spec.images import find_image
from forge_kernel.spec.loading import MergedEntries, bundle_entries, canonical, resolve_references

SYNTHEA = Path(__file__).resolve().parents[1] / "fixtures" / "realformat" / "synthea"


def forge(*argv: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(argv))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def loaded(paths: list[Path]) -> set[str]:
    """The resources an EHR of these bundles (gzipped or not) holds once loaded, as canonical JSON."""
    merged = MergedEntries()
    for path in paths:
        raw = path.read_bytes()
        text = (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode("utf-8")
        merged.add(bundle_entries(json.loads(text), path), path)
    return {canonical(r) for r in resolve_references(merged.entries)}


@pytest.fixture
def bundles(tmp_path) -> Path:
    folder = tmp_path / "synthea-out"
    shutil.copytree(SYNTHEA, folder)
    return folder


def test_an_import_loads_as_the_bundles_do_with_each_shared_resource_written_once(bundles, tmp_path):
    image = tmp_path / "ehr_images" / "synthea-mini" / "1"
    code, out, err = forge("import-synthea", str(bundles), "--out", str(image))
    assert code == 0, err
    originals = sorted(bundles.glob("*.json"))
    written = sorted(image.glob("*.json.gz"))
    assert loaded(written) == loaded(originals)
    assert [p.name for p in written][-1] == "shared.json.gz" and len(written) == len(originals) + 1
    manifest = yaml.safe_load((image / "image.yaml").read_text(encoding="utf-8"))
    assert (manifest["name"], manifest["version"], manifest["synthetic"]) == ("synthea-mini", "1", True)
    source = manifest["source"]
    assert source["patients"] == 3 and source["dropped"] == []
    assert sum(source["kept"].values()) == len(loaded(originals))
    assert source["merged"]["Organization"] > 0  # every bundle repeats the organizations its patient met
    assert f"kept    {sum(source['kept'].values()):,} resource(s)" in out and "dropped 0" in out


def test_a_draw_of_patients_is_the_same_for_the_same_seed(bundles, tmp_path):
    def drawn(seed: int, name: str) -> list[str]:
        image = tmp_path / name / "1"
        assert (
            forge("import-synthea", str(bundles), "--out", str(image), "--patients", "2", "--seed", str(seed))[0] == 0
        )
        return yaml.safe_load((image / "image.yaml").read_text(encoding="utf-8"))["source"]["patients"], sorted(
            p.name for p in image.glob("patient-*")
        )

    first = drawn(1, "a")
    assert first == drawn(1, "b") and first[0] == 2 and len(first[1]) == 2


def invalidate_an_observation(folder: Path) -> str:
    """An Observation of the first bundle given a date that is no date; its ``Type/id``."""
    path = sorted(folder.glob("*.json"))[0]
    bundle = json.loads(path.read_text(encoding="utf-8"))
    resource = next(e["resource"] for e in bundle["entry"] if e["resource"]["resourceType"] == "Observation")
    resource["effectiveDateTime"] = "yesterday"
    path.write_text(json.dumps(bundle), encoding="utf-8")
    return f"Observation/{resource['id']}"


def test_a_resource_that_is_not_valid_fhir_is_dropped_and_named(bundles, tmp_path):
    bad = invalidate_an_observation(bundles)
    image = tmp_path / "ehr_images" / "x" / "1"
    code, out, _ = forge("import-synthea", str(bundles), "--out", str(image))
    assert code == 0
    assert "dropped 1 resource(s)" in out and f"  {bad}: effectiveDateTime" in out
    kept = [json.loads(r) for r in loaded(sorted(image.glob("*.gz")))]
    assert bad not in {f"{r['resourceType']}/{r['id']}" for r in kept}


def test_without_validation_the_invalid_resource_would_be_kept(bundles, tmp_path, monkeypatch):
    """The mechanism broken: the test above fails when resources are not validated."""
    invalidate_an_observation(bundles)
    monkeypatch.setattr(synthea, "invalid", lambda resource: None)
    _, out, _ = forge("import-synthea", str(bundles), "--out", str(tmp_path / "x" / "1"))
    assert "dropped 0" in out


def organizations(path: Path) -> dict[str, dict]:
    bundle = json.loads(path.read_text(encoding="utf-8"))
    return {
        e["resource"]["id"]: e["resource"] for e in bundle["entry"] if e["resource"]["resourceType"] == "Organization"
    }


def test_a_shared_resource_that_differs_between_bundles_stops_the_import_and_writes_nothing(bundles, tmp_path):
    first, last = sorted(bundles.glob("*.json"))[0], sorted(bundles.glob("*.json"))[-1]
    bundle = json.loads(last.read_text(encoding="utf-8"))
    shared = set(organizations(first)) & set(organizations(last))
    organization = next(e["resource"] for e in bundle["entry"] if e["resource"]["id"] in shared)
    organization["name"] = "another name"
    last.write_text(json.dumps(bundle), encoding="utf-8")
    image = tmp_path / "ehr_images" / "x" / "1"
    code, _, err = forge("import-synthea", str(bundles), "--out", str(image))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert last.name in err and f"Organization/{organization['id']} differs from the one in" in err
    assert not image.exists() and list(image.parent.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--patients", "4"], "--patients: asks for 4, the folder has 3 patient bundle(s)"),
        (["--patients", "0"], "--patients"),
    ],
)
def test_a_bad_request_is_one_line_exit_2(bundles, tmp_path, args, message):
    code, _, err = forge("import-synthea", str(bundles), "--out", str(tmp_path / "x" / "1"), *args)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_an_empty_folder_or_a_used_image_folder_is_refused(tmp_path, bundles):
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = forge("import-synthea", str(empty), "--out", str(tmp_path / "x" / "1"))
    assert code == 2 and "holds no FHIR Bundle" in err
    used = tmp_path / "used" / "1"
    used.mkdir(parents=True)
    (used / "image.yaml").write_text("name: used\n", encoding="utf-8")
    code, _, err = forge("import-synthea", str(bundles), "--out", str(used))
    assert code == 2 and "--out: exists and is not empty" in err


def test_an_imported_image_is_one_that_packages_can_name(bundles, tmp_path):
    image = tmp_path / "suite" / "ehr_images" / "synthea-mini" / "1"
    assert forge("import-synthea", str(bundles), "--out", str(image))[0] == 0
    package = tmp_path / "suite" / "pkg"
    package.mkdir()
    found = find_image(
        package, "synthea-mini", "1", lambda rel: os.listdir(package / rel), lambda rel: (package / rel).read_bytes()
    )
    assert found is not None
    shared, _ = found
    assert shared.manifest.source["patients"] == 3
    assert {canonical(r) for r in shared.resources} == {
        canonical(r) for r in map(json.loads, loaded(sorted(bundles.glob("*.json"))))
    }
