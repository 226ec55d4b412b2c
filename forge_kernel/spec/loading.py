"""Reading TaskPackages from disk: public half, fixtures, and (separately) the hidden half."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError
from yaml.constructor import ConstructorError

from ._references import Resolver, resolve_references
from .errors import SpecError
from .hashing import content_hash
from .hidden import HiddenHalf, expand_cases, grading_content
from .images import IMAGES_DIR, Listing, SharedImage, find_image
from .package import TaskPackage
from .suites import SUITE_FILE, HiddenDefaults, SuiteDefaults, merged, with_hidden_defaults
from .trajectory_file import TrajectoryFile

PACKAGE_FILE = "package.yaml"
SUITE_DEFAULTS = f"../{SUITE_FILE}"
"""The suite's public defaults, by name from the package folder: ``task_packages/<suite>/suite.yaml``."""


def read_text(path: Path, field_name: str = "(file)") -> str:
    """A UTF-8 text file; a missing, unreadable or non-UTF-8 file is a SpecError."""
    return read_file(lambda _: path.read_bytes(), path, str(path), field_name)


MAX_DEPTH = 100
"""The deepest nesting of lists and mappings read from a file (pydantic serializes no deeper than about 250)."""


M = TypeVar("M", bound=BaseModel)

if TYPE_CHECKING:
    _SafeLoader = yaml.SafeLoader
else:
    _SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class UniqueKeyLoader(_SafeLoader):
    """A safe YAML loader (libyaml's parser where PyYAML has it) with the YAML 1.2 core types (below) that refuses
    aliases (a 1 KB alias bomb expands to gigabytes) and a key given twice in one mapping."""

    yaml_implicit_resolvers = {}  # noqa: RUF012  (PyYAML's own class attribute, replaced for this loader)

    def __init__(self, text: str):
        super().__init__(text)
        self.text = text

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        if node in self.constructed_objects or node in self.recursive_objects:  # met again: through an alias
            alias = next(e for e in yaml.parse(self.text, Loader=type(self)) if isinstance(e, yaml.AliasEvent))
            raise ConstructorError(None, None, f"alias *{alias.anchor}: aliases are not allowed", alias.start_mark)  # type: ignore[arg-type]  # libyaml's Mark is one too
        return super().construct_object(node, deep)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        mapping: dict[Hashable, Any] = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, Hashable):
                raise ConstructorError(None, None, "a key must be a plain value", key_node.start_mark)
            if key in mapping:
                raise ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
            mapping[key] = self.construct_object(value_node, deep=deep)
        return mapping


# YAML 1.2 core types instead of PyYAML's YAML 1.1 ones: only true/false are booleans and numbers are plain decimals,
# so yes, on, y, 12:30, 012, 0o12, 0x1f and 2026-11-30 stay strings.
for _tag, _pattern, _first in [
    ("null", r"~|null|Null|NULL|", ["~", "n", "N", ""]),
    ("bool", r"true|True|TRUE|false|False|FALSE", list("tTfF")),
    ("int", r"[-+]?(?:0|[1-9][0-9]*)", list("-+0123456789")),
    (
        "float",
        r"[-+]?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)"
        r"|\.(?:nan|NaN|NAN)",
        list("-+0123456789."),
    ),
]:
    UniqueKeyLoader.add_implicit_resolver(f"tag:yaml.org,2002:{_tag}", re.compile(f"^(?:{_pattern})$"), _first)


def too_deep(value: Any) -> bool:
    """Whether lists and mappings in value nest deeper than MAX_DEPTH (a value below a container at that depth),
    checked a level at a time."""
    level = [value] if type(value) is dict or type(value) is list else []
    for _ in range(MAX_DEPTH):
        level = [
            child
            for node in level
            for child in (node.values() if type(node) is dict else node)
            if type(child) is dict or type(child) is list
        ]
        if not level:
            return False
    return any(level)


def shallow(parse: Callable[[], Any], path: Path, field_name: str = "(file)") -> Any:
    """What parse() returns, unless it nests deeper than MAX_DEPTH (or than the parser can go): a SpecError."""
    try:
        value = parse()
        deep = too_deep(value)
    except RecursionError:
        deep = True
    if deep:
        raise SpecError(path, field_name, f"nested deeper than {MAX_DEPTH} levels")
    return value


