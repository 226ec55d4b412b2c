"""JSON Schemas of the on-disk formats, for editors; ``python -m forge_kernel.spec.json_schemas`` rewrites them."""
from __future__ import annotations

import json
from pathlib import Path

from .compact import CompactTrajectory
from .gate_policy import GatePolicy
from .hidden import HiddenHalf
from .package import TaskPackage
from .trajectory import TrajectoryFile

SCHEMA_DIR = Path(__file__).with_name("schemas")
MODELS = {
    "taskpackage.schema.json": TaskPackage,
    "hidden.schema.json": HiddenHalf,
    "trajectory.schema.json": TrajectoryFile,
    "gate-policy.schema.json": GatePolicy,
    "compact-trajectory.schema.json": CompactTrajectory,
}


def schema_documents() -> dict[str, str]:
    """File name -> JSON text of each schema, as it should be on disk."""
    docs = {}
    for name, model in MODELS.items():
        schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": name,
                  **model.model_json_schema()}
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
