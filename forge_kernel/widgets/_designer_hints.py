"""Where the designer's forms take names and codes from: the catalog's tools and their arguments, the FHIR
resource types, and the patient's own record (its resource types, the paths of their fields, their codes and
names). All patients are synthetic."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..ehr import patient_of
from ..spec import AnswerField, answer_schema, bundle_resources
from ..verify.kinds import CLINICAL_TYPES
from ..verify.tables import diagnosis_vocabulary, drug_vocabulary, first_names
from ._designer_forms import Hints

TOOL_FIELDS = ("tool", "action", "tools", "requires")
"""Properties that name a tool (a dropdown of the catalog's tools)."""
TYPE_FIELDS = ("type", "types", "order_types", "allow", "writable_types")
"""Properties that name a FHIR resource type (a dropdown of the types)."""
VALUE_FIELDS = ("equals", "contains", "one_of", "same_as")
"""A matcher's values: suggested from the patient's record."""
SKIPPED = {"id", "meta", "resourceType", "text"}
MAX_SUGGESTIONS = 400


def leaf_paths(node: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Dotted paths of a resource's values (list positions left out, as a where-clause names them)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if not prefix and key in SKIPPED:
                continue
            yield from leaf_paths(value, f"{prefix}.{key}" if prefix else key)
    elif isinstance(node, list):
        for item in node:
            yield from leaf_paths(item, prefix)
    else:
        yield prefix, node


def record_hints(
    bundle: dict, patient_id: str, where: Path = Path("fixture")
) -> tuple[list[str], list[str], list[str]]:
    """(resource types, field paths, codes and names) of the patient's own records."""
    mine = [
        r for r in bundle_resources(bundle, where) if patient_of(r) == patient_id and r["resourceType"] != "Patient"
    ]
    types = sorted({r["resourceType"] for r in mine})
    paths: dict[str, None] = {}
    values: dict[str, None] = {}
    for resource in mine:
        for path, value in leaf_paths(resource):
            paths[path] = None
            if isinstance(value, str) and 0 < len(value) <= 60 and not path.endswith("reference"):
                values[value] = None
    return types, sorted(paths), list(values)[:MAX_SUGGESTIONS]


def terminology(terms: str) -> list[str]:
    """The names a concept of ``terms`` is picked from (each thing once, by its first name); none for a table
    without a list of names."""
    tables: dict[str, Callable[[], dict[str, str]]] = {
        "drugs": drug_vocabulary,
        "diagnoses": diagnosis_vocabulary,
        "labs": lambda: first_names("labs"),
    }
    return sorted(set(tables[terms]().values())) if terms in tables else []


def concept_suggestions(answer: dict[str, AnswerField], values: list[str]) -> dict[str, list]:
    """Answer field name -> the names offered for it: the patient's record first, then its terminology (a list
    of concepts too)."""
    out = {}
    for name, spec in answer.items():
        kind = spec.items if spec.type == "list" and spec.items else spec
        if kind.type == "concept" and kind.terms:
            out[name] = list(dict.fromkeys([*values, *terminology(kind.terms)]))[:MAX_SUGGESTIONS]
    return out


def designer_hints(
    tools: list[str],
    tool_args: list[str],
    written_types: list[str],
    record: tuple[list[str], list[str], list[str]],
    answer: dict[str, AnswerField],
) -> Hints:
    """The hints of the designer's forms: tools, resource types (the patient's first), the patient's field paths
    and codes, the task's typed answer (the shape of ``expect`` and of the gold's output, its concepts offered from the
    record and the terminology)."""
    types, paths, values = record
    all_types = list(dict.fromkeys([*types, *written_types, *CLINICAL_TYPES]))
    schemas = {"expect": answer_schema(answer)} if answer else {}
    return Hints(
        choices={name: list(tools) for name in TOOL_FIELDS} | {name: all_types for name in TYPE_FIELDS},
        suggestions={name: values for name in VALUE_FIELDS} | concept_suggestions(answer, values),
        keys={"where": paths, "args": tool_args, "tol": list(answer), "context": ["mrn", "query", "drug"]},
        schemas=schemas,
    )
