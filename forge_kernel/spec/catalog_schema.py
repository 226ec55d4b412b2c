"""The catalog in the JSON Schemas: a verifier use per kind with that kind's params, and tools by name.

Pure: it is given the kinds (name -> params model and description) and the tool names, and rewrites schemas that
the models generated. Any params value may be an expression (``{from_ehr: ...}``), and a kind that is not built
in (a plugin) keeps free-form params.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

EXPRESSION = {"$ref": "#/$defs/Expression"}


def tool_names(schema: dict, tools: list[str], *paths: tuple[str | int, ...]) -> dict:
    """The schema with the string at each path (keys into the schema) restricted to the tool names."""
    schema = copy.deepcopy(schema)
    schema.setdefault("$defs", {})["ToolName"] = {
        "enum": sorted(tools),
        "type": "string",
        "description": "A tool of the catalog.",
    }
    for path in paths:
        node = schema
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = {"$ref": "#/$defs/ToolName", **{k: v for k, v in node[path[-1]].items() if k != "type"}}
    return schema


def with_expressions(node: Any) -> Any:
    """A params schema where every property, list item and mapping value may also be an expression."""
    if not isinstance(node, dict):
        return node
    out = {key: with_expressions(value) for key, value in node.items()}
    if isinstance(node.get("properties"), dict):
        out["properties"] = {
            name: {"anyOf": [with_expressions(sub), EXPRESSION]} for name, sub in node["properties"].items()
        }
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            out[key] = {"anyOf": [with_expressions(node[key]), EXPRESSION]}
    return out


def reachable(defs: dict, names: list[str]) -> set[str]:
    """The definitions the named ones refer to, transitively, themselves included."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            text = repr(defs[name])
            todo += [other for other in defs if f"'#/$defs/{other}'" in text]
    return seen


def hidden_schema(
    hidden: type[BaseModel],
    expression: type[BaseModel],
    kinds: dict[str, tuple[type[BaseModel], str]],
    tools: list[str],
) -> dict:
    """The hidden half's schema: ``verifiers`` items are one of the kinds (``kind`` picks which), each with its
    params model, or a kind not listed (a plugin) with any params; expected tools and called tools by name."""
    models = list(dict.fromkeys([hidden, expression, *(model for model, _ in kinds.values())]))
    refs, top = models_json_schema([(m, "validation") for m in models], ref_template="#/$defs/{model}")
    defs = top["$defs"]
    params = {name: refs[(model, "validation")]["$ref"] for name, (model, _) in kinds.items()}
    for name in reachable(defs, [ref.split("/")[-1] for ref in params.values()]):
        defs[name] = with_expressions(defs[name])
    schema = {**defs.pop(hidden.__name__), "$defs": defs}
    use = defs.pop("VerifierUse")
    variants = []
    for name, (_, description) in kinds.items():
        variant = copy.deepcopy(use)
        variant["properties"]["kind"] = {"const": name}
        variant["properties"]["params"] = {"$ref": params[name]}
        variant.update(title=name, description=description.split("\n\n")[0])
        variants.append(variant)
    plugin = copy.deepcopy(use)
    plugin["properties"]["kind"] = {"not": {"enum": sorted(kinds)}, "type": "string"}
    plugin.update(title="plugin kind", description="A kind from verifiers/plugins/; its params are its own.")
    defs["VerifierUse"] = {"description": use["description"], "oneOf": [*variants, plugin]}
    return tool_names(
        schema, tools, ("properties", "expected_tools", "items"), ("$defs", "ToolCall", "properties", "tool")
    )
