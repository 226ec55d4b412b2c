"""Writing TaskPackages in Python: a typed draft (public half, hidden half, fixtures), a gold solution recorded by
calling tools against the fixture EHR, counterexamples and valid variants as edits of the gold, validation,
selftest with mutants, a dry run of the reference agents, and saving both halves. All content is synthetic."""
from __future__ import annotations

from pathlib import Path

from ..spec import TaskPackage
from ..spec.edits import Edit
from ._checks import DryRun, SelftestResult, dry_run, problems, selftest
from ._draft import Draft, Suite
from ._patients import BUNDLED, PatientFixture, bundled_patients
from ._recorder import RecordedCall, Recorder

FIXTURE = "fixtures/ehr.json"


def new_draft(patient: PatientFixture, id: str, title: str, instruction: dict[str, str], tools: list[str],
              task_root: str | Path, verifiers_root: str | Path, suite: str = "custom", category: str = "custom",
              language: str = "zh", context: dict | None = None, **public) -> Draft:
    """A draft on a bundled patient's fixture (copied whole, other patients included), saved under
    ``task_root/<suite>/<id>/`` and ``verifiers_root/<suite>/<id>.yaml``. ``public`` sets other fields of the
    public half (policy, budget, faults, risk, slices, ...); what the suite's suite.yaml gives is the default."""
    where = Suite(Path(task_root), Path(verifiers_root), suite)
    defaults, _ = where.defaults()
    environment = {**defaults.get("environment", {}), **patient.environment, "fixtures": [FIXTURE],
                   "patient_id": patient.patient_id}
    data = {**defaults, "id": id, "version": "1.0.0", "title": title, "suite": suite, "category": category,
            "environment": environment, "tools": tools,
            "task": {"instruction": instruction, "language": language, "context": context or {}}, **public}
    return Draft(TaskPackage.model_validate(data), {FIXTURE: patient.bundle()}, where)


__all__ = [
    "BUNDLED", "Draft", "DryRun", "Edit", "PatientFixture", "RecordedCall", "Recorder", "SelftestResult", "Suite",
    "bundled_patients", "dry_run", "new_draft", "problems", "selftest",
]
