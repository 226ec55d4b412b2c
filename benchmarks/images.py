"""Benchmark 13: a suite of packages over one shared EHR image against the same packages each with its own copy of
the records (SYNTHETIC data only, generated here and never committed).

    .venv/bin/python benchmarks/images.py            # 30/100/300 packages over one image; writes RESULTS.md §13
    .venv/bin/python benchmarks/images.py --quick    # a smaller image and fewer packages; writes nothing

A generator writes a synthetic image of about 30,000 resources (patients with Encounters, Observations, Conditions
and MedicationRequests, Synthea-style: one bundle per patient, ``urn:uuid:`` references, a Practitioner and an
Organization every bundle repeats) as ``ehr_images/bench-synthetic/1/`` (gzip), and packages that name it, each
with another current patient and clock and no fixtures of its own. The baseline is the old way: the same packages,
each listing the image's bundles (uncompressed, hard links) as its own fixtures. Each measurement runs in a fresh
process: load the suite (``find_packages`` + ``load_package``, as ``forge run`` does) and build every package's
initial EHR (``engine.Images``), then read each package's patient once through a view (the clock clip); figures:
peak RSS, seconds to load and to build. The old way is measured at a few packages only (it takes about the image's
size in memory per package) and its figure at 300 is the line through them. Goal: 300 packages under 1 GB and 30 s;
memory grows with the number of images, not of packages. Then a ``forge run`` of a reference agent over three of
the packages, and the look-up of ``EHRImage.resources`` over a package overlay (``Layered``) against a dict and
a ``collections.ChainMap``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import uuid
from collections import ChainMap
from pathlib import Path
from time import perf_counter

from results import PROCESS_ENV, ROOT, calibration, git_state, write_section

IMAGE, VERSION = "bench-synthetic", "1"
SUITE = "bench-images"
PER_PATIENT = {"Encounter": 10, "Observation": 60, "Condition": 14, "MedicationRequest": 15}
"""Records of each patient besides the Patient: 100 resources a patient."""
LABS = [
    ("8480-6", "Systolic blood pressure", "mm[Hg]", 110, 160),
    ("8867-4", "Heart rate", "/min", 55, 110),
    ("718-7", "Hemoglobin [Mass/volume] in Blood", "g/dL", 10, 17),
    ("2160-0", "Creatinine [Mass/volume] in Serum or Plasma", "mg/dL", 0.6, 2.0),
    ("4548-4", "Hemoglobin A1c/Hemoglobin.total in Blood", "%", 5, 9),
    ("2823-3", "Potassium [Moles/volume] in Serum or Plasma", "mmol/L", 3.2, 5.5),
]
CONDITIONS = [
    ("44054006", "Diabetes mellitus type 2"),
    ("38341003", "Hypertensive disorder"),
    ("195662009", "Acute viral pharyngitis"),
]
DRUGS = [
    ("314076", "lisinopril 10 MG Oral Tablet"),
    ("860975", "metformin 500 MG Oral Tablet"),
    ("197361", "amlodipine 5 MG Oral Tablet"),
]
READ_TOOLS = ["patient_detail", "vital_signs", "lab_results", "record_search"]


# ---------------------------------------------------------------------------------------------------- the data


def stamp(rng: random.Random) -> str:
    """A time between 2021 and the end of 2026."""
    return f"{rng.randint(2021, 2026)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:00:00+00:00"


def patient_bundle(rng: random.Random, index: int, shared: list[dict]) -> dict:
    """One synthetic patient's bundle, Synthea-style (``urn:uuid:`` references, shared resources repeated)."""
    entries: list[dict] = [{"fullUrl": f"urn:uuid:{r['id']}", "resource": r} for r in shared]
    pid = str(uuid.UUID(int=rng.getrandbits(128)))
    subject = {"reference": f"urn:uuid:{pid}"}
    practitioner = {"reference": f"urn:uuid:{shared[0]['id']}"}
    patient = {
        "resourceType": "Patient",
        "id": pid,
        "meta": {"tag": [{"code": "SYNTHETIC"}]},
        "identifier": [{"type": {"coding": [{"code": "MR"}]}, "system": "urn:bench:mrn", "value": f"MRN-{index:05d}"}],
        "name": [{"family": f"Synthetic{index}", "given": ["Test"]}],
        "gender": rng.choice(["female", "male"]),
        "birthDate": f"{rng.randint(1940, 2000)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}",
    }
    entries.append({"fullUrl": f"urn:uuid:{pid}", "resource": patient})

    def add(rtype: str, body: dict) -> str:
        rid = str(uuid.UUID(int=rng.getrandbits(128)))
        entries.append({"fullUrl": f"urn:uuid:{rid}", "resource": {"resourceType": rtype, "id": rid, **body}})
        return rid

    encounters = [
        add(
            "Encounter",
            {
                "status": "finished",
                "class": {"code": "AMB"},
                "subject": subject,
                "participant": [{"individual": practitioner}],
                "period": {"start": stamp(rng)},
            },
        )
        for _ in range(PER_PATIENT["Encounter"])
    ]
    for _ in range(PER_PATIENT["Observation"]):
        code, name, unit, low, high = rng.choice(LABS)
        add("Observation", {
            "status": "final",
            "category": [{"coding": [{"code": "vital-signs" if unit in ("mm[Hg]", "/min") else "laboratory"}]}],
            "code": {"coding": [{"system": "http://loinc.org", "code": code, "display": name}], "text": name},
            "subject": subject, "encounter": {"reference": f"urn:uuid:{rng.choice(encounters)}"},
            "effectiveDateTime": stamp(rng),
            "valueQuantity": {"value": round(rng.uniform(low, high), 1), "unit": unit},
        })  # fmt: skip
    for _ in range(PER_PATIENT["Condition"]):
        code, name = rng.choice(CONDITIONS)
        add("Condition", {"code": {"coding": [{"system": "http://snomed.info/sct", "code": code, "display": name}]},
                          "subject": subject, "onsetDateTime": stamp(rng)})  # fmt: skip
    for _ in range(PER_PATIENT["MedicationRequest"]):
        code, name = rng.choice(DRUGS)
        add("MedicationRequest", {
            "status": "active", "intent": "order", "subject": subject, "requester": practitioner,
            "medicationCodeableConcept": {"coding": [{"system": "http://www.nlm.nih.gov/research/umls/rxnorm",
                                                      "code": code, "display": name}]},
            "authoredOn": stamp(rng),
        })  # fmt: skip
    return {"resourceType": "Bundle", "type": "transaction", "entry": entries}


