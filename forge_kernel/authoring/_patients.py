"""The synthetic patients of the bundled packages, to start a new package on one of them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ..ehr import patient_of, summarize, time_of
from ..spec import SpecError, bundle_resources, load_package, read_json, validate_fixture

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
    parts = [name.get("family", ""), *name.get("given", [])]
    written = " ".join([*parts[1:], parts[0]]) if "".join(parts).isascii() else "".join(parts)  # 李秀英, Jane Doe
    return name.get("text") or written.strip(), mrn


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


def patient_from_bundle(path: str | Path, patient_id: str | None = None) -> PatientFixture:
    """The patient of a FHIR R4 Bundle file (e.g. one of Synthea's, synthetic), checked as the loader checks a
    fixture: JSON, FHIR R4, every resource typed and identified once, references resolved. ``patient_id`` picks
    one of several patients (the first by default). A bad file is a SpecError naming the file and the field."""
    path = Path(path)
    resources = bundle_resources(read_json(path), path)
    validate_fixture(path)
    patients = [r for r in resources if r["resourceType"] == "Patient"]
    patient = next((r for r in patients if patient_id in (None, r["id"])), None)
    if patient is None:
        wanted = f"no Patient {patient_id}" if patient_id else "no Patient resource"
        raise SpecError(path, "entry", f"{wanted}: a task is about one patient of the bundle")
    return PatientFixture(
        path.name,
        path,
        patient["id"],
        *name_and_mrn(patient),
        patient.get("gender", ""),
        patient.get("birthDate", ""),
        imported_environment(resources),
    )


IMPORTED_IMAGE = "imported-fhir-bundle"
"""The EHR image name a package on an imported Bundle gives (its fixture holds the records)."""


def imported_environment(resources: list[dict]) -> dict:
    """EHR settings for an imported Bundle: the frozen clock a day after its latest record (its dates stay
    recent), at UTC."""
    times = [t for r in resources if r["resourceType"] != "Patient" for t in [time_of(r)] if t is not None]
    latest = datetime.fromtimestamp(max(times), UTC) if times else datetime(2026, 1, 1, tzinfo=UTC)
    now = (latest + timedelta(days=1)).replace(hour=9, minute=0, second=0, microsecond=0)
    return {"ehr_image": IMPORTED_IMAGE, "ehr_version": "1", "now": now.isoformat()}
