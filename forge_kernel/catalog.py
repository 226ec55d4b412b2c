"""The catalog: one registry of everything known by name (tools, verifier kinds, agents, gate checks).

Each entry records its kind, name, version and the arguments the object was built with. A name is registered once
per kind: a second registration is a CatalogError naming both places. The built-in entries register when their
packages are imported (``tools``, ``verify``, ``agents``, ``analysis``'s gate checks), all of them at once through
``forge_kernel.built_in``; ``forge catalog`` prints what it holds.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from .spec import CatalogError

Kind = Literal["tool", "verifier kind", "agent", "gate check"]
KINDS: tuple[Kind, ...] = ("tool", "verifier kind", "agent", "gate check")


@dataclass(frozen=True)
class Entry:
    kind: Kind
    name: str
    version: str
    args: dict[str, Any]
    """The arguments the object was built with (JSON values), as the catalog shows them."""
    value: Any
    where: str
    """The module that registered it."""

    @property
    def built_in(self) -> bool:
        """Registered by the kernel itself (not a plugin, a test or a user's module)."""
        return self.where.startswith("forge_kernel.")


@dataclass
class Catalog:
    entries: dict[tuple[str, str], Entry] = field(default_factory=dict)

    def add(
        self,
        kind: Kind,
        name: str,
        value: Any,
        version: str = "1",
        args: dict[str, Any] | None = None,
        where: str | None = None,
    ) -> Entry:
        """Register ``value`` as ``name`` of ``kind``; a name already taken is refused."""
        where = where or getattr(value, "__module__", None) or "?"
        taken = self.entries.get((kind, name))
        if taken is not None:
            raise CatalogError(where, f"{kind} {name}", f"already registered by {taken.where}")
        entry = Entry(kind, name, version, dict(args or {}), value, where)
        self.entries[(kind, name)] = entry
        return entry

    def of(self, kind: Kind) -> list[Entry]:
        """The entries of one kind, in the order they were registered."""
        return [e for (k, _), e in self.entries.items() if k == kind]

    def section(self, kind: Kind) -> Section:
        return Section(self, kind)


class Section(Mapping):
    """Name -> object of one kind: a live, read-only view of the catalog."""

    def __init__(self, catalog: Catalog, kind: Kind):
        self.catalog, self.kind = catalog, kind

    def __getitem__(self, name: str) -> Any:
        return self.catalog.entries[(self.kind, name)].value

    def __iter__(self) -> Iterator[str]:
        return (name for kind, name in list(self.catalog.entries) if kind == self.kind)

    def __len__(self) -> int:
        return sum(kind == self.kind for kind, _ in self.catalog.entries)

    def __repr__(self) -> str:
        return f"<{self.kind}s: {', '.join(self)}>"


CATALOG = Catalog()
"""The one catalog of this process."""
register = CATALOG.add


def model_of(entry: Entry) -> Any:
    """The pydantic model of a tool's arguments or a verifier kind's params, if the entry has one."""
    return getattr(entry.value, "args_model", None) or getattr(entry.value, "params_model", None)


def as_json(entry: Entry) -> dict[str, Any]:
    """An entry as JSON: kind, name, version, built-with arguments, description and its model's JSON Schema."""
    model = model_of(entry)
    return {
        "kind": entry.kind,
        "name": entry.name,
        "version": entry.version,
        "args": entry.args,
        "description": getattr(entry.value, "description", ""),
        **({"schema": model.model_json_schema()} if model is not None else {}),
    }


def type_text(annotation: Any) -> str:
    """An annotation as it reads in code, without module paths or metadata: ``list[Check] | None``."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return type_text(args[0])
    if origin in (Union, UnionType):
        return " | ".join(map(type_text, args))
    if origin is Literal:
        return f"Literal[{', '.join(map(repr, args))}]"
    if origin is not None:
        return f"{getattr(origin, '__name__', origin)}[{', '.join(map(type_text, args))}]"
    return "None" if annotation is type(None) else getattr(annotation, "__name__", str(annotation))


def fields_text(model: Any) -> str:
    """A model's fields as ``name: type`` (``= default`` when optional), comma-separated."""
    return (
        ", ".join(
            f"{name}: {type_text(info.annotation)}"
            + ("" if info.is_required() else f" = {info.get_default(call_default_factory=True)!r}")
            for name, info in model.model_fields.items()
        )
        or "(none)"
    )


def entry_line(entry: Entry) -> str:
    """One line of ``forge catalog``."""
    model = model_of(entry)
    built = " ".join(f"{k}={v}" for k, v in entry.args.items() if v is not None and k != "params")
    summary = getattr(entry.value, "description", "").split("\n")[0]
    parts = [
        entry.name,
        f"v{entry.version}",
        built,
        f"params: {fields_text(model)}" if entry.kind == "verifier kind" else "",
        summary if entry.kind == "tool" else "",
    ]
    return "  ".join(p for p in parts if p)
