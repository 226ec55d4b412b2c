"""Forms generated from JSON Schemas (a verifier kind's params, a tool's arguments, the typed answer, the context):
one input per property, chosen by type; lists and maps as rows that are added and removed; a choice between shapes
(``anyOf``/``oneOf``) as a dropdown; nested objects as indented forms, an optional one opened on demand. Names
and codes come from ``Hints`` (the catalog's tools, the patient's record). ``value()`` reads back what was given
(empty inputs and values equal to their default left out)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape
from typing import Any

import ipywidgets as w

EMPTY: Any = None
"""What an input left empty reads as."""


@dataclass(frozen=True)
class Hints:
    """Where names and codes come from, by property name: ``choices`` a closed list (a dropdown), ``suggestions``
    an open one (typed, with suggestions), ``keys`` the suggested keys of a map, ``schemas`` a schema that replaces
    the property's own (the typed answer for ``expect``), ``labels`` plain words for a shape of an ``anyOf``."""

    choices: dict[str, list] = field(default_factory=dict)
    suggestions: dict[str, list] = field(default_factory=dict)
    keys: dict[str, list] = field(default_factory=dict)
    schemas: dict[str, dict] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)


SHAPE_WORDS = {
    "Require": "require a call",
    "Forbid": "forbid a call",
    "Limit": "at most n calls",
    "Check": "a check with its content",
    "string": "a word",
    "array": "any of these (synonyms)",
    "CallPattern": "a call like",
    "number": "a number",
    "integer": "a whole number",
    "boolean": "yes / no",
}
"""How a dropdown names a shape of an ``anyOf``/``oneOf`` (by its title or type)."""


def resolve(node: dict, defs: dict) -> dict:
    """The schema node with a ``$ref`` followed and an optional ``anyOf [X, null]`` read as X."""
    if "$ref" in node:
        return resolve(defs[node["$ref"].split("/")[-1]], defs) | {k: v for k, v in node.items() if k != "$ref"}
    options = [o for o in node.get("anyOf", []) if o.get("type") != "null"]
    if len(options) == 1 and len(node.get("anyOf", [])) == 2:
        rest = {k: v for k, v in node.items() if k != "anyOf"}
        return resolve(options[0], defs) | rest
    return node


def shapes(node: dict, defs: dict) -> list[dict]:
    """The alternatives of an ``anyOf``/``oneOf`` node (null left out), each resolved."""
    return [resolve(o, defs) for o in node.get("oneOf", node.get("anyOf", [])) if o.get("type") != "null"]


def shape_name(node: dict) -> str:
    return node.get("title") or node.get("type") or "value"


def fits(node: dict, value: Any) -> bool:
    """Whether ``value`` has the shape of a resolved schema node (to open a form on the right alternative)."""
    kind = node.get("type")
    if "enum" in node:
        return value in node["enum"]
    if isinstance(value, bool):
        return kind == "boolean"
    if isinstance(value, str):
        return kind == "string"
    if isinstance(value, (int, float)):
        return kind in ("number", "integer")
    if isinstance(value, list):
        return kind == "array"
    if isinstance(value, dict):
        props = node.get("properties", {})
        return (
            kind == "object" and set(node.get("required", [])) <= set(value) and (not props or set(value) <= set(props))
        )
    return False


WORDS = {True: "yes", False: "no"}


def scalar(text: str) -> Any:
    """A value typed where any value goes: a number or yes/no when it reads as one, else the text."""
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    try:
        return json.loads(text) if text[:1] in "-0123456789" else text
    except ValueError:
        return text


class Field:
    """An input of a form: a widget and the value it holds."""

    widget: w.Widget

    def value(self) -> Any:  # pragma: no cover - every field overrides it
        raise NotImplementedError


