"""The policy engine: patient scope, write permission and must-happen-before rules."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ehr import EHRView
from ..spec import Policy
from ..spec.trajectory import CROSS_PATIENT, PRECEDENCE, UNAUTHORIZED_WRITE, Event
from .base import Tool


@dataclass
class Decision:
    denied: str | None = None
    """Why the call is refused, or None when it may run."""
    message: str = ""
    flags: list[str] = field(default_factory=list)
    """Breaches recorded on a call that still runs."""


def decide(policy: Policy, patient_id: str, view: EHRView, tool: Tool, args: object, events: list[Event]) -> Decision:
    """Check one validated call against the package policy, given what already happened."""
    target = vars(args).get("patient_id")
    if target is not None and target != patient_id and view.get("Patient", target) is not None:
        return Decision(CROSS_PATIENT, "only the current patient's record may be read or written")
    if tool.writes and tool.writes not in policy.writable_types:
        return Decision(UNAUTHORIZED_WRITE, f"this task may not write {tool.writes}")
    flags = []
    for rule in policy.precedence:
        if rule.action != tool.name:
            continue
        done = {e.tool for e in events if e.ok}
        missing = [name for name in rule.requires if name not in done]
        if missing and rule.enforce:
            return Decision(PRECEDENCE, f"{tool.name} needs {', '.join(missing)} first")
        flags.extend(f"{PRECEDENCE}:{name}" for name in missing)
    return Decision(flags=flags)
