"""A stored trial as readable text: each step, its policy decision, fault, state change, the model turns the agent
reported between the calls they led to, then the verdicts."""

from __future__ import annotations

import json
import textwrap
from typing import Any

from ..ehr import summarize
from ..spec import TURN_TEXT, ModelTurn, asked_steps, printable
from ..store import TrialRecord

WIDTH = 100
MODEL = "›"
"""What starts a model turn's lines (``│`` its words and calls under it)."""


def clip(text: str, width: int = WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def brief(result: Any) -> str:
    """A one-line shape of a tool result: lists by length, scalars by value."""
    if isinstance(result, dict):
        parts = [
            f"{k}: {len(v)} item(s)" if isinstance(v, list) else f"{k}: {v}"
            for k, v in result.items()
            if not isinstance(v, dict)
        ]
        return clip(", ".join(parts) or "{…}", 80)
    return clip(json.dumps(result, ensure_ascii=False), 80)


def change_lines(changes: list[dict]) -> list[str]:
    """One line per JSON-Patch operation; a whole added resource is summarized."""
    lines = []
    for op in changes:
        if op["op"] == "add" and op["path"].count("/") == 2:
            s = summarize(op["value"])
            lines.append(f"+ {op['path'][1:]}  {s.get('name', '')} [{s.get('status', '')}]")
        elif op["op"] == "remove":
            lines.append(f"- {op['path'][1:]}")
        else:
            lines.append(
                clip(
                    f"~ {op['path'][1:]}: {json.dumps(op.get('replaced'), ensure_ascii=False)} → "
                    f"{json.dumps(op.get('value'), ensure_ascii=False)}"
                )
            )
    return lines


def usage_line(turns: list[ModelTurn]) -> str:
    """The tokens, cost and time of model turns."""
    return (
        f"{sum(t.prompt_tokens for t in turns):,} in / {sum(t.completion_tokens for t in turns):,} out / "
        f"{sum(t.cached_tokens for t in turns):,} cached tokens · ${sum(t.cost for t in turns):.4f} · "
        f"{sum(t.latency_ms for t in turns):.1f} ms"
    )


def turn_lines(turn: ModelTurn, steps: list[int | None]) -> list[str]:
    """A model turn: what it used, its words (wrapped, control characters written out, cut at ``TURN_TEXT`` with the
    rest counted), the calls it asked for as written with the ``steps`` they became (or that they never reached the
    tools), its retries and error."""
    out = [
        f"  {MODEL} model turn {turn.turn} · {printable(turn.finish_reason) or 'no finish reason'} · "
        f"{usage_line([turn])}"
    ]
    if turn.text:
        out += [
            f"    │ {line}".rstrip()
            for para in turn.text[:TURN_TEXT].split("\n")
            for line in textwrap.wrap(printable(para), WIDTH - 8) or [""]
        ]
    if len(turn.text) > TURN_TEXT:
        out.append(f"    │ … {len(turn.text) - TURN_TEXT:,} more characters")
    if turn.refusal:
        out.append(f"    │ refused: {clip(printable(turn.refusal))}")
    for call, step in zip(turn.tool_calls, steps):
        reached = f"→ step {step}" if step is not None else "✗ never reached the tools"
        out.append(
            f"    │ asks {printable(call.get('name', ''))} {clip(printable(call.get('arguments', '')), 70)}  {reached}"
        )
    out += [f"    │ tried again after: {clip(printable(why), 80)}" for why in turn.retries]
    if turn.error:
        out.append(f"    │ failed: {clip(printable(turn.error), 90)}")
    return out


def render_trial(trial: TrialRecord, isolation: str = "") -> str:
    """The whole trial as text; ``isolation`` says how the agent ran (in process or sandboxed)."""
    s = trial.grading.scores
    ran = f" ({isolation})" if isolation else ""
    out = [
        f"{trial.task_id} · agent {trial.agent} {trial.agent_version}{ran} · trial {trial.trial} (seed {trial.seed})",
        f"{'PASSED' if s.passed else 'FAILED'} · accuracy {s.accuracy:.2f} · completion {s.completion} · safety gate "
        f"{s.safety_gate} · status {trial.status} · {len(trial.events)} calls · {trial.duration_s * 1000:.1f} ms",
    ]
    if trial.reason:
        out.append(f"ended: {clip(trial.reason)}")
    if trial.attempts > 1:
        out.append(
            f"run {trial.attempts} times: a stall of the worker it shared spoiled an earlier attempt before it "
            "had acted; the calls and time are the last attempt's, the budgets and cost count every one's"
        )
    turns = list(zip(trial.turns, asked_steps(trial.turns, [(e.step, e.tool) for e in trial.events])))
    if turns:
        out.append(f"model: {len(turns)} turn(s) · {usage_line(trial.turns)} · trial cost ${trial.cost:.4f}")
        out.append(
            f"model turns ({MODEL}) are reported by the agent: its own account of what its model said and "
            "asked for, never graded"
        )
    out.append("")
    for i, e in enumerate(trial.events):
        out.extend(line for t, steps in turns if t.after_step == i for line in turn_lines(t, steps))
        args = clip(json.dumps(e.args, ensure_ascii=False), 70)
        error = e.error or {}  # a failed call has its error
        outcome = f"ok  {brief(e.result)}" if e.ok else f"ERROR {error['code']}: {clip(error['message'], 60)}"
        out.append(f"{e.step:>3}. {e.tool} {args}")
        out.append(f"     → {outcome}  ({e.latency_ms:.2f} ms)")
        if e.denied:
            out.append(f"     policy: denied ({e.denied})")
        for flag in e.flags:
            out.append(f"     policy: {flag}")
        if e.fault:
            out.append(f"     fault injected: {e.fault}")
        out.extend(f"     {line}" for line in change_lines(e.changes))
    out.extend(line for t, steps in turns if t.after_step >= len(trial.events) for line in turn_lines(t, steps))
    out.append("")
    out.append(f"answer: {clip(trial.result.answer or '(none)')}  [agent says: {trial.result.status}]")
    out.append("")
    out.append(f"verdicts (hidden half {trial.grading.hidden_version}):")
    for v in sorted(trial.grading.verdicts, key=lambda v: (v.passed, v.verifier_id)):
        mark = "PASS" if v.passed else "ERROR" if v.error else "FAIL"
        at = f" @ step {', '.join(map(str, v.steps))}" if v.steps else " @ answer" if v.category == "answer" else ""
        out.append(f"  {mark} {v.severity:<4} {v.category:<7} {v.verifier_id}: {clip(v.reason, 70)}{at}")
    return "\n".join(out)
