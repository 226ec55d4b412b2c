"""Plan for protocol_extraction: read a trial protocol's eligibility text and extract its criteria as nodes.

Context keys: ``protocol_id`` and ``protocol_version`` (by default the current version). The plan reads the text
with ``protocol_text`` and turns each criterion line (``I3. <zh> / <en>``) into a node of the typed answer's
``criteria``: ``{id, criterion, kind, operator, threshold, unit, window}``, read from the English wording:

- the section it stands in gives the kind (inclusion or exclusion);
- "(within N days ...)" is the look-back window, N days;
- "<name> >= 1.5 x 10^9/L" a threshold with its operator and unit; "<name> 0–1" a score of at most 1;
- "No <name>" a finding that must be absent; anything else a finding that must be present.

Features read here: ``respects_records``: keep each criterion's look-back window; without it the windows are left
out (baseline-v1).
"""

from __future__ import annotations

import re
from typing import Any

from .core import Plan, PlanContext, plan

SECTIONS = {"入选标准": "inclusion", "排除标准": "exclusion"}
LINE = re.compile(r"^\s*([A-Z]\d+[a-z]?)\. (.+) / (.+)$")
WINDOW = re.compile(r"\s*\(within (\d+) days?[^)]*\)")
COMPARED = re.compile(r"^(.*?)\s*(>=|<=|>|<|≥|≤)\s*(\d+(?:\.\d+)?)\s*(?:x\s*)?(\S*)$")
SCORE_RANGE = re.compile(r"^(.*?)\s+(\d+)\s*[–-]\s*(\d+)$")
ABSENT = re.compile(r"^No (.+)$")


def node_of(label: str, english: str, kind: str, with_window: bool) -> dict[str, Any]:
    """One criterion line's node, read from its English wording."""
    window = WINDOW.search(english)
    text = WINDOW.sub("", english).strip()
    node: dict[str, Any] = {"id": label, "criterion": text, "kind": kind, "operator": "present", "threshold": None}
    node |= {"unit": None, "window": {"value": int(window.group(1)), "unit": "day"} if window and with_window else None}
    if compared := COMPARED.match(text):
        name, operator, value, unit = compared.groups()
        node |= {"criterion": name, "operator": operator, "threshold": float(value), "unit": unit or None}
    elif scored := SCORE_RANGE.match(text):
        node |= {"criterion": scored.group(1), "operator": "<=", "threshold": float(scored.group(3))}
    elif absent := ABSENT.match(text):
        node |= {"criterion": absent.group(1), "operator": "absent"}
    return node


def extracted(document: str, with_window: bool) -> list[dict[str, Any]]:
    """Every criterion of a protocol document, in its order."""
    nodes, kind = [], "inclusion"
    for line in document.splitlines():
        kind = next((k for heading, k in SECTIONS.items() if line.startswith(heading)), kind)
        if found := LINE.match(line):
            nodes.append(node_of(found.group(1), found.group(3), kind, with_window))
    return nodes


@plan("protocol_extraction", finds_patient=True)
async def protocol_extraction(ctx: PlanContext) -> Plan:
    args = {"protocol_id": ctx.task.context["protocol_id"]}
    if version := ctx.task.context.get("protocol_version"):
        args["version"] = version
    read = await ctx.call("protocol_text", **args)
    if read is None:
        return Plan("无法读取试验方案，未作提取。The protocol could not be read.", {"criteria": []}, "gave_up")
    nodes = extracted(read["text"], ctx.features.respects_records)
    answer = (
        f"已提取 {read['protocol_id']} 方案 {read['version']} 版的入选与排除标准。"
        f"The eligibility criteria of {read['protocol_id']} version {read['version']} are extracted."
    )
    return Plan(answer, {"criteria": nodes})
