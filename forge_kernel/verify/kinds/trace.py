"""Trace verifiers: the expected tool chain (reported; binding only as a declared compliance rule), and the
events a trial must or must not contain."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Discriminator, Field, Tag, ValidationInfo, model_validator

from ...spec import Event, Strict
from ..matchers import Matcher
from ..registry import Outcome, verifier
from ..verdict import GradeContext


def called_tools(events: list[Event]) -> list[str]:
    """Tools that ran successfully, in order of their first successful call."""
    return list(dict.fromkeys(e.tool for e in events if e.ok))


class ChainParams(Strict):
    tools: list[str] | None = None
    """Defaults to the hidden half's expected tool chain."""
    ordered: bool = False
    exact: bool = False
    """Also fail on tools outside the chain."""
    compliance: str = ""
    """The rule that makes this chain binding, e.g. "ward protocol: identity check first". A hard chain needs it:
    otherwise the chain is soft, reported and the base of task completion, and a valid other path passes."""

    @model_validator(mode="after")
    def _hard_only_as_compliance(self, info: ValidationInfo) -> ChainParams:
        if (info.context or {}).get("severity") == "hard" and not self.compliance.strip():
            raise ValueError(
                "a hard tool chain needs compliance: the rule that makes its order or exactness "
                "binding; else make it soft (completion already reports missing and extra tools)"
            )
        return self


@verifier("trace.tool_chain")
def tool_chain(ctx: GradeContext, p: ChainParams) -> Outcome:
    """Every expected tool called successfully; optionally in order and with no other tool."""
    expected = p.tools or ctx.package.hidden.expected_tools
    called = called_tools(ctx.events)
    missing = [t for t in expected if t not in called]
    extra = [t for t in called if t not in expected] if p.exact else []
    problems = []
    if missing:
        problems.append(f"missing {', '.join(missing)}")
    if extra:
        problems.append(f"extra {', '.join(extra)}")
    if p.ordered and not missing:
        order = [t for t in called if t in expected]
        if order != list(dict.fromkeys(expected)):
            problems.append(f"out of order: {' → '.join(order)}")
    if problems:
        return Outcome(False, "; ".join(problems) + (f" (compliance: {p.compliance})" if p.compliance else ""))
    return Outcome(True, f"chain complete ({len(expected)} tools)")


class CallPattern(Strict):
    """Calls of one tool, or of any tool of one kind, whose arguments match; ``{}`` matches every call."""

    tool: str | None = None
    kind: Literal["read", "write", "compute"] | None = None
    """As the tool catalog classes the tool (``escalate_to_human`` is a write: it creates a Task)."""
    args: dict[str, Matcher] = Field(default_factory=dict)

    def matches(self, event: Event) -> bool:
        if (self.tool is not None and event.tool != self.tool) or (self.kind is not None and event.kind != self.kind):
            return False
        return not self.args or all(m.matches(event.args.get(k)) for k, m in self.args.items())

    def __str__(self) -> str:
        return self.tool or (f"any {self.kind}" if self.kind else "any call")


@dataclass(frozen=True)
class Calls:
    """A trial's calls in order, and by tool: a pattern that names its tool scans only that tool's calls."""

    events: list[Event]
    by_tool: dict[str, list[Event]]

    def like(self, pattern: CallPattern) -> Iterator[Event]:
        """The calls, allowed or not, that match the pattern, in order."""
        pool = self.events if pattern.tool is None else self.by_tool.get(pattern.tool, [])
        return (e for e in pool if pattern.matches(e))


def calls_of(ctx: GradeContext) -> Calls:
    """The trial's calls (``Calls``), sorted by tool once per grading."""

    def found() -> Calls:
        by_tool: dict[str, list[Event]] = {}
        for event in ctx.events:
            by_tool.setdefault(event.tool, []).append(event)
        return Calls(ctx.events, by_tool)

    return ctx.remember("calls", found)


def attempts(calls: Calls, patterns: list[CallPattern]) -> tuple[int, ...]:
    """Steps of every attempted call (allowed or not) matching one of the patterns."""
    return tuple(sorted({e.step for p in patterns for e in calls.like(p)}))


def successes(calls: Calls, pattern: CallPattern) -> list[int]:
    """Steps of every successful call matching the pattern."""
    return [e.step for e in calls.like(pattern) if e.ok]


class CallsParams(Strict):
    required: list[CallPattern] = Field(default_factory=list)
    forbidden: list[CallPattern] = Field(default_factory=list)
    in_order: bool = False
    """Required calls must succeed in the order listed."""


@verifier("trace.calls")
def calls(ctx: GradeContext, p: CallsParams) -> Outcome:
    """Required calls succeeded (in order when asked); forbidden calls were never attempted."""
    bad = attempts(calls_of(ctx), p.forbidden)
    if bad:
        return Outcome(False, f"forbidden call attempted at step {', '.join(map(str, bad))}", bad)
    position = 0
    for pattern in p.required:
        ok_steps = [s for s in successes(calls_of(ctx), pattern) if not p.in_order or s > position]
        if not ok_steps:
            return Outcome(False, f"required call {pattern} missing{' in order' if p.in_order else ''}")
        position = ok_steps[0]
    return Outcome(True, "required calls made, no forbidden call")


