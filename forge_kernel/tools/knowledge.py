"""Knowledge tools over small curated tables (synthetic, for evaluation only; not clinical advice)."""

from __future__ import annotations

from functools import cache
from itertools import combinations
from pathlib import Path

import yaml
from pydantic import Field

from ..ehr import lookup_key
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


@cache
def dose_terms() -> dict[tuple[str, str], str]:
    """(kind, looked-up term) -> code, for the routes and frequencies of ``tables/dose_terms.yaml``."""
    return {
        (row["kind"], lookup_key(term)): row["code"]
        for row in table("dose_terms")
        for term in [row["code"], *row["terms"]]
    }


def dose_code(kind: str, term: str) -> str | None:
    """The code of a route or frequency (``kind``) however it is written ("PO", "口服" -> "oral"), or None."""
    return dose_terms().get((kind, lookup_key(term)))


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


SEXES = {"male": "male", "m": "male", "男": "male", "female": "female", "f": "female", "女": "female"}


class DifferentialArgs(Args):
    symptoms: list[str] = Field(
        min_length=1, description="Presenting symptoms and findings, and relevant history (e.g. 房颤, 近期手术)."
    )
    age: int | None = Field(None, ge=0, le=130)
    sex: str | None = Field(None, description="male or female; diagnoses of the other sex are left out.")


@tool("differential_diagnosis", kind="compute")
def differential_diagnosis(ctx: ToolContext, args: DifferentialArgs) -> dict:
    """Candidate diagnoses ranked by matching findings, each with the examinations that would settle it and the
    vital-sign red flags to check first. A finding matches a table term it contains (胸痛伴出汗 matches 胸痛, 出汗)."""
    given = [s.strip().lower() for s in args.symptoms]
    sex = SEXES.get((args.sex or "").strip().lower())
    ranked = []
    for row in table("differentials"):
        if sex and row.get("sex", sex) != sex:
            continue
        matched = [s for s in row["symptoms"] if any(s.lower() in g for g in given)]
        if matched:
            ranked.append(
                {
                    "diagnosis": row["diagnosis"],
                    "matched": matched,
                    "score": round(len(matched) / len(row["symptoms"]), 2),
                    "recommended_exams": row["exams"],
                    "red_flags": row.get("red_flags", []),
                }
            )
    ranked.sort(key=lambda r: (-len(r["matched"]), -r["score"], r["diagnosis"]))
    return {"candidates": ranked}
