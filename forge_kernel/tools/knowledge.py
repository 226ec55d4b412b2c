"""Knowledge tools over small curated tables (synthetic, for evaluation only; not clinical advice)."""
from __future__ import annotations

from functools import cache
from itertools import combinations
from pathlib import Path

import yaml
from pydantic import Field

from .base import Args, ToolContext, ToolError, tool

TABLES = Path(__file__).with_name("tables")


@cache
def table(name: str) -> list[dict]:
    """One knowledge table (``tables/<name>.yaml``), loaded once."""
    return yaml.safe_load((TABLES / f"{name}.yaml").read_text(encoding="utf-8"))[name]


@cache
def drug_names() -> dict[str, str]:
    """Lower-cased name or alias -> canonical drug name."""
    return {alias.lower(): d["name"] for d in table("drugs") for alias in [d["name"], *d.get("aliases", [])]}


def canonical_drug(name: str) -> str:
    return drug_names().get(name.strip().lower(), name.strip())


class DrugInfoArgs(Args):
    name: str = Field(description="Drug name (generic, Chinese or English).")


@tool("drug_info", kind="compute")
def drug_info(ctx: ToolContext, args: DrugInfoArgs) -> dict:
    """Class, indications, contraindications and usual dose of a drug (synthetic table)."""
    wanted = canonical_drug(args.name)
    for drug in table("drugs"):
        if drug["name"] == wanted:
            return {key: value for key, value in drug.items() if key != "aliases"}
    raise ToolError("not_found", f"no drug named {args.name!r} in the table")


class InteractionArgs(Args):
    drugs: list[str] = Field(min_length=2, description="All drugs to check together: current ones and the new one.")


@tool("drug_interaction_check", kind="compute")
def drug_interaction_check(ctx: ToolContext, args: InteractionArgs) -> dict:
    """Known interactions between every pair of the given drugs (synthetic table)."""
    names = sorted({canonical_drug(d) for d in args.drugs})
    found = []
    for a, b in combinations(names, 2):
        for row in table("interactions"):
            if {a, b} == set(row["drugs"]):
                found.append({"drugs": [a, b], "severity": row["severity"], "effect": row["effect"]})
    return {"checked": names, "interactions": found}


class DifferentialArgs(Args):
    symptoms: list[str] = Field(min_length=1, description="Presenting symptoms and findings.")
    age: int | None = Field(None, ge=0, le=130)
    sex: str | None = None


@tool("differential_diagnosis", kind="compute")
def differential_diagnosis(ctx: ToolContext, args: DifferentialArgs) -> dict:
    """Candidate diagnoses ranked by matching symptoms, each with the examinations that would settle it."""
    given = {s.strip().lower() for s in args.symptoms}
    ranked = []
    for row in table("differentials"):
        matched = [s for s in row["symptoms"] if s.lower() in given]
        if matched:
            ranked.append({"diagnosis": row["diagnosis"], "matched": matched,
                           "score": round(len(matched) / len(row["symptoms"]), 2), "recommended_exams": row["exams"]})
    ranked.sort(key=lambda r: (-len(r["matched"]), -r["score"], r["diagnosis"]))
    return {"candidates": ranked}
