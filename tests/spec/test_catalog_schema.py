"""The hidden-half JSON Schema carries the catalog: each verifier kind with its params, each tool by name."""

import json
from pathlib import Path

import jsonschema
import pytest

from forge_kernel.authoring.schemas import SCHEMA_DIR
from forge_kernel.built_in import load
from forge_kernel.spec.loading import read_yaml
from forge_kernel.spec.suites import with_hidden_defaults

ROOT = Path(__file__).resolve().parents[2]
HIDDEN = ROOT / "verifiers" / "superclue" / "SC-OPS-ADMISSION.yaml"


@pytest.fixture(scope="module")
def hidden_schema() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads((SCHEMA_DIR / "hidden.schema.json").read_text()))


def hidden_doc() -> dict:
    """The bundled hidden half over its suite's base verifiers, as the loader merges them."""
    return with_hidden_defaults(read_yaml(HIDDEN.parent / "suite.yaml"), read_yaml(HIDDEN))


def errors(validator, doc) -> list[str]:
    return [e.message for e in validator.iter_errors(doc)]


def use(doc: dict, verifier_id: str) -> dict:
    return next(v for v in doc["verifiers"] if v["id"] == verifier_id)


def test_every_built_in_kind_and_tool_is_in_the_schema():
    schema = json.loads((SCHEMA_DIR / "hidden.schema.json").read_text())
    variants = schema["$defs"]["VerifierUse"]["oneOf"]
    kinds = [v["properties"]["kind"].get("const") for v in variants[:-1]]
    catalog = load()
    assert kinds == [e.name for e in catalog.of("verifier kind") if e.built_in]
    assert all(v["properties"]["params"]["$ref"].startswith("#/$defs/") for v in variants[:-1])
    assert schema["$defs"]["ToolName"]["enum"] == sorted(e.name for e in catalog.of("tool") if e.built_in)


def test_the_schema_rejects_a_wrong_param_for_its_kind(hidden_schema):
    doc = hidden_doc()
    assert errors(hidden_schema, doc) == []
    use(doc, "chain")["params"]["exact"] = "maybe"
    assert errors(hidden_schema, doc)
    use(doc, "chain")["params"] = {"exact": True, "colour": "red"}
    assert errors(hidden_schema, doc)
    use(doc, "chain")["params"] = {"exact": True}
    use(doc, "order-1")["params"]["exact"] = True  # a param of trace.tool_chain, not of state.resource
    assert errors(hidden_schema, doc)


def test_an_expression_may_stand_for_a_param_and_a_plugin_kind_keeps_its_own_params(hidden_schema):
    doc = hidden_doc()
    use(doc, "order-1")["params"]["max"] = {"from_ehr": {"count": {"type": "ServiceRequest"}}}
    doc["verifiers"].append(
        {"id": "short", "kind": "answer.max_words", "category": "answer", "params": {"max_words": 50}}
    )
    assert errors(hidden_schema, doc) == []


def test_the_schema_names_the_tools(hidden_schema):
    doc = hidden_doc()
    doc["expected_tools"].append("teleport")
    assert errors(hidden_schema, doc)