def write_image(root: Path, patients: int, seed: int = 0) -> tuple[list[Path], list[str]]:
    """The image folder (gzip bundles) and the same bundles uncompressed for the baseline; returns the plain
    bundles and the patient ids."""
    rng = random.Random(seed)
    shared = [
        {"resourceType": "Practitioner", "id": "bench-practitioner", "name": [{"family": "Synthetic"}]},
        {"resourceType": "Organization", "id": "bench-organization", "name": "Synthetic Clinic"},
    ]
    folder = root / "ehr_images" / IMAGE / VERSION
    plain = root / "plain"
    folder.mkdir(parents=True)
    plain.mkdir()
    (folder / "image.yaml").write_text(
        f"name: {IMAGE}\nversion: '{VERSION}'\ndescription: SYNTHETIC benchmark image, {patients} patients\n"
        "synthetic: true\nsource: benchmarks/images.py\n",
        encoding="utf-8",
    )
    bundles, ids = [], []
    for index in range(patients):
        bundle = patient_bundle(rng, index, shared)
        ids.append(next(e["resource"]["id"] for e in bundle["entry"] if e["resource"]["resourceType"] == "Patient"))
        text = json.dumps(bundle, separators=(",", ":"))
        name = f"patient-{index:05d}.json"
        (folder / f"{name}.gz").write_bytes(gzip.compress(text.encode(), 6))
        (plain / name).write_text(text, encoding="utf-8")
        bundles.append(plain / name)
    return bundles, ids


