"""``forge import-synthea``: a named EHR image written from Synthea's FHIR R4 patient bundles (synthetic data).

Synthea writes one transaction Bundle per patient, each repeating the Practitioners, Organizations and Locations
the patient met. The import picks the patients (all, or ``patients`` of them drawn with ``seed``), validates every
resource with fhir.resources R4B, keeps the valid ones as they are (references as written: forge resolves them on
load), writes the shared resources once, and says what it kept, merged and dropped. The image folder
(``ehr_images/<name>/<version>/``) holds ``image.yaml`` and one gzipped Bundle per patient plus ``shared.json.gz``.
"""

from __future__ import annotations

import gzip
import json
import random
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError
from tqdm.auto import tqdm

from .errors import SpecError
from .loading import Entry, MergedEntries, bundle_entries, read_json

SHARED = "shared.json.gz"
"""The bundle of the resources that belong to no one patient (practitioners, organizations, locations)."""
SHARED_TYPES = frozenset({"Practitioner", "PractitionerRole", "Organization", "Location"})
"""The types Synthea repeats in every patient's bundle: written once, in ``SHARED``."""


@dataclass
class ImportReport:
    """What an import kept, merged and dropped."""

    patients: list[str] = field(default_factory=list)
    """The ids of the patients imported, in file order."""
    kept: Counter[str] = field(default_factory=Counter)
    """Resources written, by type."""
    merged: Counter[str] = field(default_factory=Counter)
    """Identical copies of a shared resource written once, by type."""
    dropped: list[str] = field(default_factory=list)
    """``Type/id: why`` of each resource left out (it is not valid FHIR R4)."""

    def as_data(self) -> dict[str, Any]:
        return {
            "patients": len(self.patients),
            "kept": dict(sorted(self.kept.items())),
            "merged": dict(sorted(self.merged.items())),
            "dropped": self.dropped,
        }


def bundles_in(folder: Path) -> tuple[list[tuple[Path, str]], list[Path]]:
    """The Synthea bundles in a folder, by file name: (file, patient id) of each patient's bundle (one Patient),
    and the others (Synthea's hospital and practitioner information: shared by every patient)."""
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if not files:
        raise SpecError(folder, "(folder)", "holds no FHIR Bundle (*.json)")
    patients, others = [], []
    for path in files:
        bundle = read_json(path)
        entries = bundle.get("entry") if isinstance(bundle, dict) else None
        found = [e["resource"]["id"] for e in entries or [] if e.get("resource", {}).get("resourceType") == "Patient"]
        if len(found) == 1:
            patients.append((path, found[0]))
        else:
            others.append(path)
    if not patients:
        raise SpecError(folder, "(folder)", "holds no patient bundle (a Bundle with one Patient)")
    return patients, others


def chosen(found: list[tuple[Path, str]], patients: int | None, seed: int, folder: Path) -> list[tuple[Path, str]]:
    """All the patient bundles, or ``patients`` of them drawn with ``seed`` (in file order)."""
    if patients is None:
        return found
    if not 1 <= patients <= len(found):
        raise SpecError(folder, "--patients", f"asks for {patients}, the folder has {len(found)} patient bundle(s)")
    picked = set(random.Random(seed).sample(range(len(found)), patients))
    return [bundle for i, bundle in enumerate(found) if i in picked]


def invalid(resource: dict[str, Any]) -> str | None:
    """Why a resource is not valid FHIR R4 (its first error, ``field: message``), or None."""
    from fhir.resources.R4B import get_fhir_model_class  # slow import: only when importing

    try:
        get_fhir_model_class(resource["resourceType"]).model_validate(resource)
    except (ValidationError, KeyError, ValueError) as exc:
        errors = exc.errors() if isinstance(exc, ValidationError) else []
        if errors:
            return f"{'.'.join(map(str, errors[0]['loc'])) or '(resource)'}: {errors[0]['msg']}"
        return f"(resource): {exc}"
    return None


def write_bundle(path: Path, entries: Iterable[Entry]) -> None:
    """A collection Bundle of the entries, as compact gzipped JSON (the same bytes for the same entries)."""
    bundle = {
        "resourceType": "Bundle",
        "type": "collection",
        "entry": [{"fullUrl": url, "resource": r} if url else {"resource": r} for url, r in entries],
    }
    text = json.dumps(bundle, ensure_ascii=False, separators=(",", ":"))
    path.write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))


def import_synthea(folder: Path, out: Path, patients: int | None = None, seed: int = 0) -> ImportReport:
    """Write the image ``out`` (``.../<name>/<version>``) from the Synthea bundles in ``folder`` (see the module)."""
    if out.exists() and any(out.iterdir()):
        raise SpecError(out, "--out", "exists and is not empty: choose a new version folder")
    patients_found, others = bundles_in(folder)
    picked = chosen(patients_found, patients, seed, folder)
    report, merged, shared = ImportReport(), MergedEntries(), list[Entry]()
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))  # renamed to ``out`` when whole
    partial.chmod(0o755)
    try:
        for path, patient in tqdm([*((p, None) for p in others), *picked], desc="import", unit="bundle", disable=None):
            entries = bundle_entries(read_json(path), path)
            before = len(merged.entries)
            merged.add(entries, path)  # a resource given again with other content: a SpecError naming both files
            new = merged.entries[before:]
            first = {id(r) for _, r in new}
            report.merged.update(r["resourceType"] for _, r in entries if id(r) not in first)
            own: list[Entry] = []
            for url, resource in new:
                why = invalid(resource)
                if why:
                    report.dropped.append(f"{resource['resourceType']}/{resource['id']}: {why}")
                    continue
                report.kept[resource["resourceType"]] += 1
                mine = patient is not None and resource["resourceType"] not in SHARED_TYPES
                (own if mine else shared).append((url, resource))
            if patient is not None:
                report.patients.append(patient)
                write_bundle(partial / f"patient-{patient}.json.gz", own)
        write_bundle(partial / SHARED, shared)
        write_manifest(partial, out, seed, report)
        if out.exists():
            out.rmdir()  # empty: checked above
        partial.rename(out)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return report


def write_manifest(folder: Path, image: Path, seed: int, report: ImportReport) -> None:
    """``image.yaml``: the image's name and version (its folder's names), what it is, and the import's report."""
    manifest = {
        "name": image.parent.name,
        "version": image.name,
        "description": f"{len(report.patients)} Synthea patient(s), imported by forge import-synthea",
        "synthetic": True,
        "source": {"generator": "Synthea (FHIR R4 patient bundles)", "seed": seed, **report.as_data()},
    }
    (folder / "image.yaml").write_text(yaml.safe_dump(manifest, allow_unicode=True, sort_keys=False), encoding="utf-8")
