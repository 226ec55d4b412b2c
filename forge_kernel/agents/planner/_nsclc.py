"""Plan for trial_matching (suite forge-nsclc): assess each criterion of trial protocols, submit, follow up, rank.

Context keys:

- ``mrn``: the patient.
- ``request``: what is asked; only ``trial_eligibility`` (the default) is within this agent's domain.
- ``protocol_id``: the trial to assess. Without it, every protocol ``protocol_search`` finds for ``condition``
  (default 非小细胞肺癌) is assessed and the candidates are ranked.
- ``protocol_version``: the protocol version the referral names (trusted: see the limitation below).
- ``criteria``: assess only these criterion ids (a pre-screen); the eligibility is then never ``eligible``.
- ``requests``: referral requests ``[{request_id, protocol_id}]``. Each is submitted with its request id in the
  idempotency key, so a request delivered twice writes one assessment.

Each criterion is met / not_met / unknown / conflict, citing this patient's records (``Type/id``). The assessments
go to ``criterion_assessment_submit`` when the task has that tool, and always to the structured output, in the
shape the suite's typed answer (``task.answer``) declares: ``{in_scope, assessments: [{protocol_id,
protocol_version, eligibility, criteria: [{criterion_id, status, evidence, reason}]}], ranking, recommended}``,
every field given (empty lists and a null recommendation when nothing is assessed). Unknown criteria get a
follow-up Task (``task_create``); disagreeing sources go to a human (``escalate_to_human``).

Features read here:

- ``respects_records``: honour each rule's look-back window (``within_days``); without it the newest result on
  file counts however old it is (baseline-v1).
- ``safety_checks``: evaluate the exclusion criteria; without it they are reported not_met without being read.
- ``conflict_retention``: two tests of one criterion that disagree make it ``conflict``; without it the newest wins.
- ``domain_gate``: a request outside trial eligibility is escalated and nothing is assessed; without it the plan
  screens trials anyway.

Clinical notes are data: the plan reads scores (ECOG) from them and never acts on what a note asks for.

Limitation (not handled): the plan trusts the protocol version the referral names and does not check that it is
still current, so a referral citing a superseded version is assessed against the old criteria
(TP-STALE-VERSION-v1 fails for every reference agent).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from ...tools import criterion_leaves
from .core import Plan, PlanContext, plan

IN_DOMAIN = "trial_eligibility"
SUBMIT = "criterion_assessment_submit"
NEGATIVE = ("未检出", "阴性", "野生型", "not detected", "negative", "wild-type", "wild type")
READERS = {
    "condition": "patient_history",
    "lab": "lab_results",
    "note": "note_search",
    "medication": "medication_search",
}
"""Rule domain -> the read tool that holds its records."""
MISSING = {"lab": "missing_lab", "note": "missing_documentation"}
RANK = {"eligible": 0, "undetermined": 1, "ineligible": 2}
WORDS = {
    "zh": {
        "eligible": "符合入组条件",
        "ineligible": "不符合入组条件",
        "undetermined": "入组资格待定",
        "none": "{days} 天内无结果",
        "old": "最近一次 {date} 已超出窗口",
        "task": "已创建随访任务补充缺失资料。",
        "escalated": "来源不一致，已提交人工复核。",
        "recommended": "推荐试验：{id}。",
        "sep": "；",
        "out": "该请求（{request}）不属于临床试验入组评估，超出本代理职责范围；已转交临床医师，未做评估或医嘱。",
        "unread": "无法读取试验方案，未作评估。",
    },
    "en": {
        "eligible": "can enrol",
        "ineligible": "cannot enrol",
        "undetermined": "eligibility undetermined",
        "none": "no result within {days} days",
        "old": "latest on {date} is outside the window",
        "task": "A follow-up task was created for the missing data.",
        "escalated": "Sources disagree; handed to a human reviewer.",
        "recommended": "Recommended trial: {id}.",
        "sep": "; ",
        "out": "This request ({request}) is not trial-eligibility assessment and is outside this "
        "agent's scope; handed to a clinician, nothing assessed or ordered.",
        "unread": "The trial protocol could not be read; nothing assessed.",
    },
}


@dataclass
class Row:
    """One record that bears on a criterion: its reference, source name, time and value."""

    ref: str
    name: str
    time: str
    value: Any


@dataclass
class Finding:
    criterion_id: str
    status: str
    evidence: list[str] = field(default_factory=list)
    reason: str | None = None
    detail: str = ""

    def as_output(self) -> dict:
        return {
            "criterion_id": self.criterion_id,
            "status": self.status,
            "evidence": self.evidence,
            "reason": self.reason,
        }


@dataclass
class Assessment:
    protocol: dict
    findings: list[Finding]
    eligibility: str

    def as_output(self) -> dict:
        return {
            "protocol_id": self.protocol["protocol_id"],
            "protocol_version": self.protocol["version"],
            "eligibility": self.eligibility,
            "criteria": [f.as_output() for f in self.findings],
        }

    def label(self) -> str:
        return f"{self.protocol['protocol_id']} v{self.protocol['version']}"


def words(ctx: PlanContext) -> dict[str, str]:
    return WORDS["en" if ctx.task.language == "en" else "zh"]


def ref(item: dict) -> str:
    return f"{item['type']}/{item['id']}"


def mentions(name: str | None, terms: list[str]) -> bool:
    return bool(name and any(t.lower() in name.lower() for t in terms))


def in_unit(value: Any, unit: str | None) -> float | None:
    """A numeric value in the rule's unit (10^9/L from /µL is converted), or None if it cannot be read."""
    if isinstance(value, (int, float)):
        return float(value)
    if not isinstance(value, dict) or not isinstance(value.get("value"), (int, float)):
        return None
    given = (value.get("unit") or "").replace(" ", "").replace("cells", "").replace("μ", "µ").lower()
    if unit is None or given == unit.lower():
        return float(value["value"])
    if unit.lower() == "10^9/l" and given in ("/µl", "/ul"):
        return value["value"] / 1000
    return None


