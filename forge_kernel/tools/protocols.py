"""Trial-protocol reads over the versioned protocol table (``tables/protocols.yaml``; synthetic, fictional studies)."""

from __future__ import annotations

import copy
from functools import cache

from pydantic import Field

from .base import Args, ToolContext, ToolError, tool
from .knowledge import table

SUMMARY_FIELDS = ("title", "title_en", "phase", "condition")
CODE_SYSTEMS = {"loinc": "http://loinc.org", "sct": "http://snomed.info/sct", "local": "urn:forge:local"}
"""The code systems a criterion's ``codes`` name, by the short name the protocols use."""


def criterion_leaves(node: dict) -> list[dict]:
    """Every criterion (leaf with an id) of a protocol's criteria tree, inclusion first."""
    if "id" in node:
        return [node]
    if "inclusion" in node:
        return criterion_leaves(node["inclusion"]) + criterion_leaves(node["exclusion"])
    return [leaf for child in node.get("all", node.get("any", [])) for leaf in criterion_leaves(child)]


@cache
def criterion_rules() -> dict[tuple[str, str, str], dict]:
    """(protocol id, version, criterion id) -> the criterion's rule, for every criterion of the table (the table is
    read once and never changes)."""
    return {
        (protocol["id"], v["version"], leaf["id"]): leaf.get("rule", {})
        for protocol in table("protocols")
        for v in protocol["versions"]
        for leaf in criterion_leaves(v["criteria"])
    }


def criterion_rule(protocol_id: object, version: object, criterion_id: object) -> dict:
    """The rule of one criterion of a protocol version; empty when the table has no such criterion."""
    return criterion_rules().get((str(protocol_id), str(version), str(criterion_id)), {})


def criterion_window(protocol_id: object, version: object, criterion_id: object) -> float | None:
    """The look-back window in days (``within_days``) of one criterion of a protocol version, if it declares one."""
    return criterion_rule(protocol_id, version, criterion_id).get("within_days")


def criterion_codes(protocol_id: object, version: object, criterion_id: object) -> frozenset[tuple[str, str]]:
    """The (system, code) pairs of the records that can support one criterion of a protocol version (its rule's
    ``codes``, by system name); empty when it declares none."""
    return criterion_code_sets().get((str(protocol_id), str(version), str(criterion_id)), frozenset())


@cache
def criterion_code_sets() -> dict[tuple[str, str, str], frozenset[tuple[str, str]]]:
    """``criterion_codes`` of every criterion that declares codes, read once."""
    return {
        key: frozenset((CODE_SYSTEMS[name], str(code)) for name, listed in rule["codes"].items() for code in listed)
        for key, rule in criterion_rules().items()
        if rule.get("codes")
    }


def code_label(system: str, code: str) -> str:
    """A code as the protocols write it: its system's short name, then the code ("loinc 751-8")."""
    name = next((n for n, uri in CODE_SYSTEMS.items() if uri == system), system)
    return f"{name} {code}"


def current_version(protocol: dict) -> dict:
    return next(v for v in protocol["versions"] if v["status"] == "current")


class ProtocolSearchArgs(Args):
    condition: str | None = Field(None, description="Part of the trial's condition, e.g. 非小细胞肺癌.")
    keyword: str | None = Field(None, description="Part of the trial's id or title.")


@tool("protocol_search", kind="read")
def protocol_search(ctx: ToolContext, args: ProtocolSearchArgs) -> dict:
    """Trial protocols by condition or keyword: id, title, phase, current version and every version on file."""
    found = []
    for protocol in table("protocols"):
        if args.condition and args.condition.lower() not in protocol["condition"].lower():
            continue
        haystack = " ".join([protocol["id"], protocol["title"], protocol["title_en"]]).lower()
        if args.keyword and args.keyword.lower() not in haystack:
            continue
        found.append(
            {
                "protocol_id": protocol["id"],
                **{k: protocol[k] for k in SUMMARY_FIELDS},
                "current_version": current_version(protocol)["version"],
                "versions": [v["version"] for v in protocol["versions"]],
            }
        )
    return {"protocols": found}


class ProtocolGetArgs(Args):
    protocol_id: str = Field(description="The protocol's id, as protocol_search returns it.")
    version: str | None = Field(None, description="A version on file; by default the current one.")


def protocol_version(protocol_id: str, version: str | None) -> tuple[dict, dict]:
    """A protocol and one of its versions (by default the current one); a ToolError when either is not on file."""
    protocol = next((p for p in table("protocols") if p["id"] == protocol_id), None)
    if protocol is None:
        raise ToolError("not_found", f"no protocol {protocol_id!r}")
    if version is None:
        return protocol, current_version(protocol)
    wanted = next((v for v in protocol["versions"] if v["version"] == version), None)
    if wanted is None:
        raise ToolError("not_found", f"{protocol_id} has no version {version!r}")
    return protocol, wanted


@tool("protocol_get", kind="read")
def protocol_get(ctx: ToolContext, args: ProtocolGetArgs) -> dict:
    """One protocol version's criteria tree (inclusion / exclusion), its status and the current version."""
    protocol, wanted = protocol_version(args.protocol_id, args.version)
    return {
        "protocol_id": protocol["id"],
        **{k: protocol[k] for k in SUMMARY_FIELDS},
        "current_version": current_version(protocol)["version"],
        **copy.deepcopy(wanted),
    }


GROUP_WORDS = {"all": "须全部满足 / all of", "any": "满足任一 / any of"}
"""How the document heads a group of criteria."""


def criteria_lines(node: dict, depth: int = 0) -> list[str]:
    """A criteria group as the document writes it: one line per criterion ("I3. <zh> / <en>"), a nested group
    headed by how its members combine, indented under it."""
    indent = "  " * depth
    if "id" in node:
        return [f"{indent}{node['id']}. {node['text']} / {node['text_en']}"]
    combine = "all" if "all" in node else "any"
    return [f"{indent}（{GROUP_WORDS[combine]}）", *members(node, depth + 1)]


def members(group: dict, depth: int) -> list[str]:
    """The lines of a group's members."""
    return [line for child in group["all" if "all" in group else "any"] for line in criteria_lines(child, depth)]


def protocol_document(protocol: dict, version: dict) -> str:
    """One protocol version as its eligibility section reads: title, version, then the inclusion and the exclusion
    criteria in prose, without the computable rules behind them."""
    criteria = version["criteria"]
    sections = [
        f"{protocol['id']} {protocol['title']}",
        protocol["title_en"],
        f"版本 Version {version['version']}（{version['status']}，{version['effective']}）",
    ]
    for part, heading in (("inclusion", "入选标准 Inclusion criteria"), ("exclusion", "排除标准 Exclusion criteria")):
        combine = "all" if "all" in criteria[part] else "any"
        sections += ["", f"{heading}（{GROUP_WORDS[combine]}）:", *members(criteria[part], 0)]
    return "\n".join(sections)


@tool("protocol_text", kind="read")
def protocol_text(ctx: ToolContext, args: ProtocolGetArgs) -> dict:
    """One protocol version's eligibility criteria as the protocol document writes them (prose, no rules)."""
    protocol, wanted = protocol_version(args.protocol_id, args.version)
    return {
        "protocol_id": protocol["id"],
        "version": wanted["version"],
        "status": wanted["status"],
        "text": protocol_document(protocol, wanted),
    }
