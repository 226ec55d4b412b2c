"""The catalog: one registry of everything known by name (tools, verifier kinds, agents, gate checks).

Each entry records its kind, name, version and the arguments the object was built with. A name is registered once
per kind: a second registration is a CatalogError naming both places. ``load()`` imports the built-in
registrations; ``forge catalog`` prints what it holds.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any, Literal

from .spec.errors import CatalogError

Kind = Literal["tool", "verifier kind", "agent", "gate check"]
KINDS: tuple[Kind, ...] = ("tool", "verifier kind", "agent", "gate check")
BUILT_IN = ("forge_kernel.tools", "forge_kernel.verify", "forge_kernel.agents", "forge_kernel.analysis.gate_checks")
"""The modules whose import registers the built-in entries."""


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

    def add(self, kind: Kind, name: str, value: Any, version: str = "1", args: dict[str, Any] | None = None,
            where: str | None = None) -> Entry:
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

    def section(self, kind: Kind) -> "Section":
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


def load() -> Catalog:
    """The catalog with every built-in entry registered."""
    for module in BUILT_IN:
        import_module(module)
    return CATALOG
