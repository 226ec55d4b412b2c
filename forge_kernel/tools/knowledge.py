"""Knowledge tools over small curated tables (synthetic, for evaluation only; not clinical advice)."""

from __future__ import annotations

from functools import cache, lru_cache
from itertools import combinations
from pathlib import Path

import yaml
from pydantic import Field

from ..ehr import lookup_key
from ._prescriptions import Resolved, ingredient_names, without_salt
from .base import Args, ToolContext, ToolError, tool

TABLES = Path(__file__).with_name("tables")


@cache
def table(name: str) -> list[dict]:
    """One knowledge table (``tables/<name>.yaml``), loaded once."""
    return yaml.safe_load((TABLES / f"{name}.yaml").read_text(encoding="utf-8"))[name]


@cache
def drug_names() -> dict[str, str]:
    """Name or alias, looked-up form (lower case, ASCII widths) -> canonical drug name."""
    return {lookup_key(alias): d["name"] for d in table("drugs") for alias in [d["name"], *d.get("aliases", [])]}


@cache
def ingredient_index() -> dict[frozenset[str], str]:
    """The set of a drug's RxNorm ingredient names (looked-up form) -> the drug."""
    return {frozenset(lookup_key(i) for i in d["rxnorm"]): d["name"] for d in table("drugs") if d.get("rxnorm")}


@lru_cache(maxsize=4096)
def resolve_drugs(text: str) -> Resolved:
    """The drugs of the table a name or prescription string means (``_prescriptions`` says how)."""
    names, rows = drug_names(), ingredient_index()
    whole = names.get(lookup_key(text))
    if whole:
        return Resolved((whole,), ())
    parts = [without_salt(part, names) for part in ingredient_names(text)]
    if frozenset(parts) in rows:
        return Resolved((rows[frozenset(parts)],), ())
    known = [names.get(p) or rows.get(frozenset({p})) for p in parts]
    unknown = [p for p, k in zip(parts, known, strict=True) if not k]
    return Resolved(tuple(dict.fromkeys(k for k in known if k)), tuple(unknown if parts else [text.strip()]))


def canonical_drug(name: str) -> str:
    """The table's name of the one drug a name or prescription string means, or the name as given."""
    found = resolve_drugs(name)
    return found.names[0] if len(found.names) == 1 and not found.unknown else name.strip()


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
    """Class, indications, contraindications, usual dose and RxNorm ingredients of a drug (synthetic table); a
    prescription string ("lisinopril 10 MG Oral Tablet") is read for its ingredients."""
    found = resolve_drugs(args.name)
    if found.unknown or not found.names:
        raise ToolError("not_found", f"unknown drug: {', '.join(found.unknown) or args.name}")
    rows = [drug_row(name) for name in found.names]
    return rows[0] if len(rows) == 1 else {"name": args.name, "ingredients": rows}


def drug_row(name: str) -> dict:
    """A drug's row as drug_info shows it (without its aliases)."""
    row = next(d for d in table("drugs") if d["name"] == name)
    return {key: value for key, value in row.items() if key != "aliases"}


class InteractionArgs(Args):
    drugs: list[str] = Field(min_length=2, description="All drugs to check together: current ones and the new one.")


@tool("drug_interaction_check", kind="compute")
def drug_interaction_check(ctx: ToolContext, args: InteractionArgs) -> dict:
    """Known interactions between every pair of the given drugs (synthetic table); names or prescription strings.
    A drug the table does not know is named: no interaction with it can be ruled out."""
    resolved = [resolve_drugs(d) for d in args.drugs]
    known = {name for r in resolved for name in r.names}
    unknown = sorted({u for r in resolved for u in r.unknown})
    found = []
    for a, b in combinations(sorted(known), 2):
        for row in table("interactions"):
            if {a, b} == set(row["drugs"]):
                found.append({"drugs": [a, b], "severity": row["severity"], "effect": row["effect"]})
    out = {"checked": sorted(known | set(unknown)), "interactions": found}
    return out | ({"unknown": unknown, "message": f"unknown drug: {', '.join(unknown)}"} if unknown else {})


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
