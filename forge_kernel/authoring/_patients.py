"""The synthetic patients of the bundled packages, to start a new package on one of them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..ehr import patient_of, summarize
from ..spec import bundle_resources, load_package, read_json

BUNDLED = Path(__file__).resolve().parents[2] / "task_packages"
"""The bundled packages (of this checkout), whose patients a new package can start from."""


@dataclass(frozen=True)
class PatientFixture:
    """A bundled package's fixture and the patient its task is about (all synthetic)."""

    package_id: str
    fixture: Path
    patient_id: str
    name: str
    mrn: str
    sex: str
    birth_date: str
    environment: dict
    """The source package's EHR settings (image, version, frozen clock): the fixture's dates are relative to it."""

    @property
    def label(self) -> str:
        """How a picker shows it: ``李秀英 · female · 1968-03-02 · MRN SC-0101 (SC-MED-GASTRIC-ULCER)``."""
        return f"{self.name} · {self.sex} · {self.birth_date} · MRN {self.mrn} ({self.package_id})"

    def bundle(self) -> dict:
        return read_json(self.fixture)

    def others(self) -> list[str]:
        """The other patients of the same fixture, as ``name (MRN ...)``: patient scope keeps the agent from them."""
        patients = [
            r
            for r in bundle_resources(self.bundle(), self.fixture)
            if r["resourceType"] == "Patient" and r["id"] != self.patient_id
        ]
        return ["{} (MRN {})".format(*name_and_mrn(r)) for r in patients]

    def records(self) -> list[dict]:
        """The patient's own records, summarized (type, name, time, value, status)."""
        return [
            summarize(r)
            for r in bundle_resources(self.bundle(), self.fixture)
            if r["resourceType"] != "Patient" and patient_of(r) == self.patient_id
        ]


def name_and_mrn(patient: dict) -> tuple[str, str]:
    """A Patient resource's display name and first identifier."""
    name = (patient.get("name") or [{}])[0]
    mrn = next((i.get("value", "") for i in patient.get("identifier", [])), "")
    return name.get("text") or name.get("family", "") + "".join(name.get("given", [])), mrn


def bundled_patients(task_root: str | Path = BUNDLED) -> list[PatientFixture]:
    """The current patient of every package under ``task_root`` with one fixture and no shared image, in package
    order."""
    out = []
    for manifest in sorted(Path(task_root).glob("*/*/package.yaml")):
        package = load_package(manifest.parent)
        env = package.public.environment
        if package.image is not None or len(env.fixtures) != 1:
            continue  # a patient of a shared image has no fixture of its own to start from
        patient = next(r for r in package.resources if r["resourceType"] == "Patient" and r["id"] == env.patient_id)
        out.append(
            PatientFixture(
                package.id,
                package.path / env.fixtures[0],
                env.patient_id,
                *name_and_mrn(patient),
                patient.get("gender", ""),
                patient.get("birthDate", ""),
                env.model_dump(mode="json", include={"ehr_image", "ehr_version", "now"}),
            )
        )
    return out
