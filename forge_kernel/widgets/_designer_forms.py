"""Forms generated from JSON Schemas (a verifier kind's params, a tool's arguments): one field per property, its
widget chosen by type, read back as the values a user gave (an empty field is left out)."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any, Literal

import ipywidgets as w
import yaml

FieldKind = Literal["text", "number", "integer", "boolean", "choice", "tags", "yaml"]
"""How a field is entered: tags is a list of strings, yaml anything else (written as YAML)."""


@dataclass(frozen=True)
class FieldSpec:
    """One property of a schema as a form field."""

    name: str
    kind: FieldKind
    required: bool
    default: Any = None
    choices: tuple = ()
    description: str = ""


def resolve(node: dict, defs: dict) -> dict:
    """The schema node with a ``$ref`` followed and an optional ``anyOf [X, null]`` read as X."""
    if "$ref" in node:
        return resolve(defs[node["$ref"].split("/")[-1]], defs) | {k: v for k, v in node.items() if k != "$ref"}
    options = [o for o in node.get("anyOf", []) if o.get("type") != "null"]
    if len(options) == 1 and len(node.get("anyOf", [])) == 2:
        return resolve(options[0], defs) | {k: v for k, v in node.items() if k != "anyOf"}
    return node


def kind_of(node: dict) -> tuple[FieldKind, tuple]:
    """The field kind of a resolved schema node and its choices (for an enum)."""
    if "enum" in node or "const" in node:
        return "choice", tuple(node.get("enum", [node.get("const")]))
    kind = node.get("type")
    if kind == "string":
        return "text", ()
    if kind in ("number", "integer", "boolean"):
        return kind, ()
    if kind == "array" and node.get("items", {}).get("type") == "string" and "enum" not in node.get("items", {}):
        return "tags", ()
    return "yaml", ()


def schema_fields(schema: dict) -> list[FieldSpec]:
    """The form fields of an object schema, required ones first (in the schema's order otherwise)."""
    defs = schema.get("$defs", {})
    required = set(schema.get("required", []))
    fields = []
    for name, raw in schema.get("properties", {}).items():
        node = resolve(raw, defs)
        kind, choices = kind_of(node)
        fields.append(
            FieldSpec(
                name,
                kind,
                name in required,
                raw.get("default", node.get("default")),
                choices,
                raw.get("description") or node.get("description") or "",
            )
        )
    return sorted(fields, key=lambda f: not f.required)


def parse(spec: FieldSpec, raw: Any) -> Any:
    """A field's widget value as the value it stands for; None where the field is empty."""
    if spec.kind in ("boolean", "tags"):
        return raw if spec.kind == "boolean" or raw else None
    if spec.kind == "choice":
        return None if raw == "" else raw
    text = str(raw).strip()
    if not text:
        return None
    if spec.kind == "text":
        return text
    value = yaml.safe_load(text)
    if (spec.kind == "integer" and not isinstance(value, int)) or (
        spec.kind == "number" and not isinstance(value, (int, float))
    ):
        raise ValueError(f"{spec.name}: {text!r} is not a{'n integer' if spec.kind == 'integer' else ' number'}")
    return value


def field_widget(spec: FieldSpec, value: Any = None) -> w.Widget:
    """The input widget of one field, holding ``value`` (or the field's default)."""
    start = spec.default if value is None else value
    if spec.kind == "boolean":
        return w.Checkbox(value=bool(start), indent=False, layout=w.Layout(width="auto"))
    if spec.kind == "choice":
        return w.Dropdown(
            options=([] if spec.required else [("—", "")]) + [(str(c), c) for c in spec.choices],
            value=start if start in spec.choices else (spec.choices[0] if spec.required else ""),
        )
    if spec.kind == "tags":
        return w.TagsInput(value=list(start or []), allow_duplicates=False)
    if spec.kind == "yaml":
        text = "" if start is None else yaml.safe_dump(start, allow_unicode=True, sort_keys=False).strip()
        return w.Textarea(value=text, placeholder="YAML", layout=w.Layout(width="100%", height="7em"))
    return w.Text(value="" if start is None else str(start), layout=w.Layout(width="100%"))


class SchemaForm(w.VBox):
    """A form for an object schema; ``values()`` gives what was filled in (fields equal to their default left out)."""

    def __init__(self, schema: dict, values: dict | None = None, on_change=None):
        self.specs = schema_fields(schema)
        values = values or {}
        self.inputs = {s.name: field_widget(s, values.get(s.name)) for s in self.specs}
        for name, widget in self.inputs.items():
            widget.add_class(f"mf-field-{name}")
        rows = []
        for spec in self.specs:
            label = w.HTML(
                f"<b>{spec.name}</b>{' <span class=mf-req>*</span>' if spec.required else ''}",
                layout=w.Layout(width="13em"),
            )
            help_text = w.HTML(f"<span class=mf-help>{escape(spec.description)}</span>") if spec.description else None
            rows.append(
                w.HBox(
                    [
                        label,
                        w.VBox(
                            [self.inputs[spec.name], *([help_text] if help_text else [])], layout=w.Layout(flex="1")
                        ),
                    ],
                    layout=w.Layout(width="100%"),
                )
            )
            if on_change is not None:
                self.inputs[spec.name].observe(lambda _: on_change(), names="value")
        if not rows:
            rows = [w.HTML("<span class=mf-help>No parameters.</span>")]
        super().__init__(rows)
        self.add_class("mf-form")

    def values(self) -> dict:
        """The values given; a field that cannot be read is a ValueError naming it."""
        out = {}
        for spec in self.specs:
            try:
                value = parse(spec, self.inputs[spec.name].value)
            except yaml.YAMLError as exc:
                raise ValueError(f"{spec.name}: not YAML ({getattr(exc, 'problem', exc)})") from None
            if value is not None and value != spec.default:
                out[spec.name] = value
        return out