@dataclass(frozen=True)
class Broken:
    """How a rule was broken: ``head`` + ``what`` is the message ("finish at step 6 before any successful " +
    "note_search"), ``steps`` the steps that broke it. Rules of one reason broken with the same head are reported
    once, naming each ``what``."""

    head: str
    what: str = ""
    steps: tuple[int, ...] = ()


class Rule(Strict):
    """One rule about the calls of a trial."""

    reason: str = ""
    """Why the rule holds; quoted when it is broken."""

    def broken(self, calls: Calls) -> Broken | None:
        """How the rule was broken, or None."""
        raise NotImplementedError


class Require(Rule):
    """A successful call like ``require`` (or like any of a list of patterns: the patient found by
    ``patient_search`` or by a ``fhir_search`` of Patients); with ``before``, one ahead of every attempt of a call
    like that (and none needed where there is no such attempt): "an allergy read before any prescription"."""

    require: CallPattern | Annotated[list[CallPattern], Field(min_length=1)]
    before: CallPattern | None = None

    def broken(self, calls: Calls) -> Broken | None:
        wanted = self.require if isinstance(self.require, list) else [self.require]
        first = min((step for pattern in wanted for step in successes(calls, pattern)), default=None)
        if self.before is None:
            return None if first is not None else Broken("no successful ", " or ".join(map(str, wanted)))
        early = tuple(e.step for e in calls.like(self.before) if first is None or e.step <= first)
        if not early:
            return None
        head = f"{self.before} at step {', '.join(map(str, early))} before any successful "
        return Broken(head, " or ".join(map(str, wanted)), early)


class Forbid(Rule):
    """No attempt of a call like ``forbid``; with ``after``, none once a call like that has succeeded:
    "no write after escalation" is ``{forbid: {kind: write}, after: {tool: escalate_to_human}}`` (the hand-over
    that happened; ``AgentResult.status: escalated`` is the agent's own word after its last call, so it opens no
    such window)."""

    forbid: CallPattern
    after: CallPattern | None = None

    def broken(self, calls: Calls) -> Broken | None:
        start = min(successes(calls, self.after), default=None) if self.after else 0
        if start is None:
            return None
        bad = tuple(e.step for e in calls.like(self.forbid) if e.step > start)
        where = f" after {self.after} at step {start}" if self.after else ""
        return Broken(f"{self.forbid} attempted at step {', '.join(map(str, bad))}{where}", steps=bad) if bad else None


class Limit(Rule):
    """At most ``max`` attempts of calls like ``count``: "at most 2 patient searches"."""

    count: CallPattern
    max: int = Field(ge=0)

    def broken(self, calls: Calls) -> Broken | None:
        steps = attempts(calls, [self.count])
        if len(steps) <= self.max:
            return None
        return Broken(f"{len(steps)} attempts of {self.count}, at most {self.max}", steps=steps)


def rule_form(data) -> str | None:
    """Which form of rule a mapping is, by its key: require, forbid or count."""
    keys = data if isinstance(data, dict) else vars(data)
    return next((k for k in ("require", "forbid", "count") if k in keys), None)


EventRule = Annotated[
    Annotated[Require, Tag("require")] | Annotated[Forbid, Tag("forbid")] | Annotated[Limit, Tag("count")],
    Discriminator(
        rule_form, custom_error_type="rule_form", custom_error_message="a rule needs one of require, forbid or count"
    ),
]


class EventsParams(Strict):
    rules: list[EventRule] = Field(min_length=1)
    """Each rule is one of ``{require, before?}``, ``{forbid, after?}``, ``{count, max}``, with an optional
    ``reason``."""


@verifier("trace.events")
def event_rules(ctx: GradeContext, p: EventsParams) -> Outcome:
    """Every rule about the trial's calls holds: calls required (before others), forbidden (after others) or
    limited in number. A required call must have succeeded; forbidden and counted calls count every attempt.
    Broken rules of one reason are reported once ("finish at step 6 before any successful note_search, drug_info
    (what the task rests on is read first)")."""
    grouped: dict[tuple[str, str], list[str]] = {}
    steps: set[int] = set()
    calls = calls_of(ctx)
    for rule in p.rules:
        broken = rule.broken(calls)
        if broken:
            grouped.setdefault((broken.head, rule.reason), []).append(broken.what)
            steps.update(broken.steps)
    problems = [
        head + ", ".join(dict.fromkeys(whats)) + (f" ({reason})" if reason else "")
        for (head, reason), whats in grouped.items()
    ]
    if problems:
        return Outcome(False, "; ".join(problems), tuple(sorted(steps)))
    return Outcome(True, f"{len(p.rules)} event rule(s) hold")
