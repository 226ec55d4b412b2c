"""Evidence verifier: the record references an agent cites for each assessed criterion, their provenance and their
relevance."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from functools import lru_cache
from weakref import WeakKeyDictionary

from pydantic import Field

from ...ehr import EHRImage, codings_of, patient_of, time_of
from ...spec import Strict
from ...tools import code_label, criterion_codes, criterion_window
from .._shown import returned_to
from ..matchers import values_at
from ..registry import Outcome, verifier
from ..tables import TEXTS_CACHED
from ..verdict import GradeContext

ASSESSMENT = "trial eligibility assessment"
"""Code text of the Observation that ``criterion_assessment_submit`` writes."""
CLINICAL_TYPES = [
    "Observation",
    "Condition",
    "DocumentReference",
    "DiagnosticReport",
    "MedicationStatement",
    "MedicationRequest",
    "Procedure",
    "AllergyIntolerance",
]


class EvidenceParams(Strict):
    path: str = "assessments.criteria"
    """Where the structured output lists its criteria, each with ``criterion_id`` and ``evidence``."""
    types: list[str] = Field(default_factory=lambda: list(CLINICAL_TYPES))
    """Resource types that may be cited."""
    forbidden: list[str] = Field(default_factory=list)
    """References that must not be cited, e.g. a result outside the protocol's time window."""
    complete: dict[str, list[str]] = Field(default_factory=dict)
    """Criterion id -> references its citations must include, wherever that criterion is assessed."""
    within_days: float | None = Field(None, gt=0)
    """Every cited record must be dated within this many days before the frozen clock; a criterion whose protocol
    declares a look-back window (``within_days`` of its rule) is held to that window as well."""


@dataclass(frozen=True)
class Citation:
    source: str
    """``output`` or the written assessment's reference."""
    criterion: str
    reference: str
    window: float | None = None
    """The look-back window in days that the criterion's protocol declares, if any."""
    codes: frozenset[tuple[str, str]] = frozenset()
    """The (system, code) pairs of the records that can support the criterion, as its protocol declares them."""


@lru_cache(maxsize=TEXTS_CACHED)
def cite(source: str, protocol: str, version: str, criterion: str, reference: str) -> Citation:
    """One citation of a criterion, with the window and codes that the criterion's protocol version declares
    (remembered: the protocol table never changes, and a citation is never changed either)."""
    return Citation(
        source,
        criterion,
        reference,
        criterion_window(protocol, version, criterion),
        criterion_codes(protocol, version, criterion),
    )


def output_citations(output: dict, path: str) -> list[tuple[str, list[Citation]]]:
    """(criterion, its citations) of each criterion at ``path`` of the structured output; a criterion listed in an
    assessment with ``protocol_id`` and ``protocol_version`` takes its protocol's window and codes."""
    parent, _, leaf = path.rpartition(".")
    found = []
    for container in values_at(output, parent) if parent else [output]:
        if not isinstance(container, dict):
            continue
        for item in values_at(container, leaf):
            if isinstance(item, dict):
                criterion = str(item.get("criterion_id"))
                protocol, version = container.get("protocol_id"), container.get("protocol_version")
                refs = item.get("evidence") or []
                found.append(
                    (criterion, [cite("output", str(protocol), str(version), criterion, str(r)) for r in refs])
                )
    return found


def assessed_protocol(assessment: dict) -> tuple[str, str]:
    """(protocol id, version) of an assessment the trial wrote, read from its focus."""
    focus = (assessment.get("focus") or [{}])[0]
    return str(focus.get("reference", "")).partition("/")[2], str(focus.get("display", "")).rpartition(" v")[2]


def written_assessments(ctx: GradeContext) -> list[tuple[str, dict]]:
    """(``Observation/id``, resource) of each assessment the trial wrote or changed (found once per grading)."""
    return ctx.remember(
        "written_assessments",
        lambda: [
            (f"Observation/{key[1]}", after)
            for key, _, after in ctx.written()
            if key[0] == "Observation" and after is not None and (after.get("code") or {}).get("text") == ASSESSMENT
        ],
    )


def written_citations(source: str, assessment: dict) -> list[Citation]:
    """The citations of an assessment the trial wrote, each with its criterion's window and codes."""
    protocol, version = assessed_protocol(assessment)
    return [
        cite(source, protocol, version, str(d.get("display")), str(d.get("reference")))
        for d in assessment.get("derivedFrom", [])
    ]


def citations(ctx: GradeContext, path: str) -> tuple[list[Citation], dict[str, set[str]]]:
    """Every citation in the structured output and in written assessments, and which criteria each source assesses."""
    cited: list[Citation] = []
    assessed: dict[str, set[str]] = {}
    for criterion, given in output_citations(ctx.result.output, path):
        assessed.setdefault("output", set()).add(criterion)
        cited.extend(given)
    for source, written in written_assessments(ctx):
        assessed[source] = {str(c.get("code", {}).get("text")) for c in written.get("component", [])}
        cited.extend(written_citations(source, written))
    return cited, assessed


