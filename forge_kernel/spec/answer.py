"""The typed answer of a task (``task.answer``) as the JSON Schema the agent is given: the structured output it
returns. The values the hidden half expects are compared by type (``answer.typed``)."""

from __future__ import annotations

from typing import Any

from .package import AnswerField

DATE_HINT = "a date, YYYY-MM-DD"


def field_schema(spec: AnswerField) -> dict[str, Any]:
    """The JSON Schema of one field, its description telling what forms are read (none where there is nothing to
    tell: the schema is part of a model's prompt, where every token costs)."""
    schema = typed_schema(spec)
    if not schema.get("description"):
        schema.pop("description", None)
    return schema


def typed_schema(spec: AnswerField) -> dict[str, Any]:
    """The JSON Schema of one field by its type."""
    about = spec.description
    if spec.type == "quantity":
        return {
            "type": "object",
            "properties": {"value": {"type": "number"}, "unit": {"type": "string"}},
            "required": ["value", "unit"],
            "description": f"{about} (a quantity: value and unit, in {spec.unit} or another unit of its dimension)",
        }
    if spec.type == "number":
        return {"type": "number", "description": f"{about} (a number without a unit)"}
    if spec.type == "date":
        return {"type": "string", "description": f"{about} ({DATE_HINT})"}
    if spec.type == "interval":
        day = {"type": "string", "description": DATE_HINT}
        return {
            "type": "object",
            "properties": {"start": day, "end": day},
            "required": ["start", "end"],
            "description": about,
        }
    if spec.type == "concept":
        return {"type": "string", "description": f"{about} (a name, in Chinese or English, or a code)"}
    if spec.type == "status":
        return {"enum": spec.options, "description": about}
    if spec.type == "list":
        assert spec.items is not None  # validated
        return {"type": "array", "items": field_schema(spec.items), "description": about}
    if spec.type == "record":
        assert spec.fields is not None  # validated
        return {**answer_schema(spec.fields), "description": about}
    return {"type": "boolean" if spec.type == "boolean" else "string", "description": about}


def answer_schema(fields: dict[str, AnswerField]) -> dict[str, Any]:
    """The JSON Schema of the structured output a task asks for (or of a record): every field present, an optional
    one may be null; more properties are allowed."""
    properties = {}
    for name, spec in fields.items():
        schema = field_schema(spec)
        properties[name] = {"anyOf": [schema, {"type": "null"}]} if spec.optional else schema
    return {"type": "object", "properties": properties, "required": list(fields)}
