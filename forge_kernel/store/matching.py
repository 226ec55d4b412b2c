"""Trial-matching facts of a run: the criteria a structured output reports, the gold criteria of a package (status,
cited references, critical exclusion) and what a cited reference names in a package's initial EHR. Definitions
in ``forge_kernel/analysis/criteria.py``, which reads them through the Run handle.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..spec import SpecError

if TYPE_CHECKING:
    from ..spec import Package

STATES = ("met", "not_met", "unknown", "conflict")
Key = tuple[str, str]
"""(protocol id, criterion id)"""


@dataclass(frozen=True)
class Gold:
    status: str
    evidence: frozenset[str]
    critical: bool
    """An exclusion that applies (gold ``met``)."""
    window: float | None = None
    """The look-back window in days the criterion's protocol version declares, if any."""


def criteria_of(output: Any) -> Iterator[tuple[Key, str | None, dict]]:
    """(key, protocol version, criterion item) for each criterion of a structured output, skipping malformed ones."""
    from ..verify import values_at  # the answer checks' path reading, for outputs as they read them

    for assessment in values_at(output, "assessments"):
        for item in values_at(assessment, "criteria"):
            if isinstance(item, dict):
                key = (str(assessment.get("protocol_id")), str(item.get("criterion_id")))
                yield key, assessment.get("protocol_version"), item


def reported_criteria(output: Any) -> dict[Key, dict]:
    """Each criterion an output reports, as first reported."""
    found: dict[Key, dict] = {}
    for key, _, item in criteria_of(output):
        found.setdefault(key, item)
    return found


def status_of(item: dict | None) -> str:
    """One of STATES, or ``missing``."""
    status = str((item or {}).get("status") or "").strip().lower().replace(" ", "_").replace("-", "_")
    return status if status in STATES else "missing"


def evidence_of(item: dict | None) -> list[str]:
    refs = (item or {}).get("evidence") or []
    return [str(r) for r in (refs if isinstance(refs, list) else [refs])]


def exclusion_ids(protocol_id: str, version: str | None) -> set[str] | None:
    """Leaf ids under ``criteria.exclusion`` of one protocol version, or None if the table has no such version."""
    from ..tools import criterion_leaves, table

    found = next(
        (v for p in table("protocols") if p["id"] == protocol_id for v in p["versions"] if v["version"] == version),
        None,
    )
    return None if found is None else {leaf["id"] for leaf in criterion_leaves(found["criteria"]["exclusion"])}


def gold_criteria(package: Package) -> dict[Key, Gold]:
    """The gold output's criteria, each with its status, references, whether it is a critical exclusion and its
    look-back window."""
    from ..tools import criterion_window

    gold: dict[Key, Gold] = {}
    for key, version, item in criteria_of(package.hidden.gold.output):
        status, exclusions = status_of(item), exclusion_ids(key[0], version)
        where = f"gold.output {key[0]} v{version} {key[1]}"
        if exclusions is None:
            raise SpecError(package.hidden_path, where, "protocol version not in the protocol table")
        if status == "missing":
            raise SpecError(package.hidden_path, where, f"status {item.get('status')!r} is not one of {STATES}")
        critical = status == "met" and key[1] in exclusions
        gold.setdefault(
            key, Gold(status, frozenset(evidence_of(item)), critical, criterion_window(key[0], version, key[1]))
        )
    return gold
