"""Writing TaskPackages in Python: a typed draft (public half, hidden half, fixtures), a gold solution recorded by
calling tools against the fixture EHR, counterexamples and valid variants as edits of the gold, the checks a gold
implies (required events, write audit, valid variants), validation, selftest with mutants, a dry run of the
reference agents, and saving both halves. All content is synthetic."""

from __future__ import annotations

from pathlib import Path

from ..spec import Edit, TaskPackage
from ._checks import DryRun, SelftestResult, dry_run, problems, selftest
from ._draft import Draft, Suite, with_defaults
from ._fixes import Fix, declare_valid, fix_for
from ._gold import (
    add_gold_checks,
    before_finish,
    call,
    expected_chain,
    required_events,
    valid_variants,
    with_args,
    without,
    write_audit,
)
from ._patients import BUNDLED, PatientFixture, bundled_patients, patient_from_bundle
from ._recorder import RecordedCall, Recorder

FIXTURE = "fixtures/ehr.json"


def new_draft(
    patient: PatientFixture,
    id: str,
    title: str,
    instruction: dict[str, str],
    tools: list[str],
    task_root: str | Path,
    verifiers_root: str | Path,
    suite: str = "custom",
    category: str = "custom",
    language: str = "zh",
    context: dict | None = None,
    answer: dict | None = None,
    **public,
) -> Draft:
    """A draft on a bundled patient's fixture (copied whole, other patients included, with the source package's
    EHR settings), saved under ``task_root/<suite>/<id>/`` and ``verifiers_root/<suite>/<id>.yaml``; ``public`` as
    for ``draft_on``."""
    where = Suite(Path(task_root), Path(verifiers_root), suite)
    environment = {**patient.environment, **public.pop("environment", {})}
    return draft_on(
        where,
        patient.bundle(),
        patient.patient_id,
        id,
        title,
        instruction,
        category=category,
        language=language,
        context=context,
        answer=answer,
        tools=tools,
        environment=environment,
        **public,
    )


def draft_on(
    where: Suite,
    fixture: dict,
    patient_id: str,
    id: str,
    title: str,
    instruction: dict[str, str],
    category: str = "custom",
    language: str = "zh",
    context: dict | None = None,
    answer: dict | None = None,
    **public,
) -> Draft:
    """A draft of package ``id`` in the suite ``where`` on one fixture, a FHIR R4 Bundle (synthetic) holding the
    current patient ``patient_id``; ``answer`` the typed answer's fields (``task.answer``). ``public`` sets other fields of the public half (tools, policy, budget, faults,
    risk, slices, ...), merged over what the suite's suite.yaml gives as the loader merges them."""
    environment = {**public.pop("environment", {}), "fixtures": [FIXTURE], "patient_id": patient_id}
    own = {
        "id": id,
        "version": "1.0.0",
        "title": title,
        "suite": where.name,
        "category": category,
        "environment": environment,
        "task": {"instruction": instruction, "language": language, "context": context or {}}
        | ({"answer": answer} if answer else {}),
        **public,
    }
    return Draft(TaskPackage.model_validate(with_defaults(own, where.defaults()[0])), {FIXTURE: fixture}, where)


__all__ = [
    "BUNDLED",
    "Draft",
    "DryRun",
    "Edit",
    "FIXTURE",
    "Fix",
    "PatientFixture",
    "RecordedCall",
    "Recorder",
    "SelftestResult",
    "Suite",
    "add_gold_checks",
    "before_finish",
    "bundled_patients",
    "call",
    "declare_valid",
    "draft_on",
    "dry_run",
    "expected_chain",
    "fix_for",
    "new_draft",
    "patient_from_bundle",
    "problems",
    "required_events",
    "selftest",
    "valid_variants",
    "with_args",
    "without",
    "write_audit",
]