def read_yaml(path: Path) -> Any:
    """Parse a YAML file; a missing file, a syntax error, an alias or too deep a nesting is a SpecError."""
    return parse_yaml(read_text(path), path)


def parse_yaml(text: str, path: Path) -> Any:
    """Parse YAML text read from ``path`` (named in errors), as ``read_yaml`` does."""
    try:
        return shallow(lambda: yaml.load(text, Loader=UniqueKeyLoader), path)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "(yaml)"
        problem = getattr(exc, "problem", None) or "malformed YAML"
        raise SpecError(path, where, problem) from None


def read_json(path: Path, field_name: str = "(file)") -> Any:
    """Parse a JSON file; a missing file, bad JSON or too deep a nesting is a SpecError."""
    return parse_json(read_text(path, field_name), path, field_name)


def parse_json(text: str, path: Path, field_name: str = "(file)") -> Any:
    """Parse JSON text read from ``path`` (named in errors), as ``read_json`` does."""
    try:
        return shallow(lambda: json.loads(text), path, field_name)
    except json.JSONDecodeError as exc:
        raise SpecError(path, f"line {exc.lineno}", exc.msg) from None


def parse_model(model: type[M], data: Any, path: Path) -> M:
    """Validate data against a pydantic model; the first error becomes a SpecError."""
    if not isinstance(data, dict):
        raise SpecError(path, "(root)", "expected a mapping")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise SpecError.from_validation(path, exc) from None


@dataclass
class Package:
    """A loaded TaskPackage: its public half, fixture resources and hashes; hidden half on demand."""

    public: TaskPackage
    path: Path
    """The package folder."""
    fixture_hashes: dict[str, str]
    resources: list[dict[str, Any]] = field(repr=False)
    public_files: list[str] = field(default_factory=lambda: [PACKAGE_FILE])
    """The files that make up the public half, by name from the package folder: package.yaml, the suite's
    defaults when there are some (``../suite.yaml``), the fixtures."""
    hidden_source: tuple[Path, str] | None = field(default=None, repr=False)
    """(where it was, its YAML text) for a package rebuilt from a run store's snapshot; None: read from disk."""
    hidden_defaults_source: tuple[Path, str] | None = field(default=None, repr=False)
    """With ``hidden_source``: (where it was, the YAML text) of the suite's hidden defaults the run used, if any."""
    _hidden_facts: tuple[str, str] | None = field(default=None, repr=False)
    """(version, hash) of the hidden half as last read."""
    image: SharedImage | None = field(default=None, repr=False)
    """The shared EHR image the package names, when one is found above it: ``resources`` are then an overlay on
    it (``images``)."""

    @property
    def id(self) -> str:
        return self.public.id

    @cached_property
    def public_hash(self) -> str:
        """Hash of the public half, its fixtures and its shared image (when it has one): what an agent can see."""
        content: dict[str, Any] = {"package": self.public.model_dump(mode="json"), "fixtures": self.fixture_hashes}
        if self.image is not None:
            content["image"] = self.image.content_hash
        return content_hash("public", content)

    @property
    def image_resources(self) -> list[dict[str, Any]]:
        """The resources of its shared image (none without one), not copied."""
        return self.image.resources if self.image is not None else []

    @cached_property
    def hidden_path(self) -> Path:
        """``verifiers/<suite>/<id>.yaml`` in the nearest folder above the package that has it."""
        if self.hidden_source is not None:
            return self.hidden_source[0]
        relative = Path("verifiers") / self.public.suite / f"{self.public.id}.yaml"
        for parent in self.path.resolve().parents:
            if (parent / relative).is_file():
                return parent / relative
        raise SpecError(self.path / PACKAGE_FILE, "id", f"no hidden half found at {relative} above the package")

    @property
    def hidden_defaults_path(self) -> Path | None:
        """The suite's hidden defaults (``verifiers/<suite>/suite.yaml`` beside the hidden half), if there are."""
        if self.hidden_source is not None:
            return self.hidden_defaults_source[0] if self.hidden_defaults_source else None
        path = self.hidden_path.parent / SUITE_FILE
        return path if path.is_file() else None

    def read_hidden(self) -> HiddenHalf:
        """The hidden half, parsed afresh and not kept (checks before a run read it so), over its suite's hidden
        defaults and with its edits expanded; records its version and the hash of that content."""
        text = self.hidden_source[1] if self.hidden_source is not None else read_text(self.hidden_path)
        data = parse_yaml(text, self.hidden_path)
        defaults = self.hidden_defaults_path
        if defaults is not None and isinstance(data, dict):
            source = (
                self.hidden_defaults_source[1]
                if self.hidden_source is not None and self.hidden_defaults_source
                else read_text(defaults)
            )  # with hidden_source, ``defaults`` is hidden_defaults_source's
            base = parse_model(HiddenDefaults, parse_yaml(source, defaults), defaults)
            data = with_hidden_defaults(base.model_dump(mode="json", exclude_unset=True, exclude_none=True), data)
        hidden = expand_cases(parse_model(HiddenHalf, data, self.hidden_path), self.hidden_path)
        if hidden.id != self.public.id:
            raise SpecError(self.hidden_path, "id", f"is {hidden.id!r}, the package is {self.public.id!r}")
        self._hidden_facts = (hidden.version, content_hash("hidden", grading_content(hidden)))
        return hidden

    @cached_property
    def hidden(self) -> HiddenHalf:
        """The hidden half, kept for grading: load it only after an agent has returned, never for an agent."""
        return self.read_hidden()

    @property
    def hidden_version(self) -> str:
        return self._facts()[0]

    @property
    def hidden_hash(self) -> str:
        return self._facts()[1]

    def _facts(self) -> tuple[str, str]:
        """(version, hash) of the hidden half, read once for them."""
        if self._hidden_facts is None:
            self.read_hidden()
        assert self._hidden_facts is not None  # read_hidden records them
        return self._hidden_facts

    @cached_property
    def package_hash(self) -> str:
        """Content hash over both halves and the fixtures."""
        return content_hash("package", {"public": self.public_hash, "hidden": self.hidden_hash})