def value_status(rule: dict, value: Any) -> str | None:
    """met / not_met for one value, or None when it cannot be read."""
    if "finding" in rule:
        text = str(value).lower()
        if any(w in text for w in NEGATIVE):
            found = "negative"
        else:
            found = "positive" if not rule.get("marker") or rule["marker"].lower() in text else "other"
        return "met" if found == rule["finding"] else "not_met"
    number = in_unit(value, rule.get("unit"))
    if number is None:
        return None
    ok = rule.get("min", float("-inf")) <= number <= rule.get("max", float("inf"))
    return "met" if ok else "not_met"


def rows_for(rule: dict, data: dict) -> list[Row]:
    """The records of a lab or note rule: lab results by name, or scores written in notes as '<term> <n>'."""
    if rule["domain"] == "lab":
        return [
            Row(ref(r), r["name"], r["time"], r.get("value"))
            for r in data.get("items", [])
            if mentions(r.get("name"), rule["terms"])
        ]
    rows = []
    for note in data.get("items", []):
        for term in rule["terms"]:
            score = re.search(
                rf"{re.escape(term)}\s*(?:评分|PS|体能状态)?\s*(?:[:：]|为)?\s*([0-5])(?!\d)", note["text"]
            )
            if score:
                rows.append(Row(ref(note), note.get("name", "note"), note["time"], int(score.group(1))))
    return rows


def judge_rows(ctx: PlanContext, cid: str, rule: dict, rows: list[Row]) -> Finding:
    """Newest result per test within the window; tests that disagree are a conflict (or the newest wins)."""
    rows = sorted(rows, key=lambda r: ctx.time_of(r.time))
    days = rule.get("within_days")
    recent = rows
    if days and ctx.features.respects_records:
        recent = [r for r in rows if ctx.time_of(r.time) >= ctx.task.now - timedelta(days=days)]
    if not recent:
        say = words(ctx)
        detail = say["none"].format(days=days) if days else ""
        if rows:
            detail += say["sep"] + say["old"].format(date=rows[-1].time[:10])
        return Finding(cid, "unknown", reason=MISSING[rule["domain"]], detail=detail)
    newest = {r.name: r for r in recent}
    judged = [(r, s) for r in newest.values() if (s := value_status(rule, r.value))]
    if not judged:
        return Finding(cid, "unknown", reason="unreadable_result")
    if len({s for _, s in judged}) > 1:
        if ctx.features.conflict_retention:
            detail = ", ".join(f"{r.name}: {r.value}" for r, _ in judged)
            return Finding(cid, "conflict", [r.ref for r, _ in judged], "sources_disagree", detail)
        judged = [max(judged, key=lambda j: ctx.time_of(j[0].time))]
    return Finding(cid, judged[0][1], [r.ref for r, _ in judged])


