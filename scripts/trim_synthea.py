"""Trim Synthea FHIR R4 patient bundles to small test fixtures (synthetic data only).

    python3 scripts/trim_synthea.py IN_DIR OUT_DIR [--per-type N]

Each bundle keeps its Patient, the shared Practitioner / PractitionerRole / Organization / Location resources, and
for every other resource type the N newest resources (by their clinical date), plus every resource those reference
(so every ``urn:uuid:`` reference still resolves). A Provenance keeps only the targets that stayed. Every resource
type the bundle had stays present. The output is written with sorted keys, two-space indented, one file per bundle.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

KEPT_WHOLE = {"Patient", "Practitioner", "PractitionerRole", "Organization", "Location"}
DATE_FIELDS = ("effectiveDateTime", "issued", "authoredOn", "onsetDateTime", "performedDateTime", "recordedDate")
DATE_FIELDS += ("occurrenceDateTime", "date", "created", "started", "recorded", "effectivePeriod", "period")
DATE_FIELDS += ("performedPeriod", "billablePeriod", "occurrencePeriod")


def references(value: Any) -> Iterator[str]:
    """Every ``reference`` string inside a JSON value."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "reference" and isinstance(item, str):
                yield item
            else:
                yield from references(item)
    elif isinstance(value, list):
        for item in value:
            yield from references(item)


def date_of(resource: dict) -> str:
    """The resource's first clinical date (a period's start), as written; "" when it has none."""
    for field in DATE_FIELDS:
        value = resource.get(field)
        if isinstance(value, dict):
            value = value.get("start")
        if isinstance(value, str):
            return value
    return ""


def trimmed(bundle: dict, per_type: int) -> dict:
    """The bundle with the newest ``per_type`` resources of each type and everything they reference."""
    entries = bundle["entry"]
    by_url = {entry["fullUrl"]: entry for entry in entries}
    by_type: dict[str, list[dict]] = {}
    for entry in entries:
        by_type.setdefault(entry["resource"]["resourceType"], []).append(entry)
    wanted: list[str] = []
    for rtype, group in by_type.items():
        if rtype in KEPT_WHOLE:
            wanted += [e["fullUrl"] for e in group]
        elif rtype != "Provenance":
            newest = sorted(group, key=lambda e: date_of(e["resource"]), reverse=True)[:per_type]
            wanted += [e["fullUrl"] for e in newest]
    kept: set[str] = set()
    while wanted:
        url = wanted.pop()
        if url in kept or url not in by_url:
            continue
        kept.add(url)
        wanted += references(by_url[url]["resource"])
    out = []
    for entry in entries:
        resource = entry["resource"]
        if resource["resourceType"] == "Provenance":
            resource = {**resource, "target": [t for t in resource.get("target", []) if t.get("reference") in kept]}
            out.append({**entry, "resource": resource})
        elif entry["fullUrl"] in kept:
            out.append(entry)
    return {**bundle, "entry": out}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="folder of Synthea bundles (*.json)")
    parser.add_argument("out", type=Path, help="folder to write the trimmed bundles to")
    parser.add_argument("--per-type", type=int, default=3, help="newest resources kept of each type (default 3)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for number, path in enumerate(sorted(args.source.glob("*.json")), 1):
        bundle = trimmed(json.loads(path.read_text(encoding="utf-8")), args.per_type)
        target = args.out / f"patient-{number}.json"
        target.write_text(json.dumps(bundle, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"{path.name} -> {target.name}: {len(bundle['entry'])} resources")


if __name__ == "__main__":
    main()
