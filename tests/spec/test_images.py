"""Shared EHR images: named, versioned, read once per process for every package that names them; a package's
fixtures are an overlay on top (synthetic data only)."""

from __future__ import annotations

import json

import pytest

from forge_kernel.spec import SpecError, images as images_module, load_package
from tests.helpers import SYNTHEA_BUNDLES, image_package, image_patients, write_image


@pytest.fixture
def root(tmp_path):
    write_image(tmp_path)
    return tmp_path


def counted_parses(monkeypatch) -> list[str]:
    """The folders ``parse_image`` is called for, from now on."""
    seen: list[str] = []
    parse = images_module.parse_image

    def counting(where, contents, digest):
        seen.append(str(where))
        return parse(where, contents, digest)

    monkeypatch.setattr(images_module, "parse_image", counting)
    return seen


def two_packages(root):
    first, second = image_patients()[:2]
    return (
        load_package(image_package(root, "IMG-A", first)),
        load_package(image_package(root, "IMG-B", second, now="2020-01-01T00:00:00+08:00")),
    )


def test_two_packages_naming_one_image_share_it_and_read_it_once(root, monkeypatch):
    parses = counted_parses(monkeypatch)
    a, b = two_packages(root)
    assert a.image is not None and a.image is b.image
    assert parses == [str((root / "ehr_images" / "rf" / "1").resolve())]
    assert a.resources == [] and len(a.image_resources) > 100
    kinds = {r["resourceType"] for r in a.image_resources}
    assert {"Patient", "Observation", "Practitioner"} <= kinds
    assert any(f.endswith("ehr_images/rf/1/patient-1.json.gz") for f in a.public_files)  # a run store keeps it


def test_without_the_cache_every_package_reads_the_image_again(root, monkeypatch):
    """The sharing above rests on the cache: a cache that keeps nothing gives each package its own copy."""

    class Forgetful(dict):
        def __setitem__(self, key, value):
            pass

    monkeypatch.setattr(images_module, "_LOADED", Forgetful())
    parses = counted_parses(monkeypatch)
    a, b = two_packages(root)
    assert a.image is not b.image and len(parses) == 2


def test_references_of_the_image_are_resolved_and_shared_resources_kept_once(root):
    package, _ = two_packages(root)
    keys = [(r["resourceType"], r["id"]) for r in package.image_resources]
    assert len(keys) == len(set(keys))
    observations = [r for r in package.image_resources if r["resourceType"] == "Observation"]
    assert observations and all(r["subject"]["reference"].startswith("Patient/") for r in observations)


def observation(rid: str, patient: str, when: str = "2026-01-02T08:00:00+00:00") -> dict:
    return {
        "resourceType": "Observation",
        "id": rid,
        "status": "final",
        "code": {"coding": [{"system": "http://loinc.org", "code": "2160-0", "display": "Creatinine"}]},
        "subject": {"reference": f"Patient/{patient}"},
        "effectiveDateTime": when,
        "valueQuantity": {"value": 1.1, "unit": "mg/dL"},
    }


def test_an_overlay_adds_its_resources_and_an_identical_copy_of_an_image_resource_is_taken(root):
    patient = image_patients()[0]
    shared = json.loads(SYNTHEA_BUNDLES[1].read_text(encoding="utf-8"))["entry"][0]["resource"]
    package = load_package(image_package(root, "IMG-O", patient, overlay=[observation("own-1", patient), shared]))
    assert [r["id"] for r in package.resources] == ["own-1"]


def test_an_overlay_resource_that_differs_from_the_image_is_refused_naming_both_files(root):
    patient = image_patients()[0]
    shared = json.loads(SYNTHEA_BUNDLES[1].read_text(encoding="utf-8"))["entry"][0]["resource"]
    changed = {**shared, "gender": "other" if shared.get("gender") != "other" else "male"}
    with pytest.raises(SpecError) as err:
        load_package(image_package(root, "IMG-C", patient, overlay=[changed]))
    assert "overlay.json" in err.value.file and SYNTHEA_BUNDLES[1].name in err.value.message


def test_an_overlay_reference_written_as_the_image_wrote_it_is_resolved(root):
    patient = image_patients()[0]
    written = observation("own-2", patient) | {"subject": {"reference": f"urn:uuid:{patient}"}}
    package = load_package(image_package(root, "IMG-U", patient, overlay=[written]))
    assert package.resources[0]["subject"]["reference"] == f"Patient/{patient}"


def test_a_changed_image_file_changes_the_hash_of_every_package_on_it(root):
    a, b = two_packages(root)
    before = (a.public_hash, b.public_hash)
    (root / "ehr_images" / "rf" / "1" / "image.yaml").write_text(
        "name: rf\nversion: '1'\ndescription: three synthetic patients, described again\nsynthetic: true\n",
        encoding="utf-8",
    )
    again = [load_package(a.path), load_package(b.path)]
    assert again[0].public_hash not in before and again[1].public_hash not in before
    assert again[0].image is again[1].image and again[0].image is not a.image


def test_no_fixtures_and_no_image_is_one_error_naming_the_file_and_field(tmp_path):
    folder = image_package(tmp_path, "IMG-N", "p1", image="missing")
    with pytest.raises(SpecError) as err:
        load_package(folder)
    assert err.value.field == "environment.fixtures" and err.value.file.endswith("package.yaml")
    assert "ehr_images/missing/1" in err.value.message


def test_an_image_manifest_must_say_it_is_synthetic(root):
    (root / "ehr_images" / "rf" / "1" / "image.yaml").write_text(
        "name: rf\nversion: '1'\ndescription: x\nsynthetic: false\n", encoding="utf-8"
    )
    with pytest.raises(SpecError) as err:
        two_packages(root)
    assert err.value.field == "synthetic"