def load_package(path: str | Path) -> Package:
    """Load one package from its folder or its package.yaml."""
    path = Path(path)
    folder = path.parent if path.name == PACKAGE_FILE else path
    return assemble(folder, lambda name: (folder / name).read_bytes(), disk_listing(folder), folder.resolve())


def image_above(folder: Path, name: str, version: str) -> SharedImage | None:
    """The shared EHR image ``name``/``version`` in the nearest folder above ``folder`` on disk, read once."""
    found = find_image(folder, name, version, disk_listing(folder), lambda relative: (folder / relative).read_bytes())
    return found[0] if found is not None else None


def overlay_bundles(image: SharedImage, bundles: dict[Path, Any]) -> list[dict[str, Any]]:
    """The resources of FHIR Bundles (by file) as an overlay on a shared image (``overlay``)."""
    collected = MergedEntries()
    for path, bundle in bundles.items():
        collected.add(bundle_entries(bundle, path), path)
    return overlay(image, collected)


def disk_listing(folder: Path) -> Listing:
    """The files in a folder given relative to ``folder``, as found on disk."""

    def listing(relative: str) -> list[str]:
        where = folder / relative
        return sorted(p.name for p in where.iterdir() if p.is_file()) if where.is_dir() else []

    return listing


def package_from_files(
    folder: Path, files: dict[str, bytes], hidden: tuple[Path, str], hidden_defaults: tuple[Path, str] | None = None
) -> Package:
    """A package rebuilt from its files (``public_files``, by name), its hidden half's text and its suite's hidden
    defaults (if it had some), as a run store keeps them; the paths are where they were, for messages."""

    on_disk = disk_listing(folder)

    def listing(relative: str) -> list[str]:
        kept = sorted(name.rsplit("/", 1)[1] for name in files if name.rsplit("/", 1)[0] == relative)
        return kept or on_disk(relative)  # a draft's image is on disk; a run store keeps its own copy

    def read(name: str) -> bytes:
        if name in files:
            return files[name]
        if name.startswith("../"):  # a shared image's file, from disk when the files do not hold it
            return (folder / name).read_bytes()
        raise FileNotFoundError(name)

    package = assemble(folder, read, listing)
    package.hidden_source, package.hidden_defaults_source = hidden, hidden_defaults
    return package


