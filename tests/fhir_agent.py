"""A FHIR REST agent written the way MedAgentBench's agents are: a plain script of GET and POST requests against a
FHIR server's base URL, with no import of forge. It is scripted (no model) for one kind of task: record a blood
pressure for a patient and report the latest systolic pressure on record before it (SYNTHETIC data).

    python tests/fhir_agent.py http://127.0.0.1:PORT/fhir

It reads the task from ``$task`` (its context: ``patient``, ``record``), walks every page of the patient's systolic
pressures (LOINC 8480-6) through the Bundle's ``next`` links, POSTs an Observation with the blood pressure as a
string, then POSTs its answer to ``$finish``. Each request and its HTTP status is printed on a line. A task of the
medagentbench-style suite's ``record_vital`` family (its context: ``mrn``, ``value``, ``code``) is done as
MedAgentBench's agents do it: the patient found by ``GET Patient?identifier=MRN``, the value POSTed as a string.
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request

AGENT = "fhir-agent/1.0"
SYSTOLIC = "8480-6"


def send(url: str, body: dict | None = None) -> dict:
    """GET (or, with a body, POST) a URL; the JSON it answers (an OperationOutcome on an error)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data, {"User-Agent": AGENT, "Content-Type": "application/fhir+json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, text = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, text = error.code, error.read()
    print(f"{'POST' if body is not None else 'GET'} {url} -> {status}", flush=True)
    return json.loads(text)


def every_entry(url: str) -> list[dict]:
    """The resources of a search, all pages of it."""
    resources = []
    while url:
        bundle = send(url)
        resources += [entry["resource"] for entry in bundle.get("entry", [])]
        url = next((link["url"] for link in bundle.get("link", []) if link["relation"] == "next"), "")
    return resources


def record_vital(base: str, task: dict) -> None:
    """Find the patient by MRN, record the value as an Observation taken now, finish."""
    context = task["context"]
    patients = every_entry(f"{base}/Patient?identifier={context['mrn']}")
    if len(patients) != 1:
        send(f"{base}/$finish", {"answer": "Patient not found"})
        return
    observation = {
        "resourceType": "Observation",
        "status": "final",
        "code": {"coding": [{"system": "http://loinc.org", "code": context["code"]}], "text": "Blood pressure"},
        "subject": {"reference": f"Patient/{patients[0]['id']}"},
        "effectiveDateTime": task["now"],
        "valueString": context["value"],
    }
    send(f"{base}/Observation", observation)
    send(f"{base}/$finish", {"answer": f"Blood pressure {context['value']} recorded now."})


def main(base: str) -> None:
    task = send(f"{base}/$task")
    if task["context"].get("family") == "record_vital":
        record_vital(base, task)
        return
    patient, pressure = task["context"]["patient"], task["context"]["record"]
    systolic = every_entry(f"{base}/Observation?patient={patient}&code=http://loinc.org|{SYSTOLIC}&_count=1")
    latest = max(systolic, key=lambda o: o["effectiveDateTime"])
    latest = latest.get("valueQuantity") or next(
        part["valueQuantity"] for part in latest["component"] if part["code"]["coding"][0]["code"] == SYSTOLIC
    )
    send(
        f"{base}/Observation",
        {
            "resourceType": "Observation",
            "status": "final",
            "category": [
                {
                    "coding": [
                        {"system": "http://terminology.hl7.org/CodeSystem/observation-category", "code": "vital-signs"}
                    ]
                }
            ],
            "code": {"coding": [{"system": "http://loinc.org", "code": "85354-9"}], "text": "Blood pressure"},
            "subject": {"reference": f"Patient/{patient}"},
            "effectiveDateTime": task["now"],
            "valueString": pressure,
        },
    )
    answer = {"value": latest["value"], "unit": latest["unit"]}
    send(
        f"{base}/$finish",
        {
            "answer": f"Recorded {pressure}; the latest systolic before it was {latest['value']} {latest['unit']}.",
            "output": {"previous_systolic": answer},
        },
    )


if __name__ == "__main__":
    main(sys.argv[1].rstrip("/"))
