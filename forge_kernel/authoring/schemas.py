"""JSON Schemas of the on-disk formats, for editors, written into ``forge_kernel/spec/schemas/``; ``python -m
forge_kernel.authoring.schemas`` rewrites them. It reads the whole catalog (every tool and verifier kind) and types
``from_ehr`` expressions, so it sits above the formats it describes."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from ..built_in import load
from ..spec import (
    CompactTrajectory,
    GatePolicy,
    HiddenDefaults,
    HiddenHalf,
    SuiteDefaults,
    TaskPackage,
    TrajectoryFile,
    hidden_schema,
    tool_names,
)
from ..verify import Expression

SCHEMA_DIR = Path(__file__).parents[1] / "spec" / "schemas"
MODELS: dict[str, type[BaseModel]] = {
    "taskpackage.schema.json": TaskPackage,
    "hidden.schema.json": HiddenHalf,
    "trajectory.schema.json": TrajectoryFile,
    "gate-policy.schema.json": GatePolicy,
    "compact-trajectory.schema.json": CompactTrajectory,
    "suite.schema.json": SuiteDefaults,
    "hidden-suite.schema.json": HiddenDefaults,
}


def model_schemas() -> dict[str, dict]:
    """File name -> schema of each format; the hidden half and the task package with the catalog's kinds and tools
    (every built-in one, whatever this process imported)."""
    catalog = load()
    kinds = {e.name: (e.value.params_model, e.value.description) for e in catalog.of("verifier kind") if e.built_in}
    tools = [e.name for e in catalog.of("tool") if e.built_in]
    schemas = {name: model.model_json_schema() for name, model in MODELS.items()}
    schemas["hidden.schema.json"] = hidden_schema(HiddenHalf, Expression, kinds, tools)
    schemas["taskpackage.schema.json"] = tool_names(
        schemas["taskpackage.schema.json"],
        tools,
        ("properties", "tools", "items"),
        ("$defs", "Fault", "properties", "tool"),
    )
    schemas["suite.schema.json"] = tool_names(
        schemas["suite.schema.json"],
        tools,
        ("properties", "tools", "anyOf", 0, "items"),
        ("$defs", "Fault", "properties", "tool"),
    )
    schemas["hidden-suite.schema.json"]["$defs"] = schemas["hidden.schema.json"]["$defs"]  # its verifiers per kind
    return schemas


def schema_documents() -> dict[str, str]:
    """File name -> JSON text of each schema, as it should be on disk."""
    docs = {}
    for name, body in model_schemas().items():
        schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": name, **body}
        docs[name] = json.dumps(schema, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    return docs


def export(folder: Path = SCHEMA_DIR) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in schema_documents().items():
        (folder / name).write_text(text, encoding="utf-8")
        written.append(folder / name)
    return written


if __name__ == "__main__":
    for path in export():
        print(path)