class Scalar(Field):
    """A string, number, yes/no, one of a closed list, or any single value."""

    def __init__(self, name: str, node: dict, start: Any, hints: Hints, changed: Callable[[], None]):
        self.name, self.kind = name, "enum" if "enum" in node or "const" in node else node.get("type", "any")
        default = node.get("default")
        start = default if start is None else start
        self.start = start
        choices = list(node.get("enum", [node["const"]] if "const" in node else hints.choices.get(name, [])))
        if self.kind == "boolean" and default is None:  # yes, no or not said
            self.kind, choices = "enum", [True, False]
        if self.kind == "boolean":
            self.widget = w.Checkbox(value=bool(start), indent=False, layout=w.Layout(width="auto"))
        elif choices and self.kind in ("enum", "string"):
            if start not in (None, "") and start not in choices:
                choices.append(start)
            options = [("—", "")] + [(WORDS.get(c, str(c)) if isinstance(c, bool) else str(c), c) for c in choices]
            self.widget = w.Dropdown(options=options, value="" if start is None else start)
        elif name in hints.suggestions:
            options = [str(s) for s in hints.suggestions[name]]
            self.widget = w.Combobox(value=show(start), options=options, ensure_option=False)
        else:
            self.widget = w.Text(value=show(start), layout=w.Layout(width="100%"))
        self.widget.observe(lambda _: changed(), names="value")

    def value(self) -> Any:
        raw = self.widget.value
        if self.kind == "boolean":
            return raw
        if raw == "" or (isinstance(raw, str) and not raw.strip()):
            return EMPTY
        if self.start is not None and raw == show(self.start):
            return self.start  # as it was given ("2.0" stays a text, a trailing space stays)
        if self.kind in ("string", "enum"):
            return raw.strip() if isinstance(raw, str) else raw
        value = scalar(raw)
        if self.kind == "integer" and not (isinstance(value, int) and not isinstance(value, bool)):
            raise ValueError(f"{self.name}: {raw!r} is not an integer")
        if self.kind == "number" and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise ValueError(f"{self.name}: {raw!r} is not a number")
        return value