def write_suite(root: Path, count: int, ids: list[str], bundles: list[Path] | None) -> Path:
    """``count`` packages over the image (``bundles`` None) or each over its own copy of the bundles (hard links),
    their hidden halves asking only for a finish; returns the suite's package folder."""
    suite = root / "task_packages" / SUITE
    for i in range(count):
        folder = suite / f"BI-{i:04d}"
        (folder / "fixtures").mkdir(parents=True)
        for path in bundles or []:
            os.link(path, folder / "fixtures" / path.name)
        public = {
            "id": f"BI-{i:04d}",
            "version": "1",
            "title": "read a synthetic chart",
            "suite": SUITE,
            "category": "information_retrieval",
            "environment": {
                "ehr_image": IMAGE if bundles is None else "bench-copied",
                "ehr_version": VERSION,
                "fixtures": [f"fixtures/{p.name}" for p in bundles or []],
                "now": f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}T09:00:00+00:00",
                "patient_id": ids[i % len(ids)],
            },
            "task": {
                "instruction": {"zh": "查看病历（合成数据）", "en": "Read the chart (synthetic)"},
                "language": "en",
            },
            "tools": [*READ_TOOLS, "finish"],
        }
        (folder / "package.yaml").write_text(json.dumps(public, ensure_ascii=False), encoding="utf-8")
        hidden = {
            "id": public["id"],
            "version": "1",
            "expected_tools": ["finish"],
            "verifiers": [
                {"id": "done", "kind": "trace.events", "category": "trace",
                 "params": {"rules": [{"require": {"tool": "finish"}, "reason": "the task ends with finish"}]}}
            ],
            "gold": {"answer": "done", "calls": [{"tool": "finish", "args": {"summary": "done"}}]},
        }  # fmt: skip
        verifiers = root / "verifiers" / SUITE
        verifiers.mkdir(parents=True, exist_ok=True)
        (verifiers / f"{public['id']}.yaml").write_text(json.dumps(hidden), encoding="utf-8")
    return suite


# ---------------------------------------------------------------------------------------------------- measuring


def measure(suite: Path) -> dict:
    """In this (fresh) process: load the suite, build every package's EHR and read each patient once."""
    from forge_kernel.ehr import EHRView
    from forge_kernel.engine import Images
    from forge_kernel.spec import find_packages, load_package

    imported = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = perf_counter()
    packages = [load_package(folder) for folder in find_packages([suite])]
    loaded = perf_counter()
    images = Images()
    built = [images[p] for p in packages]
    ready = perf_counter()
    shown = [len(EHRView(i).search(p.public.environment.patient_id, "Observation")) for p, i in zip(packages, built)]
    return {
        "packages": len(packages),
        "resources": len(built[0].resources),
        "load_s": loaded - started,
        "build_s": ready - loaded,
        "read_s": perf_counter() - ready,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "imported_mb": imported,
        "shown": sum(shown),
    }


def fresh(suite: Path) -> dict:
    """``measure`` in a process of its own."""
    env = PROCESS_ENV | {"PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, __file__, "--measure", str(suite)], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.splitlines()[-1])


def forge_run(suite: Path, out: Path, count: int = 3) -> float:
    """Seconds of a ``forge run`` of a reference agent, one trial each, over the first ``count`` packages."""
    folders = sorted(p for p in suite.iterdir() if p.is_dir())[:count]
    args = [arg for folder in folders for arg in ("--suite", str(folder))]
    started = perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "forge_kernel.cli", "run", *args, "--agent", "baseline-v1", "--trials", "1",
         "--out", str(out)],
        env=PROCESS_ENV | {"PYTHONPATH": str(ROOT)}, cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode not in (0, 1):  # 1: some trial failed its checks, which this benchmark does not ask about
        raise RuntimeError(done.stderr)
    return perf_counter() - started


