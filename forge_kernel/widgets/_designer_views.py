"""What the designer shows, as HTML: the patient, a recorded call with its result and state change, the gold's
calls, validation messages, selftest and dry-run results. Plain functions of the authoring API's results."""

from __future__ import annotations

import json
from collections.abc import Iterable
from html import escape
from typing import Any

from ..authoring import DryRun, PatientFixture, RecordedCall, SelftestResult
from ..ehr import ResourceDiff, summarize
from ..engine import PROBLEMS, operator_totals
from ..spec import SYNTHETIC_BANNER, Edit, call_labels


def banner() -> str:
    return f"<div class='mf-banner'>{escape(SYNTHETIC_BANNER)}</div>"


def table(header: Iterable[str], rows: Iterable[Iterable[Any]], cls: str = "") -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table class='mf-table {cls}'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


MAIN = ("name", "value", "time", "status")


def record_line(summary: dict) -> str:
    """One record as a clinician reads it: ``Condition 胃溃疡 · 2026-10-01 · active``, then its other facts."""
    parts = [summary.get(k) for k in MAIN] + [
        f"{k}: {flat(v)}" for k, v in summary.items() if k not in (*MAIN, "id", "type", "resourceType")
    ]
    text = " · ".join(escape(flat(p)) for p in parts if p not in (None, "", []))
    return f"<span class='mf-type'>{escape(summary.get('type') or summary.get('resourceType') or '')}</span> {text}"


