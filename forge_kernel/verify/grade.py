"""Grading: every verifier of the hidden half on one finished trial, then the scores."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from ..spec import ERROR_PREFIX, RUBRIC, Grading, Verdict
from .quantities import unit_registry
from .registry import bound_uses, run_verifier
from .scoring import score
from .verdict import GradeContext

GRADING_SECONDS = 2.0
"""The longest one trial's grading may take (a trial is graded in about a millisecond, the first of a process in
under a second). An agent's answer can be written against the checks' patterns (a regular expression that
backtracks on 4,000 digits takes seconds); past this the verifiers not yet done give error verdicts and the run
goes on."""


class OutOfTime(BaseException):
    """The trial's grading ran past ``GRADING_SECONDS`` (a BaseException: a verifier's ``except Exception`` does not
    swallow it)."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise OutOfTime in this thread once ``seconds`` have passed (regular expressions are interrupted too). Only
    the main thread can be interrupted so: in any other, or while another timer of the process runs, this sets
    no limit."""
    if threading.current_thread() is not threading.main_thread() or signal.getitimer(signal.ITIMER_REAL)[0]:
        yield
        return
    armed = True

    def expire(signum: int, frame: FrameType | None) -> None:
        if armed:
            raise OutOfTime

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def grade(ctx: GradeContext, judge: bool = False) -> Grading:
    """Run the hidden half's verifiers; a trial that did not end normally also gets a failing verdict. The rubric
    verdicts (a model's judgement, seconds each) are made only with ``judge``, after the others and outside their
    time limit (each within its own deadline, ``kinds/judge.py``); without it they are left out."""
    hidden = ctx.package.hidden
    uses = tuple(b for b in bound_uses(ctx.package) if b.use.category != RUBRIC)
    unit_registry()  # built once per process, before the clock starts: it takes most of a second
    verdicts: list[Verdict] = []
    ctx.memo.clear()
    try:
        with time_limit(GRADING_SECONDS):
            for bound in uses:
                verdicts.append(run_verifier(bound, ctx))
    except OutOfTime:
        reason = f"{ERROR_PREFIX}not graded: the trial's grading ran past {GRADING_SECONDS:g} s"
        verdicts += [
            Verdict(b.use.id, b.use.kind, b.use.category, b.use.severity, False, reason, error=True)
            for b in uses[len(verdicts) :]
        ]
    if judge:
        verdicts += [run_verifier(b, ctx) for b in bound_uses(ctx.package) if b.use.category == RUBRIC]
    if ctx.status != "completed":
        verdicts.append(Verdict("trial.ended", "trial.ended", "trace", "hard", False, f"trial ended: {ctx.status}"))
    ctx.memo.clear()
    scores = score(hidden.expected_tools, ctx.events, verdicts)
    return Grading(verdicts, scores, hidden.version, ctx.package.hidden_hash)
