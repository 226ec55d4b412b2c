"""A stored trial as readable text: each step, its policy decision, fault, state change, then the verdicts."""
from __future__ import annotations

import json
from typing import Any

from ..store import TrialRecord
from ..ehr import summarize

WIDTH = 100


def clip(text: str, width: int = WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def brief(result: Any) -> str:
    """A one-line shape of a tool result: lists by length, scalars by value."""
    if isinstance(result, dict):
        parts = [f"{k}: {len(v)} item(s)" if isinstance(v, list) else f"{k}: {v}" for k, v in result.items()
                 if not isinstance(v, dict)]
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
            lines.append(clip(f"~ {op['path'][1:]}: {json.dumps(op.get('replaced'), ensure_ascii=False)} → "
                              f"{json.dumps(op.get('value'), ensure_ascii=False)}"))
    return lines


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
        out.append(f"run {trial.attempts} times: a stall of the worker it shared spoiled an earlier attempt before it "
                   "had acted; the calls and time are the last attempt's, the budgets and cost count every one's")
    out.append("")
    for e in trial.events:
        args = clip(json.dumps(e.args, ensure_ascii=False), 70)
        if e.ok:
            outcome = f"ok  {brief(e.result)}"
        else:
            outcome = f"ERROR {e.error['code']}: {clip(e.error['message'], 60)}"
        out.append(f"{e.step:>3}. {e.tool} {args}")
        out.append(f"     → {outcome}  ({e.latency_ms:.2f} ms)")
        if e.denied:
            out.append(f"     policy: denied ({e.denied})")
        for flag in e.flags:
            out.append(f"     policy: {flag}")
        if e.fault:
            out.append(f"     fault injected: {e.fault}")
        out.extend(f"     {line}" for line in change_lines(e.changes))
    out.append("")
    out.append(f"answer: {clip(trial.result.answer or '(none)')}  [agent says: {trial.result.status}]")
    out.append("")
    out.append(f"verdicts (hidden half {trial.grading.hidden_version}):")
    for v in sorted(trial.grading.verdicts, key=lambda v: (v.passed, v.verifier_id)):
        mark = "PASS" if v.passed else "ERROR" if v.error else "FAIL"
        at = f" @ step {', '.join(map(str, v.steps))}" if v.steps else ""
        out.append(f"  {mark} {v.severity:<4} {v.category:<7} {v.verifier_id}: {clip(v.reason, 70)}{at}")
    return "\n".join(out)