def judge(ctx: PlanContext, cid: str, rule: dict, data: dict) -> Finding:
    """One criterion against the records of its domain."""
    domain = rule["domain"]
    if domain in ("lab", "note"):
        return judge_rows(ctx, cid, rule, rows_for(rule, data))
    if domain == "medication":
        found = [ref(m) for m in data.get("medications", []) if mentions(m.get("name"), rule["terms"])]
        return Finding(cid, "met" if found else "not_met", found)
    found = [
        ref(c)
        for c in data.get("conditions", [])
        if c.get("status") == "active" and mentions(c.get("name"), rule["terms"])
    ]
    treated = [ref(p) for p in data.get("procedures", []) if mentions(p.get("name"), rule.get("unless", []))]
    if found and not treated:
        return Finding(cid, "met", found)
    return Finding(cid, "not_met", found + treated if found else [])


def combine(op: str, statuses: list[str | None]) -> str | None:
    """Three-valued all / any over children (None: nothing assessed)."""
    known = [s for s in statuses if s]
    if not known:
        return None
    decisive, other = ("not_met", "met") if op == "all" else ("met", "not_met")
    if decisive in known:
        return decisive
    if all(s == other for s in known):
        return other
    return "conflict" if "conflict" in known else "unknown"


class Screening:
    """Assesses protocols for one patient, reading each record domain once."""

    def __init__(self, ctx: PlanContext):
        self.ctx = ctx
        self.only = set(ctx.task.context.get("criteria") or [])
        self._records: dict[str, Any] = {}

    async def records(self, domain: str) -> dict | None:
        if domain not in self._records:
            self._records[domain] = await self.ctx.on_patient(READERS[domain])
        return self._records[domain]

    async def walk(self, node: dict, findings: list[Finding], exclusion: bool) -> str | None:
        if "id" not in node:
            op = "all" if "all" in node else "any"
            return combine(op, [await self.walk(child, findings, exclusion) for child in node[op]])
        if self.only and node["id"] not in self.only:
            return None
        if exclusion and not self.ctx.features.safety_checks:
            finding = Finding(node["id"], "not_met")
        else:
            data = await self.records(node["rule"]["domain"])
            finding = (
                Finding(node["id"], "unknown", reason="record_unavailable")
                if data is None
                else judge(self.ctx, node["id"], node["rule"], data)
            )
        findings.append(finding)
        return finding.status

    async def assess(self, protocol: dict) -> Assessment:
        findings: list[Finding] = []
        inclusion = await self.walk(protocol["criteria"]["inclusion"], findings, exclusion=False)
        exclusion = await self.walk(protocol["criteria"]["exclusion"], findings, exclusion=True)
        if inclusion == "not_met" or exclusion == "met":
            eligibility = "ineligible"
        elif inclusion in ("met", None) and exclusion in ("not_met", None) and not self.only:
            eligibility = "eligible"
        else:
            eligibility = "undetermined"
        return Assessment(protocol, findings, eligibility)


async def referrals(ctx: PlanContext) -> list[tuple[str, dict]]:
    """(request id, protocol version read with protocol_get) pairs to assess; each version is read once."""
    context = ctx.task.context
    requests = context.get("requests")
    if requests is None and "protocol_id" in context:
        requests = [
            {
                "request_id": ctx.task.task_id,
                "protocol_id": context["protocol_id"],
                "protocol_version": context.get("protocol_version"),
            }
        ]
    if requests is None:
        found = await ctx.call("protocol_search", condition=context.get("condition", "非小细胞肺癌")) or {}
        requests = [
            {"request_id": ctx.task.task_id, "protocol_id": p["protocol_id"]} for p in found.get("protocols", [])
        ]
    protocols: dict[tuple, dict | None] = {}
    out = []
    for request in requests:
        key = (request["protocol_id"], request.get("protocol_version"))
        if key not in protocols:
            args = {"version": key[1]} if key[1] else {}
            protocols[key] = await ctx.call("protocol_get", protocol_id=key[0], **args)
        protocol = protocols[key]
        if protocol:
            out.append((request["request_id"], protocol))
    return out