def flat(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(map(flat, value))
    if isinstance(value, dict):
        return ", ".join(f"{k} {flat(v)}" for k, v in value.items())
    return str(value)


def patient_view(patient: PatientFixture) -> str:
    """The picked patient and their records (synthetic)."""
    rows = [[record_line(r)] for r in patient.records()]
    return (
        f"<div class='mf-patient'><div class='mf-patient-name'>{escape(patient.name)}</div>"
        f"<div>{escape(patient.sex)} · born {escape(patient.birth_date)} · MRN {escape(patient.mrn)} · "
        f"id <code>{escape(patient.patient_id)}</code> · from {escape(patient.package_id)}</div>"
        f"<div class='mf-sub'>{len(rows)} records on file (all synthetic); the same record also holds "
        f"{escape(', '.join(patient.others()) or 'no other patient')}</div>"
        + table(["record"], rows, "mf-records")
        + "</div>"
    )


def readable(value: Any) -> list[str]:
    """A tool result as lines a clinician reads: records one per line, grouped by the key that lists them."""
    if isinstance(value, dict) and "resourceType" in value:
        return [record_line(summarize(value) | ({"text": value["text"]} if isinstance(value.get("text"), str) else {}))]
    if isinstance(value, dict) and "type" in value and "id" in value:
        return [record_line(value)]
    if isinstance(value, dict):
        lines = []
        for key, item in value.items():
            if isinstance(item, list) and item and all(isinstance(i, dict) for i in item):
                lines.append(f"<span class='mf-key'>{escape(key)} ({len(item)})</span>")
                lines += [f"&nbsp;&nbsp;{line}" for i in item for line in readable(i)]
            else:
                shown = escape(flat(item)) if item not in ([], None, "") else "<i>none</i>"
                lines.append(f"<span class='mf-key'>{escape(key)}</span> {shown}")
        return lines
    return [escape(flat(value))]


def result_view(value: Any) -> str:
    """A tool result read as a clinician would, then the raw JSON, folded."""
    text = json.dumps(value, ensure_ascii=False, indent=1)
    raw = f"<pre class='mf-json'>{escape(text[:4000])}{'…' if len(text) > 4000 else ''}</pre>"
    return "<br>".join(readable(value)) + f"<details><summary>raw JSON</summary>{raw}</details>"


def diff_view(changes: list[ResourceDiff]) -> str:
    """Resources added / changed / removed by one call, field by field (before → after)."""
    if not changes:
        return "<span class='mf-sub'>no change to the record</span>"
    out = []
    for d in changes:
        whole = [f.after if d.status == "added" else f.before for f in d.fields if f.path == "/"]
        if whole and isinstance(whole[0], dict):
            body = f"<div>{record_line(summarize(whole[0]))}</div>"
        else:
            body = (
                "<ul>"
                + "".join(
                    f"<li><code>{escape(f.path)}</code>: {short(f.before)} → <b>{short(f.after)}</b></li>"
                    for f in d.fields[:12]
                )
                + "</ul>"
            )
        out.append(
            f"<div class='mf-diff mf-{d.status}'>{d.status} <b>{escape(d.rtype)}</b>/{escape(d.rid)}{body}</div>"
        )
    return "".join(out)


def short(value: Any) -> str:
    if value is None:
        return "<i>none</i>"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return escape(text if len(text) <= 80 else text[:77] + "…")


def call_view(call: RecordedCall) -> str:
    """One recorded call: tool and arguments, decision, result, state change."""
    e = call.event
    error = e.error or {}  # a denied or failed call has its error
    if e.denied:
        verdict = f"<span class='mf-bad'>denied: {escape(e.denied)}</span> — {escape(error['message'])}"
    elif not e.ok:
        verdict = f"<span class='mf-bad'>failed: {escape(error['code'])}</span> — {escape(error['message'])}"
    else:
        verdict = "<span class='mf-good'>allowed</span>"
    flags = "".join(f" <span class='mf-flag'>⚠ {escape(f)}</span>" for f in e.flags)
    fault = f" <span class='mf-flag'>⚡ {escape(e.fault)}</span>" if e.fault else ""
    body = result_view(e.result) if e.ok else ""
    return (
        f"<div class='mf-call'><div class='mf-call-head'>step {e.step} · <b>{escape(e.tool)}</b> "
        f"<code>{escape(json.dumps(e.args, ensure_ascii=False))}</code> · {verdict}{flags}{fault}</div>"
        f"<div class='mf-two'><div><div class='mf-sub'>result</div>{body}</div>"
        f"<div><div class='mf-sub'>patient record</div>{diff_view(call.changes)}</div></div></div>"
    )


def calls_view(calls: list) -> str:
    """The calls so far (ToolCall or RecordedCall): step (from 1) and ``tool#n``, as edits name them."""
    plain = [getattr(c, "event", c) for c in calls]
    labels = call_labels(plain)
    rows = [
        [str(i), f"<code>{escape(label)}</code>", escape(json.dumps(c.args, ensure_ascii=False))]
        for i, (c, label) in enumerate(zip(plain, labels), 1)
    ]
    return table(["step", "call", "arguments"], rows) if rows else "<span class='mf-sub'>no calls yet</span>"


def edit_text(edit: Edit) -> str:
    """An edit in words: ``drop allergy_list#1``, ``set medication_request_create#1.dose to 40 mg``."""
    call = f"{edit.call.tool} {json.dumps(edit.call.args, ensure_ascii=False)}" if edit.call else ""
    value = json.dumps(edit.value, ensure_ascii=False) if not isinstance(edit.value, str) else edit.value
    return {
        "drop": f"drop {edit.at}",
        "replace": f"replace {edit.at} by {call}",
        "insert": f"insert {call} " + (f"before {edit.at}" if edit.at else "at the end"),
        "set": f"set {edit.path} to {value}",
        "add": f"add {edit.path} = {value}",
        "delete": f"delete {edit.path}",
    }[edit.op]


def problems_view(problems: list[str]) -> str:
    if not problems:
        return "<div class='mf-ok'>✓ valid so far</div>"
    return "".join(f"<div class='mf-problem'>✗ {escape(p)}</div>" for p in problems)


CHECK_ORDER = ("validation", "selftest")


def status_view(found: list[str], results: dict[str, tuple[bool, str]]) -> str:
    """The designer's one status line, from the very results its sections show: what the form still lacks, else
    the checks run on the draft as it is; never "valid" beside a check that failed."""
    if found:
        return problems_view(found)
    failed = [(c, said) for c in CHECK_ORDER if c in results and not results[c][0] for said in [results[c][1]]]
    if failed:
        return "".join(
            f"<div class='mf-problem'>✗ {escape(check)} failed{': ' + escape(said) if said else ''} "
            f"(see 6 Check &amp; save)</div>"
            for check, said in failed
        )
    done = [f"{c} passed" for c in CHECK_ORDER if c in results]
    todo = [f"{c} not run yet" for c in CHECK_ORDER if c not in results]
    return f"<div class='mf-ok'>✓ valid so far · {escape(' · '.join(done + todo))}</div>"


def selftest_view(result: SelftestResult) -> str:
    """Cases and mutants, each with its outcome; the survivors listed."""
    head = (
        "<div class='mf-ok'>✓ selftest passed</div>" if result.ok else "<div class='mf-problem'>✗ selftest failed</div>"
    )
    rows = [
        [
            escape(c.kind),
            escape(c.case),
            "<span class='mf-good'>ok</span>" if c.ok else "<span class='mf-bad'>FAIL</span>",
            escape(c.detail),
        ]
        for c in result.cases
    ]
    out = head + table(["case", "name", "", "detail"], rows)
    if result.mutants is not None:
        totals = operator_totals([result.mutants])
        mrows = [
            [escape(op), str(c["rejected"]), str(c["declared valid"]), str(c["survived"])]
            for op, c in totals.items()
            if c
        ]
        out += "<div class='mf-sub'>mutants (--mutants)</div>" + table(
            ["operator", "rejected", "declared valid", "survived"], mrows
        )
        bad = [r for r in result.mutants.results if r.status in PROBLEMS and r.status != "survived"]  # the
        # survivors are listed with their fixes (designer.py)
        out += "".join(
            f"<div class='mf-problem'>{escape(r.status)}: {escape(r.mutant.operator)} "
            f"{escape(r.mutant.target)} — {escape(r.mutant.note)}</div>"
            for r in bad
        )
        out += "".join(
            f"<div class='mf-problem'>declared valid mutant matches nothing: {escape(d.operator)} "
            f"{escape(d.target)}</div>"
            for d in result.mutants.unmatched
        )
    return out


def dry_run_view(runs: list[DryRun]) -> str:
    rows = [
        [
            escape(r.agent),
            "<span class='mf-good'>PASS</span>" if r.passed else "<span class='mf-bad'>FAIL</span>",
            f"{r.accuracy:.2f}",
            str(r.completion),
            escape(", ".join(r.failing) or "—"),
            escape(r.status),
        ]
        for r in runs
    ]
    return table(["agent", "result", "tool-call accuracy", "completion", "failing hard verdicts", "status"], rows)
