"""Evidence verifier: the record references an agent cites for each assessed criterion."""
from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field

from ...ehr.image import EHRImage, patient_of
from ...spec.package import Strict
from ..matchers import values_at
from ..registry import Outcome, verifier
from ..verdict import GradeContext

ASSESSMENT = "trial eligibility assessment"
"""Code text of the Observation that ``criterion_assessment_submit`` writes."""
CLINICAL_TYPES = ["Observation", "Condition", "DocumentReference", "DiagnosticReport", "MedicationStatement",
                  "MedicationRequest", "Procedure", "AllergyIntolerance"]


class EvidenceParams(Strict):
    path: str = "assessments.criteria"
    """Where the structured output lists its criteria, each with ``criterion_id`` and ``evidence``."""
    types: list[str] = Field(default_factory=lambda: list(CLINICAL_TYPES))
    """Resource types that may be cited."""
    forbidden: list[str] = Field(default_factory=list)
    """References that must not be cited, e.g. a result outside the protocol's time window."""
    complete: dict[str, list[str]] = Field(default_factory=dict)
    """Criterion id -> references its citations must include, wherever that criterion is assessed."""


@dataclass(frozen=True)
class Citation:
    source: str
    """``output`` or the written assessment's reference."""
    criterion: str
    reference: str


def citations(ctx: GradeContext, path: str) -> tuple[list[Citation], dict[str, set[str]]]:
    """Every citation in the structured output and in written assessments, and which criteria each source assesses."""
    cited: list[Citation] = []
    assessed: dict[str, set[str]] = {}
    for item in values_at(ctx.result.output, path):
        if isinstance(item, dict):
            criterion = str(item.get("criterion_id"))
            assessed.setdefault("output", set()).add(criterion)
            cited.extend(Citation("output", criterion, str(ref)) for ref in item.get("evidence") or [])
    for key, before, after in ctx.view.touched():
        if key[0] != "Observation" or after is None or after == before:
            continue
        if (after.get("code") or {}).get("text") != ASSESSMENT:
            continue
        source = f"Observation/{key[1]}"
        assessed[source] = {str(c.get("code", {}).get("text")) for c in after.get("component", [])}
        cited.extend(Citation(source, str(d.get("display")), str(d.get("reference")))
                     for d in after.get("derivedFrom", []))
    return cited, assessed


def resolve(image: EHRImage, reference: str) -> dict | None:
    """The resource of the initial EHR that a ``Type/id`` reference names, or None."""
    rtype, _, rid = reference.partition("/")
    return image.resources.get((rtype, rid)) if rid else None


def problem(ctx: GradeContext, p: EvidenceParams, reference: str) -> str | None:
    """Why one cited reference is not acceptable evidence, or None."""
    rtype, _, rid = reference.partition("/")
    if not rid:
        return "is not a Type/id reference"
    if reference in p.forbidden:
        return "must not be cited"
    if rtype not in p.types:
        return f"is a {rtype}, not citable here"
    resource = resolve(ctx.view.image, reference)
    if resource is None:
        return "is not in the EHR the trial started from"
    if patient_of(resource) != ctx.package.public.environment.patient_id:
        return "belongs to another patient"
    return None


@verifier("answer.evidence")
def evidence(ctx: GradeContext, p: EvidenceParams) -> Outcome:
    """Every cited reference exists in the initial EHR, is the current patient's, of an allowed type and not
    forbidden; criteria named in ``complete`` cite at least the listed references, in the output and in every
    written assessment."""
    cited, assessed = citations(ctx, p.path)
    for c in cited:
        why = problem(ctx, p, c.reference)
        if why:
            return Outcome(False, f"{c.source} cites {c.reference} for {c.criterion}: it {why}")
    for criterion, required in p.complete.items():
        sources = [s for s, criteria in assessed.items() if criterion in criteria]
        if "output" not in sources:
            return Outcome(False, f"criterion {criterion} is not in the structured output")
        for source in sources:
            given = {c.reference for c in cited if c.source == source and c.criterion == criterion}
            missing = [r for r in required if r not in given]
            if missing:
                return Outcome(False, f"{source}: criterion {criterion} does not cite {', '.join(missing)}")
    return Outcome(True, f"{len(cited)} citation(s), all of this patient's records"
                         + (f"; {len(p.complete)} criterion(s) fully cited" if p.complete else ""))
