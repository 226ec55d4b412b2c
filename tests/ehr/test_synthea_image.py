"""The committed ten-patient Synthea image (synthetic) read through the tools: every resource before the clock is
reachable through the FHIR tools, and no read tool returns one after it."""

from __future__ import annotations

import asyncio
import json
import re
from datetime import datetime

import pytest

from forge_kernel.ehr import EHRImage, patient_of, time_of
from forge_kernel.spec import load_package
from forge_kernel.tools import TOOLS
from tests.helpers import ROOT, read_session

CLOCK = datetime.fromisoformat("2025-06-01T08:00:00+00:00")
"""Before the last records of several patients: the image holds their future."""
READS = sorted(name for name, spec in TOOLS.items() if spec.kind == "read")


@pytest.fixture(scope="module")
def image() -> EHRImage:
    package = load_package(ROOT / "task_packages" / "medagentbench-style" / "MAB-T2-VERNA")
    assert package.image is not None and len(package.image.resources) > 20_000
    return EHRImage([], CLOCK, package.image)


def call(image: EHRImage, patient: str, tool: str, /, **args) -> dict:
    reply = asyncio.run(read_session(image, patient).call(tool, **args))
    assert reply["ok"], reply
    return reply["result"]


CUT = re.compile(r" \[cut: characters \d+-\d+ of \d+[^\]]*\]$")


def searched(image: EHRImage, patient: str, rtype: str) -> list[dict]:
    """Every page of a FHIR search of one type for one patient; a resource too big for a reply, given in parts of
    its JSON text, put together again."""
    found, parts, token = [], [], None
    while True:
        page = call(image, patient, "fhir_search", type=rtype, _count=100, **({"page_token": token} if token else {}))
        for entry in page["entry"]:
            if "json" not in entry:
                found.append(entry)
                continue
            parts.append(CUT.sub("", entry["json"]))
            if entry["json"].endswith("the end]"):
                found.append(json.loads("".join(parts)))
                parts = []
        if not (token := page["next"]):
            return found


def test_every_resource_up_to_the_clock_is_reachable_through_the_fhir_tools_and_none_after(image):
    reached: set[tuple[str, str]] = set()
    types = sorted({key[0] for key in image.resources})
    for patient in image.patient_ids:
        for rtype in types:
            reached |= {(r["resourceType"], r["id"]) for r in searched(image, patient, rtype)}
    edge = CLOCK.timestamp()
    before = {key for key, r in image.resources.items() if (when := time_of(r, image.tz)) is None or when <= edge}
    future = set(image.resources) - before
    assert future and len(types) >= 20
    assert reached == before  # every type, every record of the past, none of the future
    someone = image.patient_ids[0]
    resource = next(r for key, r in image.resources.items() if key in before and patient_of(r) == someone)
    assert call(image, someone, "fhir_read", type=resource["resourceType"], id=resource["id"])["id"] == resource["id"]


@pytest.mark.parametrize(
    "tool", [t for t in READS if t not in ("protocol_get", "protocol_text", "protocol_search", "fhir_read")]
)
def test_no_read_tool_returns_a_record_after_the_clock(image, tool):
    shown = []
    for patient in image.patient_ids:
        mrn = next(i["value"] for i in image.resources[("Patient", patient)]["identifier"] if i.get("type"))
        args = {"mrn": mrn} if tool == "patient_search" else {"type": "Observation"} if tool == "fhir_search" else {}
        result = call(image, patient, tool, **(args or {"patient_id": patient}))
        shown += [row for rows in result.values() if isinstance(rows, list) for row in rows if isinstance(row, dict)]
    times = [
        t
        for row in shown
        if (t := time_of(row, image.tz) or (row.get("time") and time_of({"date": row["time"]}, image.tz)))
    ]
    assert all(t <= CLOCK.timestamp() for t in times)
