"""A run over packages that name one shared EHR image: indexed once, kept in the run store, validated with every
problem reported (synthetic data only)."""

from __future__ import annotations

import asyncio
import shutil

from click.testing import CliRunner

from forge_kernel.cli import main
from forge_kernel.ehr import image as image_module
from forge_kernel.engine import Images, RunSpec, execute, package_problems
from forge_kernel.spec import load_package
from forge_kernel.store import Run
from tests.helpers import image_package, image_patients, write_image


def test_a_run_indexes_the_image_once_and_its_store_keeps_it(tmp_path, monkeypatch):
    write_image(tmp_path)
    first, second = image_patients()[:2]
    folders = [image_package(tmp_path, "IMG-A", first), image_package(tmp_path, "IMG-B", second)]
    built = []
    records = image_module.Records

    def counting(resources, tz):
        made = records(resources, tz)
        built.append(len(made.resources))
        return made

    monkeypatch.setattr(image_module, "Records", counting)
    spec = RunSpec(suite=[str(f) for f in folders], agents=["baseline-v1"], trials=1)
    outcome = asyncio.run(execute(spec, tmp_path / "run", progress=False))
    assert outcome is not None
    assert len([n for n in built if n > 100]) == 1  # the image, once; each package's (empty) overlay is tiny
    expected = load_package(folders[1]).public_hash
    shutil.rmtree(tmp_path / "ehr_images")  # the store alone holds what the run read
    with Run(tmp_path / "run") as run:
        package = run.package("IMG-B")
        assert package.image is not None and package.public_hash == expected
        assert ("Patient", second) in run.image("IMG-B").resources


def test_images_hand_every_package_its_own_clock_over_one_shared_index(tmp_path):
    write_image(tmp_path)
    patient = image_patients()[0]
    early, late = (
        load_package(image_package(tmp_path, f"IMG-{i}", patient, now=now))
        for i, now in enumerate(["2025-06-01T00:00:00+00:00", "2026-12-01T00:00:00+00:00"])
    )
    images = Images()
    assert images[early] is not images[late] and images[early].layers[0] is images[late].layers[0]
    assert images[early].now < images[late].now


def test_validate_refuses_a_patient_without_records_and_reports_every_problem(tmp_path):
    write_image(tmp_path)
    folder = image_package(tmp_path, "IMG-V", image_patients()[0])
    assert package_problems(folder)[1] == []
    empty = {"resourceType": "Patient", "id": "nobody", "name": [{"family": "Synthetic"}]}
    lonely = image_package(tmp_path, "IMG-E", "nobody", overlay=[empty])
    manifest = lonely / "package.yaml"
    manifest.write_text(manifest.read_text(encoding="utf-8").replace("- finish", "- finish\n- no_such_tool"))
    _, problems = package_problems(lonely)
    assert {p.field for p in problems} == {"tools.3", "environment.patient_id"}
    assert "no clinical records" in next(p.message for p in problems if p.field == "environment.patient_id")
    result = CliRunner().invoke(main, ["validate", str(tmp_path / "task_packages")])
    assert result.exit_code == 2
    assert "ok    IMG-V" in result.output and "no_such_tool" in result.output and "no clinical records" in result.output
