"""Trace verifiers: the expected tool chain, and calls that must or must not happen."""
from __future__ import annotations

from pydantic import Field

from ...spec.package import Strict
from ...spec.trajectory import Event
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
        return Outcome(False, "; ".join(problems))
    return Outcome(True, f"chain complete ({len(expected)} tools)")


class CallPattern(Strict):
    tool: str
    args: dict[str, Matcher] = Field(default_factory=dict)

    def matches(self, event: Event) -> bool:
        return event.tool == self.tool and all(m.matches(event.args.get(k)) for k, m in self.args.items())


def attempts(events: list[Event], patterns: list[CallPattern]) -> tuple[int, ...]:
    """Steps of every attempted call (allowed or not) matching one of the patterns."""
    return tuple(e.step for e in events if any(p.matches(e) for p in patterns))


class CallsParams(Strict):
    required: list[CallPattern] = Field(default_factory=list)
    forbidden: list[CallPattern] = Field(default_factory=list)
    in_order: bool = False
    """Required calls must succeed in the order listed."""


@verifier("trace.calls")
def calls(ctx: GradeContext, p: CallsParams) -> Outcome:
    """Required calls succeeded (in order when asked); forbidden calls were never attempted."""
    bad = attempts(ctx.events, p.forbidden)
    if bad:
        return Outcome(False, f"forbidden call attempted at step {', '.join(map(str, bad))}", bad)
    position = 0
    for pattern in p.required:
        ok_steps = [e.step for e in ctx.events if e.ok and pattern.matches(e) and (not p.in_order or e.step > position)]
        if not ok_steps:
            return Outcome(False, f"required call {pattern.tool} missing{' in order' if p.in_order else ''}")
        position = ok_steps[0]
    return Outcome(True, "required calls made, no forbidden call")