def read_file(read: Callable[[str], bytes], path: Path, name: str, field_name: str = "(file)") -> str:
    """The UTF-8 text of ``read(name)`` (the file at ``path``); missing, unreadable or not UTF-8 is a SpecError."""
    try:
        return read(name).decode("utf-8")
    except FileNotFoundError:
        raise SpecError(path, field_name, "file not found") from None
    except UnicodeDecodeError as exc:
        raise SpecError(path, field_name, f"not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise SpecError(path, field_name, exc.strerror or str(exc)) from None


def public_content(folder: Path, read: Callable[[str], bytes]) -> tuple[Any, list[str]]:
    """package.yaml's content over its suite's public defaults (when the folder above has a suite.yaml), and the
    names of the files read."""
    manifest = folder / PACKAGE_FILE
    data = parse_yaml(read_file(read, manifest, PACKAGE_FILE), manifest)
    suite_file = folder.parent / SUITE_FILE
    try:
        raw = read(SUITE_DEFAULTS)
    except FileNotFoundError:
        return data, [PACKAGE_FILE]
    text = read_file(lambda _: raw, suite_file, SUITE_DEFAULTS)
    defaults = parse_model(SuiteDefaults, parse_yaml(text, suite_file), suite_file)
    if isinstance(data, dict):
        data = merged(defaults.model_dump(mode="json", exclude_unset=True, exclude_none=True), data)
    return data, [PACKAGE_FILE, SUITE_DEFAULTS]


def assemble(folder: Path, read: Callable[[str], bytes], listing: Listing, resolved: Path | None = None) -> Package:
    """A package from ``read(name)`` of its files and its shared image (found by ``listing``, ``images``); with
    ``resolved`` (a real folder), fixtures must stay inside it."""
    manifest = folder / PACKAGE_FILE
    data, names = public_content(folder, read)
    public = parse_model(TaskPackage, data, manifest)
    env = public.environment
    found = find_image(folder, env.ehr_image, env.ehr_version, listing, read)
    image, image_files = found if found is not None else (None, [])
    if image is None and not env.fixtures:
        where = f"{IMAGES_DIR}/{env.ehr_image}/{env.ehr_version}"
        raise SpecError(manifest, "environment.fixtures", f"is empty and no EHR image {where} is above the package")
    hashes: dict[str, str] = {}
    collected = MergedEntries()
    for i, name in enumerate(public.environment.fixtures):
        fixture = folder / name
        if resolved is not None and not (resolved / name).resolve().is_relative_to(resolved):
            raise SpecError(manifest, f"environment.fixtures.{i}", f"must stay inside the package folder: {name}")
        try:
            raw = read(name)
        except FileNotFoundError:
            raise SpecError(manifest, f"environment.fixtures.{i}", f"file not found: {name}") from None
        except OSError as exc:
            raise SpecError(manifest, f"environment.fixtures.{i}", f"{exc.strerror or exc}: {name}") from None
        hashes[name] = "sha256:" + hashlib.sha256(raw).hexdigest()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SpecError(fixture, "(file)", f"not UTF-8 text (byte {exc.start})") from None
        collected.add(bundle_entries(parse_json(text, fixture), fixture), fixture)
    return Package(
        public=public,
        path=folder,
        fixture_hashes=hashes,
        resources=collected.resolved() if image is None else overlay(image, collected),
        public_files=[*names, *public.environment.fixtures, *image_files],
        image=image,
    )


def overlay(image: SharedImage, collected: MergedEntries) -> list[dict[str, Any]]:
    """A package's own resources over its shared image (references into the image resolved): one the image has
    too is dropped when it is the same, else a SpecError naming both files."""
    resources = collected.resolved(image.resolver)
    own: list[dict[str, Any]] = []
    for resource, path in zip(resources, collected.paths, strict=True):
        key = (resource["resourceType"], resource["id"])
        if key not in image.origin:
            own.append(resource)
            continue
        shared, source = image.origin[key]
        if canonical(shared) != canonical(resource):
            raise SpecError(path, "entry", f"{key[0]}/{key[1]} differs from the one in the EHR image's {source}")
    return own


def bundle_resources(bundle: Any, path: Path) -> list[dict[str, Any]]:
    """The resources of a FHIR Bundle, each checked to have a type and an id given once, with their references
    rewritten to ``Type/id`` (``_references``)."""
    return resolve_references(bundle_entries(bundle, path))


Entry = tuple[str | None, dict[str, Any]]
"""A Bundle entry: its fullUrl (None when it has none) and its resource."""


def bundle_entries(bundle: Any, path: Path) -> list[Entry]:
    """The entries of a FHIR Bundle, each resource checked to have a type and an id not given before in the bundle."""
    if not isinstance(bundle, dict) or bundle.get("resourceType") != "Bundle":
        raise SpecError(path, "resourceType", "expected a FHIR Bundle")
    entries = bundle.get("entry") or []
    if not isinstance(entries, list):
        raise SpecError(path, "entry", "expected a list")
    seen: set[tuple[str, str]] = set()
    found: list[Entry] = []
    for i, entry in enumerate(entries):
        resource = entry.get("resource") if isinstance(entry, dict) else None
        if not isinstance(resource, dict) or not resource.get("resourceType") or not resource.get("id"):
            raise SpecError(path, f"entry.{i}.resource", "needs resourceType and id")
        key = (resource["resourceType"], resource["id"])
        if key in seen:
            raise SpecError(path, f"entry.{i}.resource", f"duplicate {key[0]}/{key[1]}")
        seen.add(key)
        full_url = entry.get("fullUrl")
        found.append((full_url if isinstance(full_url, str) else None, resource))
    return found


class MergedEntries:
    """The entries of several bundles as one EHR: a resource given again with the same content (a Practitioner every
    Synthea patient's bundle repeats) is kept once; one given again with other content is a SpecError naming both
    files."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.paths: list[Path] = []
        """The file of each entry."""
        self._first: dict[tuple[str, str], tuple[dict[str, Any], Path]] = {}

    def add(self, entries: list[Entry], path: Path) -> None:
        for i, (full_url, resource) in enumerate(entries):
            key = (resource["resourceType"], resource["id"])
            if key not in self._first:
                self._first[key] = (resource, path)
                self.entries.append((full_url, resource))
                self.paths.append(path)
            elif canonical(self._first[key][0]) != canonical(resource):
                first = self._first[key][1]
                raise SpecError(path, f"entry.{i}.resource", f"{key[0]}/{key[1]} differs from the one in {first}")

    def resolved(self, base: Resolver | None = None) -> list[dict[str, Any]]:
        """The resources, references resolved (``_references``; ``base``: a shared image's resolver)."""
        return resolve_references(self.entries, base)


def canonical(resource: dict[str, Any]) -> str:
    """A resource as canonical JSON: keys sorted, no spaces (two equal resources are one text)."""
    return json.dumps(resource, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def find_packages(paths: Sequence[str | Path]) -> list[Path]:
    """Package folders named by the paths (a package, its package.yaml, or any folder above packages)."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.name == PACKAGE_FILE or (path / PACKAGE_FILE).is_file():
            found.append(path.parent if path.name == PACKAGE_FILE else path)
        elif path.is_dir():
            found.extend(sorted(p.parent for p in path.rglob(PACKAGE_FILE)))
        else:
            raise SpecError(path, "(path)", "no such package or folder")
    if not found:
        raise SpecError(paths[0] if paths else ".", "(path)", f"no {PACKAGE_FILE} found")
    return found


def load_trajectory(path: str | Path) -> TrajectoryFile:
    """Read a trajectory file (JSON)."""
    path = Path(path)
    return parse_model(TrajectoryFile, read_json(path), path)
