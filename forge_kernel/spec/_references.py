"""References of FHIR as it is written (``urn:uuid:``, absolute URLs, conditional) rewritten to ``Type/id`` on load.

Synthea and FHIR servers link resources by a Bundle entry's ``fullUrl`` (``urn:uuid:...``), by an absolute URL
(``http://x/fhir/Patient/123``) or by a search (``Practitioner?identifier=system|value``); forge links a resource
to its patient through ``Patient/<id>``. Each such reference that points at a loaded resource becomes ``Type/id``,
and the Reference keeps what was written in an extension (``ORIGINAL``), which is valid FHIR and which no read tool
shows. A reference to a contained resource (``#med1``) stays as it is: a contained resource has no identity outside
its container, and readers look it up there (``ehr.summaries``). A reference that points at nothing loaded stays as
it is too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

ORIGINAL = "urn:forge:original-reference"
"""The url of the extension on a rewritten Reference whose ``valueUri`` is the reference as written."""

RESTFUL = re.compile(r"^https?://.+/([A-Z][A-Za-z]+)/([A-Za-z0-9\-.]{1,64})(?:/_history/[^/]+)?$")
CONDITIONAL = re.compile(r"^([A-Z][A-Za-z]+)\?identifier=(?:([^|]*)\|)?(.+)$")

Key = tuple[str, str]


class Resolver:
    """Maps the references written in a set of bundles to the ``Type/id`` of the resources they were loaded as; with
    ``base``, a reference none of them answers is looked up there (an overlay's into its shared image)."""

    def __init__(self, entries: Iterable[tuple[str | None, dict[str, Any]]], base: Resolver | None = None):
        self.base = base
        self.by_url: dict[str, str] = {}
        self.keys: set[Key] = set()
        self.by_identifier: dict[tuple[str, str, str], str] = {}
        for full_url, resource in entries:
            local = f"{resource['resourceType']}/{resource['id']}"
            self.keys.add((resource["resourceType"], resource["id"]))
            if full_url:
                self.by_url[full_url] = local
            for identifier in resource.get("identifier") or []:
                if isinstance(identifier, dict) and identifier.get("value"):
                    system = str(identifier.get("system", ""))
                    self.by_identifier[(resource["resourceType"], system, str(identifier["value"]))] = local

    def target(self, written: str) -> str | None:
        """``Type/id`` of the loaded resource a reference as written points at, or None."""
        found = self.own_target(written)
        return found if found is not None or self.base is None else self.base.target(written)

    def own_target(self, written: str) -> str | None:
        """``target`` among this resolver's own entries only."""
        if written in self.by_url:
            return self.by_url[written]
        restful = RESTFUL.match(written)
        if restful and (restful[1], restful[2]) in self.keys:
            return f"{restful[1]}/{restful[2]}"
        conditional = CONDITIONAL.match(written)
        if conditional:
            return self.by_identifier.get((conditional[1], conditional[2] or "", conditional[3]))
        return None

    def rewrite(self, value: Any) -> Any:
        """``value`` with every Reference that needs it rewritten; unchanged parts are the same objects (a part is
        copied only when something inside it changes)."""
        if isinstance(value, list):
            items = None
            for i, item in enumerate(value):
                new = self.rewrite(item)
                if new is not item:
                    items = items or list(value)
                    items[i] = new
            return value if items is None else items
        if not isinstance(value, dict):
            return value
        changed = None
        for key, item in value.items():
            if isinstance(item, (dict, list)):
                new = self.rewrite(item)
                if new is not item:
                    changed = changed or dict(value)
                    changed[key] = new
        written = value.get("reference")
        local = self.target(written) if isinstance(written, str) else None
        if local and local != written:
            original = {"url": ORIGINAL, "valueUri": written}
            return {**(changed or value), "reference": local, "extension": [*value.get("extension", []), original]}
        return value if changed is None else changed


def resolve_references(
    entries: list[tuple[str | None, dict[str, Any]]], base: Resolver | None = None
) -> list[dict[str, Any]]:
    """The resources of (fullUrl, resource) entries with their references rewritten to ``Type/id`` (module doc);
    ``base``: see ``Resolver``."""
    resolver = Resolver(entries, base)
    return [resolver.rewrite(resource) for _, resource in entries]
