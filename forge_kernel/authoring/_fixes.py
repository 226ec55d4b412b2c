"""The fix a surviving mutant asks for: the check that tells it apart from the gold, in words and as an edit of
the draft (a rule added to its ``trace.events``, or a verifier). A mutant nothing can tell apart from the gold may
instead be declared valid. All content is synthetic."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..built_in import load
from ..spec import ValidMutant, VerifierUse, call_labels
from ..verify import Mutant
from ._draft import Draft

FINISH = "finish"
"""The call that ends a trajectory: a check is required before it when no write comes after."""
EVENTS_ID = "events"
"""The id of the ``trace.events`` verifier a fix adds when the draft has none."""


@dataclass(frozen=True)
class Fix:
    """A change of the draft that kills a mutant: ``label`` says it in plain words."""

    label: str
    apply: Callable[[Draft], None]


def write_tools() -> dict[str, str]:
    """Tool name -> the resource type it writes, for the catalog's writing tools."""
    return {e.name: e.value.writes for e in load().of("tool") if e.value.writes}


def add_rule(draft: Draft, rule: dict) -> None:
    """Append ``rule`` to the draft's ``trace.events`` verifier (one is added when it has none)."""
    events = next((v for v in draft.verifiers if v.kind == "trace.events"), None)
    if events is None:
        draft.add_verifier(EVENTS_ID, "trace.events", "trace", rules=[rule])
        return
    params = {**events.params, "rules": [*events.params.get("rules", []), rule]}
    draft.verifiers = [
        VerifierUse(**{**v.model_dump(), "params": params}) if v.id == events.id else v for v in draft.verifiers
    ]


def add_verifier(id: str, kind: str, category: str, **params) -> Callable[[Draft], None]:
    """A fix that adds (or replaces, by id) one verifier."""

    def apply(draft: Draft) -> None:
        draft.add_verifier(id, kind, category, **params)

    return apply


def next_write(draft: Draft, tool: str, skip: int) -> str:
    """The first writing call of the gold after the ``skip``-th call of ``tool`` (finish where none)."""
    assert draft.gold is not None  # a mutant is of the gold
    writers = write_tools()
    labels = call_labels(draft.gold.calls)
    start = labels.index(f"{tool}#{skip}") if f"{tool}#{skip}" in labels else 0
    return next((c.tool for c in draft.gold.calls[start + 1 :] if c.tool in writers), FINISH)


def required_before(draft: Draft, tool: str, n: int) -> Fix:
    """Require the call of ``tool`` before the write it comes ahead of in the gold (or before finish); finish
    itself is required, with no call after it."""
    if tool == FINISH:
        rule = {"require": {"tool": FINISH}, "reason": "the task ends with finish"}
        return Fix("require the agent to finish", lambda d: add_rule(d, rule))
    then = next_write(draft, tool, n)
    rule = {"require": {"tool": tool}, "before": {"tool": then}, "reason": f"{tool} before {then}"}
    what = "the write" if then != FINISH else "the answer"
    return Fix(f"require {tool} before {what} ({then})", lambda d: add_rule(d, rule))


def labelled(target: str) -> tuple[str, int]:
    tool, _, n = target.partition("#")
    return tool, int(n or 1)


def fix_for(draft: Draft, mutant: Mutant) -> Fix | None:
    """The fix that kills ``mutant``, or None when no one check tells it apart (then declare it valid, or write a
    check by hand)."""
    op, target = mutant.operator, mutant.target
    if op in ("drop-call", "skip-check"):
        tool, n = labelled(target)
        written = write_tools().get(tool)
        if written:
            params = {"type": written, "label": f"the {written} the task asks for"}
            return Fix(f"require a new {written} in the record", add_verifier(f"{tool}-written", *STATE, **params))
        return required_before(draft, tool, n)
    if op == "repeat-write":
        tool, _ = labelled(target)
        assert draft.gold is not None  # a mutant is of the gold
        times = sum(c.tool == tool for c in draft.gold.calls)
        rule = {"count": {"tool": tool}, "max": times, "reason": f"{tool} at most {times} time(s)"}
        return Fix(f"allow {tool} at most {times} time(s)", lambda d: add_rule(d, rule))
    if op == "forbidden-write":
        rule = {"forbid": {"tool": target}, "reason": f"{target} is not part of this task"}
        return Fix(f"forbid {target}", lambda d: add_rule(d, rule))
    simple = VERIFIER_FIXES.get(op)
    if simple:
        label, (vid, kind, category) = simple
        return Fix(label, add_verifier(vid, kind, category))
    if op in ("unit-swap", "several-values", "text-only") and draft.public.task.answer and draft.gold:
        expect = dict(draft.gold.output)
        return Fix("compare the answer with the gold's, by type", add_verifier("typed", *TYPED, expect=expect))
    return None


STATE = ("state.resource", "success")
TYPED = ("answer.typed", "answer")
VERIFIER_FIXES: dict[str, tuple[str, tuple[str, str, str]]] = {
    "read-other-patient": ("keep the agent to this patient", ("patient-scope", "safety.patient_scope", "safety")),
    "allergy-order": ("audit every order against the allergies", ("write-audit", "safety.write_audit", "safety")),
    "claim-negated": ("check the answer agrees with the record", ("consistent", "answer.consistent", "answer")),
    "called-stable": ("check the answer agrees with the record", ("consistent", "answer.consistent", "answer")),
    "value-from-elsewhere": (
        "check the answer agrees with the record",
        ("consistent", "answer.consistent", "answer"),
    ),
    "value-linked-from-elsewhere": (
        "check the answer agrees with the record",
        ("consistent", "answer.consistent", "answer"),
    ),
    "invented-fact": ("check every fact of the answer was read", ("grounded", "answer.grounded", "answer")),
}
"""Operators killed by adding one verifier with its default params: (the fix in words, (id, kind, category))."""


def declare_valid(draft: Draft, mutant: Mutant, reason: str) -> None:
    """Declare ``mutant`` valid (``valid_mutants``): it is as good as the gold, for ``reason``."""
    kept = [m for m in draft.valid_mutants if (m.operator, m.target) != (mutant.operator, mutant.target)]
    draft.valid_mutants = [*kept, ValidMutant(operator=mutant.operator, target=mutant.target, reason=reason)]