def resolve(image: EHRImage, reference: str) -> dict | None:
    """The resource of the initial EHR that a ``Type/id`` reference names, or None."""
    rtype, _, rid = reference.partition("/")
    return image.resources.get((rtype, rid)) if rid else None


JUDGED: WeakKeyDictionary[EHRImage, dict[tuple, str | None]] = WeakKeyDictionary()
"""Image -> (reference, window, codes, criterion, clock) -> ``dated_and_coded``, kept while the image lives."""


def dated_and_coded(image: EHRImage, now: datetime, resource: dict, days: float | None, c: Citation) -> str | None:
    """Why a cited record of the initial EHR falls outside a look-back window of ``days`` before ``now`` (if
    any), or is of no code its criterion accepts; None when neither. Worked out once per image (an image never
    changes), reference, window, codes, criterion and clock."""
    memo = JUDGED.setdefault(image, {})
    key = (c.reference, days, c.codes, c.criterion, now)
    if key not in memo:
        outside = outside_window(resource, days, now, image.tz) if days is not None else None
        memo[key] = outside or irrelevant(resource, c)
    return memo[key]


def outside_window(resource: dict, days: float, now: datetime, tz: tzinfo) -> str | None:
    """Why a record falls outside the look-back window of ``days`` before ``now``, or None (its date read in
    ``tz``)."""
    when = time_of(resource, tz)
    if when is None:
        return f"has no date, so it cannot be placed in the {days:g}-day window"
    cutoff = now - timedelta(days=days)
    return (
        f"is dated before the {days:g}-day window (from {cutoff.date().isoformat()})"
        if when < cutoff.timestamp()
        else None
    )


def code_list(codes: Iterable[tuple[str, str]]) -> str:
    """(system, code) pairs as the protocols write them ("loinc 751-8"), sorted, comma-separated."""
    return ", ".join(sorted(code_label(*c) for c in codes))


def irrelevant(resource: dict, citation: Citation) -> str | None:
    """Why a record cannot support its criterion: none of its codes is one the criterion's protocol accepts; None
    when one is, or when the criterion declares no codes."""
    found = codings_of(resource)
    if not citation.codes or found & citation.codes:
        return None
    coded = f"is coded {code_list(found)}" if found else "has no code"
    return f"{coded}, and {citation.criterion} accepts {code_list(citation.codes)}"


def problem(ctx: GradeContext, p: EvidenceParams, citation: Citation, returned: set[str]) -> str | None:
    """Why one cited reference is not acceptable evidence, or None."""
    reference = citation.reference
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
    if reference not in returned:
        return "was never returned to the agent by a successful call of this trial"
    windows = [d for d in (p.within_days, citation.window) if d is not None]
    now = ctx.package.public.environment.now
    return dated_and_coded(ctx.view.image, now, resource, min(windows) if windows else None, citation)


@verifier("answer.evidence")
def evidence(ctx: GradeContext, p: EvidenceParams) -> Outcome:
    """Every cited reference, in the output and in every written assessment, has provenance: it is in the initial
    EHR, the current patient's, of an allowed type and not forbidden; a successful call of this trial returned it
    to the agent (a read or a search row); it is dated within the look-back window (``within_days`` before the
    frozen clock, and the window the criterion's protocol declares); and it is of a code the criterion's protocol
    accepts, whatever status the criterion is given. Criteria named in ``complete`` cite at least the listed
    references."""
    cited, assessed = citations(ctx, p.path)
    returned = returned_to(ctx)
    passed: set[tuple] = set()  # citations of one record, window and codes pass or fail together
    for c in cited:
        same = (c.reference, c.window, c.codes)
        why = None if same in passed else problem(ctx, p, c, returned)
        if why:
            return Outcome(False, f"{c.source} cites {c.reference} for {c.criterion}: it {why}")
        passed.add(same)
    for criterion, required in p.complete.items():
        sources = [s for s, criteria in assessed.items() if criterion in criteria]
        if "output" not in sources:
            return Outcome(False, f"criterion {criterion} is not in the structured output")
        for source in sources:
            given = {c.reference for c in cited if c.source == source and c.criterion == criterion}
            missing = [r for r in required if r not in given]
            if missing:
                return Outcome(False, f"{source}: criterion {criterion} does not cite {', '.join(missing)}")
    return Outcome(
        True,
        f"{len(cited)} citation(s), all of this patient's records returned in this trial, of their criteria's codes "
        "and in their windows" + (f"; {len(p.complete)} criterion(s) fully cited" if p.complete else ""),
    )