def lookups(keys: int = 30_000, own: int = 20, reads: int = 200_000) -> dict[str, float]:
    """Nanoseconds a ``resources.get`` of an image with a small package overlay: a plain dict (no overlay, or a
    merged copy), ``Layered`` and ``collections.ChainMap``."""
    from forge_kernel.ehr.image import Layered

    base = {("Observation", f"o{i}"): {"id": i} for i in range(keys)}
    mine = {("Observation", f"n{i}"): {"id": i} for i in range(own)}
    wanted = [("Observation", f"o{random.randrange(keys)}") for _ in range(reads)]
    found = {}
    for name, mapping in [("dict", base), ("Layered", Layered(mine, base)), ("ChainMap", ChainMap(mine, base))]:
        get = mapping.get
        started = perf_counter()
        for key in wanted:
            get(key)
        found[name] = (perf_counter() - started) / reads * 1e9
    return found


# ---------------------------------------------------------------------------------------------------- the report


def report(rows: list[tuple[str, dict]], run_s: float, found: dict[str, float], patients: int) -> str:
    """RESULTS.md §13."""
    lines = [
        "## 13. Shared EHR images (`benchmarks/images.py`)",
        "",
        f"Commit {git_state()}; calibration loop {calibration():.2f} s. One generated SYNTHETIC image of "
        f"{rows[0][1]['resources']:,} resources ({patients} patients, a bundle each, gzip), packages with no "
        "fixtures of their own, each with another patient and clock; the old way: each package lists the same "
        "bundles as its own fixtures. Each line a fresh process: load the suite, build every package's EHR, read "
        "each patient's Observations once through a view. Goal: 300 packages under 1 GB and 30 s.",
        "",
        "| EHR | packages | load s | build s | read s | peak RSS MB | after imports MB |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for label, r in rows:
        lines.append(
            f"| {label} | {r['packages']} | {r['load_s']:.2f} | {r['build_s']:.2f} | {r['read_s']:.2f} | "
            f"{r['peak_mb']:.0f} | {r['imported_mb']:.0f} |"
        )
    lines += [
        "",
        f"`forge run` of `baseline-v1` over three of the packages, one trial each: {run_s:.1f} s.",
        "",
        "`EHRImage.resources.get` with a 20-resource overlay over 30,000 (ns a look-up): "
        + ", ".join(f"{name} {ns:.0f}" for name, ns in found.items())
        + f". `Layered` is kept: no copy of the image's dict per package, a look-up {found['Layered'] / found['dict']:.1f}x "
        f"a dict's and {found['ChainMap'] / found['Layered']:.1f}x faster than a ChainMap's.",
    ]
    return "\n".join(lines) + "\n"


def extrapolated(copied: list[dict], count: int) -> dict:
    """The old way at ``count`` packages: the line through the two measurements."""
    (a, b) = copied[0], copied[-1]
    slope = {k: (b[k] - a[k]) / (b["packages"] - a["packages"]) for k in ("load_s", "build_s", "read_s", "peak_mb")}
    row = {k: b[k] + slope[k] * (count - b["packages"]) for k in slope}
    return row | {"packages": count, "resources": b["resources"], "imported_mb": b["imported_mb"], "shown": 0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a 30-patient image, 10 and 30 packages; writes nothing")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure)))
        return
    patients, counts, copies = (30, [10, 30], [2, 4]) if args.quick else (300, [30, 100, 300], [2, 6])
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bundles, ids = write_image(root, patients)
        rows = []
        for count in counts:
            rows.append(("1 shared image", fresh(write_suite(root / f"shared-{count}", count, ids, None))))
            print(rows[-1])
        copied = [fresh(write_suite(root / f"copied-{count}", count, ids, bundles)) for count in copies]
        rows += [("own copy", row) for row in copied]
        rows.append(("own copy (extrapolated)", extrapolated(copied, counts[-1])))
        for row in rows[-3:]:
            print(row)
        run_s = forge_run(root / f"shared-{counts[0]}" / "task_packages" / SUITE, root / "run")
        found = lookups()
        text = report(rows, run_s, found, patients)
    print(text)
    if not args.quick:
        write_section("images.py", text)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