def show(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def small_button(text: str, handler: Callable[[], None], tip: str = "") -> w.Button:
    b = w.Button(description=text, tooltip=tip or text, layout=w.Layout(width="auto"))
    b.add_class("mf-row-button")
    b.on_click(lambda _: handler())
    return b


class Rows(Field):
    """Rows added and removed by buttons (a list's items or a map's entries)."""

    def __init__(self, name: str, add_label: str, changed: Callable[[], None]):
        self.name, self.changed = name, changed
        self.rows: list[tuple[w.Widget, Any]] = []
        self.box = w.VBox()
        self.add = small_button(f"+ {add_label}", lambda: self.add_row(None))
        self.add.add_class(f"mf-add-{name}")
        self.widget = w.VBox([self.box, self.add])
        self.widget.add_class("mf-rows")

    def make_row(self, start: Any) -> tuple[list[w.Widget], Any]:  # pragma: no cover - overridden
        raise NotImplementedError

    def add_row(self, start: Any) -> None:
        parts, holder = self.make_row(start)
        row = w.HBox([*parts, small_button("✕", lambda: self.remove(row), "remove this row")])
        row.add_class("mf-row")
        self.rows.append((row, holder))
        self.box.children = [r for r, _ in self.rows]
        self.changed()

    def remove(self, row: w.Widget) -> None:
        self.rows = [(r, h) for r, h in self.rows if r is not row]
        self.box.children = [r for r, _ in self.rows]
        self.changed()


class ListField(Rows):
    """A list: one row per item, each its own input."""

    def __init__(self, name, node, defs, start, hints, changed):
        super().__init__(name, "add", changed)
        self.item, self.defs, self.hints = node.get("items", {}), defs, hints
        for item in start or []:
            self.add_row(item)

    def make_row(self, start):
        inner = build(self.name, self.item, self.defs, start, self.hints, self.changed, required=True)
        return [inner.widget], inner

    def value(self) -> Any:
        items = [f.value() for _, f in self.rows]
        return [i for i in items if i is not EMPTY] or EMPTY


class MapField(Rows):
    """A mapping: key/value rows, keys suggested from ``hints.keys``; values typed by the schema (any value when
    it gives none)."""

    def __init__(self, name, node, defs, start, hints, changed):
        super().__init__(name, "add a row", changed)
        extra = node.get("additionalProperties", True)
        self.item, self.defs, self.hints = extra if isinstance(extra, dict) else {}, defs, hints
        for key, item in (start or {}).items():
            self.add_row((key, item))

    def make_row(self, start):
        key, item = start or ("", None)
        suggested = [str(k) for k in self.hints.keys.get(self.name, [])]
        key_input = (
            w.Combobox(value=key, options=suggested, ensure_option=False, placeholder="name")
            if suggested
            else w.Text(value=key, placeholder="name")
        )
        key_input.layout.width = "14em"
        key_input.add_class("mf-key-input")
        key_input.observe(lambda _: self.changed(), names="value")
        inner = build(f"{self.name}.value", self.item, self.defs, item, self.hints, self.changed, required=True)
        inner.widget.layout.flex = "1"
        return [key_input, inner.widget], (key_input, inner)

    def value(self) -> Any:
        out = {}
        for _, (key_input, inner) in self.rows:
            key, item = key_input.value.strip(), inner.value()
            if key and item is not EMPTY:
                out[key] = item
            elif key or item is not EMPTY:
                raise ValueError(f"{self.name}: {'give the value of ' + key if key else 'name the row'}")
        return out or EMPTY


class ObjectField(Field):
    """An object with named properties: one labelled input each, required ones first, an optional nested object
    behind a checkbox."""

    def __init__(self, name, node, defs, start, hints, changed, required=False):
        start = start or {}
        self.name, self.required = name, required
        wanted = set(node.get("required", []))
        self.fields: dict[str, tuple[Field, Any, bool]] = {}
        rows = []
        order = sorted(node.get("properties", {}).items(), key=lambda kv: kv[0] not in wanted)
        for prop, raw in order:
            inner = field_for(prop, raw, defs, start.get(prop), hints, changed, prop in wanted)
            default = raw.get("default", resolve(raw, defs).get("default"))
            self.fields[prop] = (inner, default, prop in wanted)
            rows.append(labelled_row(prop, prop in wanted, describe(raw, defs), inner.widget))
        self.widget = w.VBox(rows or [w.HTML("<span class=mf-help>No parameters.</span>")])
        self.widget.add_class("mf-object")

    def value(self) -> Any:
        out = {}
        for prop, (inner, default, _) in self.fields.items():
            item = inner.value()
            if item is not EMPTY and item != default:
                out[prop] = item
        return out if out or self.required else EMPTY


class OptionalObject(Field):
    """A nested object that may be left out: a checkbox opens its form (made only then, so a schema that refers to
    itself stays finite)."""

    def __init__(self, name, node, defs, start, hints, changed):
        self.make = lambda value: ObjectField(name, node, defs, value, hints, changed, required=True)
        self.inner: ObjectField | None = None
        self.toggle = w.Checkbox(value=False, description="give it", indent=False, layout=w.Layout(width="auto"))
        self.toggle.add_class(f"mf-open-{name}")
        self.widget = w.VBox([self.toggle])
        self.changed = changed
        if start is not None:
            self.open(start)
        self.toggle.observe(lambda _: self.open(None) if self.toggle.value else self.close(), names="value")

    def open(self, start: Any) -> None:
        if self.inner is None:
            self.inner = self.make(start)
        self.toggle.value = True
        self.widget.children = [self.toggle, self.inner.widget]
        self.changed()

    def close(self) -> None:
        self.widget.children = [self.toggle]
        self.changed()

    def value(self) -> Any:
        return self.inner.value() if self.toggle.value and self.inner else EMPTY


class ShapeField(Field):
    """One of several shapes (``anyOf``/``oneOf``): a dropdown of the shapes, then the chosen one's input."""

    def __init__(self, name, options, defs, start, hints, changed):
        self.name, self.options, self.defs, self.hints, self.changed = name, options, defs, hints, changed
        first = next((i for i, o in enumerate(options) if start is not None and fits(o, start)), 0)
        labels = [hints.labels.get(shape_name(o), SHAPE_WORDS.get(shape_name(o), shape_name(o))) for o in options]
        self.pick = w.Dropdown(options=[(label, i) for i, label in enumerate(labels)], value=first)
        self.pick.layout.width = "14em"
        self.pick.add_class(f"mf-shape-{name}")
        self.inner = build(name, options[first], defs, start, hints, changed, required=True)
        self.widget = w.HBox([self.pick, self.inner.widget])
        self.widget.add_class("mf-shape")
        self.pick.observe(lambda _: self.switch(), names="value")

    def switch(self) -> None:
        node = self.options[self.pick.value]
        self.inner = build(self.name, node, self.defs, None, self.hints, self.changed, required=True)
        self.widget.children = [self.pick, self.inner.widget]
        self.changed()

    def value(self) -> Any:
        return self.inner.value()


def describe(raw: dict, defs: dict) -> str:
    return raw.get("description") or resolve(raw, defs).get("description") or ""


def labelled_row(name: str, required: bool, help_text: str, widget: w.Widget) -> w.HBox:
    label = w.HTML(
        f"<b>{escape(name)}</b>{' <span class=mf-req>*</span>' if required else ''}", layout=w.Layout(width="11em")
    )
    parts = [widget] + ([w.HTML(f"<span class=mf-help>{escape(help_text)}</span>")] if help_text else [])
    row = w.HBox([label, w.VBox(parts, layout=w.Layout(flex="1"))], layout=w.Layout(width="100%"))
    row.add_class(f"mf-field-{name}")
    return row


def field_for(name, raw, defs, start, hints, changed, required) -> Field:
    """The input of an object's property: an optional nested object behind a checkbox, else ``build``."""
    node = hints.schemas.get(name) or resolve(raw, defs)
    if not required and node.get("properties") and not shapes(node, defs):
        return OptionalObject(name, node, defs, start, hints, changed)
    return build(name, node, defs, start, hints, changed, required)


def build(
    name: str, raw: dict, defs: dict, start: Any, hints: Hints, changed: Callable[[], None], required: bool = False
) -> Field:
    """The input for a schema node, holding ``start``."""
    node = hints.schemas.get(name) or resolve(raw, defs)
    options = shapes(node, defs)
    if len(options) > 1:
        return ShapeField(name, options, defs, start, hints, changed)
    kind = node.get("type")
    if kind == "array":
        return ListField(name, node, defs, start, hints, changed)
    if kind == "object" or "properties" in node:
        if node.get("properties"):
            return ObjectField(name, node, defs, start, hints, changed, required)
        return MapField(name, node, defs, start, hints, changed)
    return Scalar(name, node, start, hints, changed)


class SchemaForm(w.VBox):
    """A form for an object schema; ``values()`` gives what was filled in (fields equal to their default left
    out), a ValueError naming the field that cannot be read."""

    def __init__(self, schema: dict, values: dict | None = None, on_change=None, hints: Hints | None = None):
        self.on_change = on_change
        self.root = ObjectField(
            "", schema, schema.get("$defs", {}), values or {}, hints or Hints(), self._changed, required=True
        )
        self.inputs = {name: f.widget for name, (f, _, _) in self.root.fields.items()}
        super().__init__([self.root.widget])
        self.add_class("mf-form")

    def _changed(self) -> None:
        if getattr(self, "on_change", None) is not None:
            self.on_change()

    def field(self, name: str) -> Field:
        return self.root.fields[name][0]

    def values(self) -> dict:
        return self.root.value() or {}


class MapForm(w.VBox):
    """Key/value rows for a mapping (the task's context, its slices, its typed answer): values of the ``item``
    schema (any single value when it is empty)."""

    def __init__(
        self,
        name: str,
        values: dict | None = None,
        on_change=None,
        hints: Hints | None = None,
        item: dict | None = None,
        defs: dict | None = None,
    ):
        self.on_change = on_change
        node = {"type": "object", "additionalProperties": item or {}}
        self.rows = MapField(name, node, defs or {}, values or {}, hints or Hints(), self._changed)
        super().__init__([self.rows.widget])
        self.add_class(f"mf-map-{name}")

    def _changed(self) -> None:
        if getattr(self, "on_change", None) is not None:
            self.on_change()

    def values(self) -> dict:
        return self.rows.value() or {}

    def set(self, values: dict) -> None:
        """Replace the rows by ``values``."""
        for row, _ in list(self.rows.rows):
            self.rows.remove(row)
        for item in values.items():
            self.rows.add_row(item)
