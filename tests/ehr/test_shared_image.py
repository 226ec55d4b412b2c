"""One shared image's records are indexed once and layered under every package's own: the clock clips per package,
an overlay merges in at look-up (synthetic data only)."""

from __future__ import annotations

import pytest

from forge_kernel.ehr import EHRImage, EHRView, image as image_module
from forge_kernel.spec import load_package
from tests.helpers import image_package, image_patients, write_image

EARLY, LATE = "2025-06-01T00:00:00+00:00", "2026-12-01T00:00:00+00:00"


def initial(package) -> EHRImage:
    return EHRImage(package.resources, package.public.environment.now, package.image)


@pytest.fixture
def packages(tmp_path):
    write_image(tmp_path)
    patient = image_patients()[0]
    return [load_package(image_package(tmp_path, f"IMG-{i}", patient, now=now)) for i, now in enumerate([EARLY, LATE])]


def test_packages_on_one_image_share_its_records_and_its_dict(packages):
    early, late = map(initial, packages)
    assert early.layers[0] is late.layers[0]
    assert early.resources is late.resources  # no overlay: the image's own dict, not a copy


def test_without_the_cache_each_package_indexes_the_image_again(packages, monkeypatch):
    """The sharing above rests on the cache of records by image and time zone."""
    monkeypatch.setattr(image_module, "_SHARED", type("Forgetful", (dict,), {"setdefault": lambda self, k, d: d})())
    early, late = map(initial, packages)
    assert early.layers[0] is not late.layers[0]


def test_each_package_sees_its_image_up_to_its_own_clock(packages):
    patient = packages[0].public.environment.patient_id
    early, late = map(initial, packages)
    seen = {}
    for name, image in (("early", early), ("late", late)):
        found = EHRView(image).search(patient, "Observation")
        assert all(image.time((r["resourceType"], r["id"])) <= image.now.timestamp() for r in found)
        seen[name] = len(found)
    assert 0 < seen["early"] < seen["late"]
    key = next(k for k in late.keys_for(patient, "Observation") if late.time(k) > early.now.timestamp())
    assert key in early.future and key not in late.future


def test_an_overlay_is_merged_into_the_image_in_time_order_and_found_by_code(tmp_path):
    write_image(tmp_path)
    patient = image_patients()[0]
    own = {
        "resourceType": "Observation",
        "id": "own-creatinine",
        "status": "final",
        "code": {"coding": [{"system": "http://loinc.org", "code": "2160-0", "display": "Creatinine"}]},
        "subject": {"reference": f"Patient/{patient}"},
        "effectiveDateTime": "2018-03-01T08:00:00+00:00",
        "valueQuantity": {"value": 1.1, "unit": "mg/dL"},
    }
    package = load_package(image_package(tmp_path, "IMG-O", patient, now=LATE, overlay=[own]))
    image = initial(package)
    plain = initial(load_package(image_package(tmp_path, "IMG-P", patient, now=LATE)))
    key = ("Observation", "own-creatinine")
    assert image.resources[key] is package.resources[0] and key not in plain.resources
    assert len(image.resources) == len(plain.resources) + 1
    keys = list(image.keys_for(patient, "Observation"))
    assert keys == [k for _, k in sorted((image.time(k), k) for k in keys)] and key in keys
    assert key in set(image.keys_for(patient, "Observation", code="creatinine"))
    assert image.layers[0] is plain.layers[0]  # the overlay did not copy the image