async def follow_up(ctx: PlanContext, assessment: Assessment) -> tuple[bool, bool]:
    """A follow-up Task for unknown criteria and an escalation for conflicts: (task created, escalated)."""
    texts = {c["id"]: c for c in criterion_leaves(assessment.protocol["criteria"])}
    text_key = "text_en" if ctx.task.language == "en" else "text"

    def line(f: Finding) -> str:
        return f"{assessment.label()} {f.criterion_id} {texts[f.criterion_id][text_key]}: {f.detail or f.reason}"

    unknown = [f for f in assessment.findings if f.status == "unknown"]
    conflict = [f for f in assessment.findings if f.status == "conflict"]
    key = f"{ctx.task.task_id}:{assessment.label()}"
    if unknown:
        await ctx.on_patient(
            "task_create",
            description=" | ".join(map(line, unknown)),
            reason=",".join(sorted({f.reason for f in unknown if f.reason is not None})),
            idempotency_key=f"{key}:follow-up",
        )
    if conflict:
        await ctx.on_patient(
            "escalate_to_human", reason=" | ".join(map(line, conflict)), idempotency_key=f"{key}:conflict"
        )
    return bool(unknown), bool(conflict)


def answered(in_scope: bool, ranked: Sequence[Assessment] = (), recommended: str | None = None) -> dict:
    """The structured output: every field of the typed answer, the assessments best first."""
    return {
        "in_scope": in_scope,
        "assessments": [a.as_output() for a in ranked],
        "ranking": [a.protocol["protocol_id"] for a in ranked],
        "recommended": recommended,
    }


def summary(ctx: PlanContext, a: Assessment) -> str:
    say = words(ctx)
    parts = [
        f"{f.criterion_id} {f.status}"
        + (f" ({f.reason}: {f.detail})" if f.detail else f" ({f.reason})" if f.reason else "")
        for f in a.findings
    ]
    return f"{a.label()}: {say[a.eligibility]} ({a.eligibility}). " + say["sep"].join(parts) + "."


@plan("trial_matching")
async def trial_matching(ctx: PlanContext) -> Plan:
    """Gate the domain, assess each referred (or found) protocol, submit, follow up, rank."""
    say = words(ctx)
    request = ctx.task.context.get("request", IN_DOMAIN)
    if request != IN_DOMAIN and ctx.features.domain_gate:
        await ctx.on_patient(
            "escalate_to_human",
            reason=f"out of scope for trial matching ({request}): {ctx.task.instruction}",
            idempotency_key=f"{ctx.task.task_id}:out-of-scope",
        )
        return Plan(say["out"].format(request=request), output=answered(False), status="escalated")
    screening = Screening(ctx)
    tools = set(ctx.task.tool_names)
    assessed: dict[tuple, Assessment] = {}
    for request_id, protocol in await referrals(ctx):
        key = (protocol["protocol_id"], protocol["version"])
        if key not in assessed:
            assessed[key] = await screening.assess(protocol)
        if SUBMIT in tools:
            a = assessed[key]
            await ctx.on_patient(
                SUBMIT,
                protocol_id=key[0],
                protocol_version=key[1],
                eligibility=a.eligibility,
                criteria=[f.as_output() for f in a.findings],
                idempotency_key=f"{request_id}:{key[0]}:v{key[1]}",
            )
    if not assessed:
        return Plan(say["unread"], output=answered(True), status="gave_up")
    tasks = escalations = False
    for a in assessed.values():
        task, escalated = await follow_up(ctx, a)
        tasks, escalations = tasks or task, escalations or escalated
    ranked = sorted(
        assessed.values(),
        key=lambda a: (RANK[a.eligibility], -sum(f.status == "met" for f in a.findings), a.protocol["protocol_id"]),
    )
    recommended = next((a.protocol["protocol_id"] for a in ranked if a.eligibility == "eligible"), None)
    lines = [summary(ctx, a) for a in ranked]
    if len(ranked) > 1 and recommended:
        lines.append(say["recommended"].format(id=recommended))
    lines += [say["task"]] * tasks + [say["escalated"]] * escalations
    output = answered(True, ranked, recommended)
    return Plan(" ".join(lines), output=output, status="escalated" if escalations else "completed")
