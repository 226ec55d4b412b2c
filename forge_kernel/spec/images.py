"""Shared EHR images: a named, versioned set of FHIR R4 Bundles that many packages run on, read once per process.

An image is the folder ``ehr_images/<name>/<version>/`` (the nearest one above a package that names it in
``environment.ehr_image`` / ``ehr_version``), holding ``image.yaml`` (name, version, description, ``synthetic:
true``, optional ``source``) and one or more FHIR R4 Bundles ``*.json`` or ``*.json.gz``. Its resources are parsed,
merged (a resource several bundles repeat identically is kept once) and their references resolved once, and kept
while a package uses them; a package's own fixtures are an overlay on top (``overlay``).
"""

from __future__ import annotations

import gzip
import hashlib
import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from weakref import WeakValueDictionary

from pydantic import Field

from ._references import Resolver
from .errors import SpecError
from .hashing import content_hash
from .package import PLAIN_NAME, Strict

IMAGES_DIR = "ehr_images"
IMAGE_FILE = "image.yaml"
BUNDLE_SUFFIXES = (".json", ".json.gz")

PLAIN = re.compile(PLAIN_NAME)

Key = tuple[str, str]
Listing = Callable[[str], list[str]]
"""The file names in a folder given relative to the package folder (none when there is no such folder)."""
Reader = Callable[[str], bytes]
"""The content of a file given relative to the package folder."""


class ImageManifest(Strict):
    """``image.yaml``: what the image is."""

    name: str = Field(pattern=PLAIN_NAME)
    version: str = Field(pattern=PLAIN_NAME)
    description: str = Field(description="One line: what patients and records the image holds.")
    synthetic: Literal[True] = Field(description="Every record is synthetic: no real patient's data.")
    source: str | dict[str, Any] | None = Field(
        None,
        description="Where the records came from: a line, or facts (a generator, its settings, an import's report).",
    )


@dataclass(eq=False)
class SharedImage:
    """An EHR image as read once: its resources (references resolved), shared by every package that names it."""

    manifest: ImageManifest
    folder: Path
    """Where it was read from, for messages."""
    content_hash: str
    """Hash of the names and contents of its files: a changed image changes every package that uses it."""
    bundles: list[Path]
    """Its FHIR Bundle files."""
    resources: list[dict[str, Any]] = field(repr=False)
    origin: dict[Key, tuple[dict[str, Any], Path]] = field(repr=False)
    """(type, id) -> the resource and the bundle it was read from."""
    resolver: Resolver = field(repr=False)
    """Resolves references as the image's bundles write them (for an overlay that points into the image)."""
    validated: bool = False
    """Its bundles were found valid FHIR R4 (``fixtures.validate_image``) in this process."""


_LOADED: WeakValueDictionary[tuple[str, str], SharedImage] = WeakValueDictionary()
"""(folder, content hash) -> the image read from it, while some package holds it."""
_RECENT: deque[SharedImage] = deque(maxlen=2)
"""The images used last, held so that packages loaded one after another (a command per package folder) do not
read their image again each."""


def candidates(folder: Path, name: str, version: str) -> list[str]:
    """Where an image may be, relative to the package folder, nearest first (a folder above the package)."""
    depth = len(folder.resolve().parents)
    return [f"{'../' * up}{IMAGES_DIR}/{name}/{version}" for up in range(1, depth + 1)]


def find_image(
    folder: Path, name: str, version: str, listing: Listing, read: Reader
) -> tuple[SharedImage, list[str]] | None:
    """The image a package names, read once per content (see module doc); None when no folder above has it."""
    if not (PLAIN.fullmatch(name) and PLAIN.fullmatch(version)):
        return None
    for relative in candidates(folder, name, version):
        names = listing(relative)
        if IMAGE_FILE in names:
            return shared_image(folder, relative, names, read)
    return None


def shared_image(folder: Path, relative: str, names: list[str], read: Reader) -> tuple[SharedImage, list[str]]:
    """The image in ``relative`` (its file ``names``), from the cache when its content was read before, and its
    files by name relative to the package folder."""
    where = (folder / relative).resolve()
    bundles = sorted(n for n in names if n.endswith(BUNDLE_SUFFIXES))
    if not bundles:
        raise SpecError(where, "(folder)", "an EHR image needs at least one FHIR Bundle (*.json or *.json.gz)")
    contents = {n: read(f"{relative}/{n}") for n in [IMAGE_FILE, *bundles]}
    digest = content_hash("ehr-image", {n: "sha256:" + hashlib.sha256(c).hexdigest() for n, c in contents.items()})
    cached = _LOADED.get((str(where), digest))
    if cached is None:
        cached = _LOADED[(str(where), digest)] = parse_image(where, contents, digest)
    if cached not in _RECENT:
        _RECENT.append(cached)
    return cached, [f"{relative}/{n}" for n in contents]


def parse_image(where: Path, contents: dict[str, bytes], digest: str) -> SharedImage:
    """Parse an image's files: its manifest, then its bundles merged and their references resolved."""
    from .loading import MergedEntries, bundle_entries, parse_json, parse_model, parse_yaml, read_file

    manifest_path = where / IMAGE_FILE
    text = read_file(lambda _: contents[IMAGE_FILE], manifest_path, IMAGE_FILE)
    manifest = parse_model(ImageManifest, parse_yaml(text, manifest_path), manifest_path)
    if (manifest.name, manifest.version) != (where.parent.name, where.name):
        raise SpecError(manifest_path, "name", f"is {manifest.name}/{manifest.version}, the folder says otherwise")
    merged = MergedEntries()
    for name, raw in contents.items():
        if name == IMAGE_FILE:
            continue
        path = where / name
        data = gunzip(raw, path) if name.endswith(".gz") else raw
        text = read_file(lambda _, data=data: data, path, name)  # type: ignore[misc]  # bound per file
        merged.add(bundle_entries(parse_json(text, path), path), path)
    resolver = Resolver(merged.entries)
    resources = [resolver.rewrite(resource) for _, resource in merged.entries]
    origin = {(r["resourceType"], r["id"]): (r, path) for r, path in zip(resources, merged.paths, strict=True)}
    bundles = [where / name for name in contents if name != IMAGE_FILE]
    return SharedImage(manifest, where, digest, bundles, resources, origin, resolver)


def gunzip(raw: bytes, path: Path) -> bytes:
    """The content of a gzip file; a damaged one is a SpecError."""
    try:
        return gzip.decompress(raw)
    except (OSError, EOFError) as exc:
        raise SpecError(path, "(file)", f"not a gzip file: {exc}") from None
