"""The release gate: a policy declared before the run, checks that PASS, FAIL or are NOT RUN, and a colour.

Hard gates can be neither waived nor optional; a soft check may be waived (its FAIL does not count) or optional (its
NOT RUN does not count) only in the policy itself, so that this is in its hash. Any other FAIL or NOT RUN makes the
gate red: NOT RUN is never a pass. ``load_policy`` reads a policy file and refuses one that waives or makes optional
what is not a registered soft check; ``evaluate`` refuses such a policy however it was made.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from ..spec import DEFAULT_GATE, GatePolicy, PolicyError, SpecError, read_policy
from ..store import Run
from .comparison import Comparison
from .display import Shown, html_heading, html_paragraphs, html_table
from .gate_checks import GATE_CHECKS, Status, soft_checks

__all__ = ["Check", "GatePolicy", "GateResult", "declared_policy", "evaluate", "load_policy"]


class Check(BaseModel):
    name: str
    level: Literal["hard", "soft"]
    status: Status
    detail: str
    waived: bool = False
    optional: bool = False

    @property
    def note(self) -> str:
        """`` (waived)`` or `` (optional)`` where the policy says so, else nothing."""
        return " (waived)" if self.waived else " (optional)" if self.optional else ""


class GateResult(Shown, BaseModel):
    policy_name: str
    policy_version: str
    policy_hash: str
    green: bool
    checks: list[Check]

    @property
    def red_because(self) -> list[Check]:
        return [c for c in self.checks if counts_against(c)]

    @property
    def summary(self) -> str:
        return (
            f"gate {'GREEN' if self.green else 'RED'} (policy {self.policy_name} v{self.policy_version}, "
            f"{self.policy_hash[:19]})"
        )

    def check_lines(self) -> list[str]:
        return [f"  {c.status:<7} {c.level:<4} {c.name}{c.note}: {c.detail}" for c in self.checks]

    def text(self) -> str:
        return "\n".join([f"Release {self.summary}", *self.check_lines()])

    def html(self) -> str:
        return (
            html_heading(f"Release gate: {'GREEN' if self.green else 'RED'}")
            + html_paragraphs(f"Policy {self.policy_name} v{self.policy_version}, hash {self.policy_hash}.")
            + html_table(
                ["check", "level", "status", "detail"],
                [[c.name, c.level, c.status + c.note, c.detail] for c in self.checks],
            )
        )


def counts_against(check: Check) -> bool:
    """A hard check that did not PASS; a soft FAIL that is not waived, or a soft NOT RUN that is not optional."""
    if check.level == "hard":
        return check.status != "PASS"
    return (check.status == "FAIL" and not check.waived) or (check.status == "NOT RUN" and not check.optional)


def load_policy(path: str | Path | None = None) -> GatePolicy:
    """A gate policy from YAML (the bundled default when no path is given); a SpecError names the field where it
    waives or makes optional what is not a registered soft check."""
    path = Path(path) if path else DEFAULT_GATE
    policy = read_policy(path)
    if problem := refused(policy):
        raise SpecError(path, *problem)
    return policy


def refused(policy: GatePolicy) -> tuple[str, str] | None:
    """(field, why) where a policy waives or makes optional what is not a registered soft check, else None."""
    for field, what in (("waive", "waived"), ("optional", "optional")):
        allowed = soft_checks(waivable=field == "waive")
        for name in getattr(policy, field):
            if name not in allowed:
                return field, f"{name!r} cannot be {what}: only soft checks can be {what}"
    return None


def declared_policy(run: Run) -> str | None:
    """The hash of the gate policy a run declared before it started (None if it declared none)."""
    return (run.manifest.get("gate_policy") or {}).get("hash")


def evaluate(cmp: Comparison, policy: GatePolicy, declared: str | None = None) -> GateResult:
    """Run every registered gate check (``gate_checks.py``) on a comparison; ``declared`` is the hash the candidate
    run recorded.

    A policy that differs from the one declared before the run, or waives or makes optional what is not a soft
    check, is refused, not evaluated.
    """
    if problem := refused(policy):
        raise PolicyError(f"gate policy {policy.name}", *problem)
    if declared is not None and declared != policy.hash:
        raise PolicyError(
            cmp.candidate.run_dir,
            "gate_policy",
            f"the run declared policy {declared[:19]}, "
            f"this one is {policy.hash[:19]}: a policy cannot change after the run",
        )
    checks = []
    for check in GATE_CHECKS.values():
        status, detail = check.run(cmp, policy, declared)
        soft = check.level == "soft"
        checks.append(
            Check(
                name=check.name,
                level=check.level,
                status=status,
                detail=detail,
                waived=soft and check.name in policy.waive,
                optional=soft and check.name in policy.optional,
            )
        )
    green = not any(counts_against(c) for c in checks)
    return GateResult(
        policy_name=policy.name, policy_version=policy.version, policy_hash=policy.hash, green=green, checks=checks
    )
