"""A package being written in Python: its public half, hidden half and fixtures as models, built into the very
``Package`` the loader would read from the files ``save`` writes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..spec import (
    PACKAGE_FILE,
    SUITE_DEFAULTS,
    SUITE_FILE,
    Counterexample,
    Edit,
    HiddenDefaults,
    HiddenHalf,
    Package,
    SpecError,
    SuiteDefaults,
    TaskPackage,
    TrajectoryFile,
    ValidMutant,
    ValidVariant,
    VerifierUse,
    edits_between,
    package_from_files,
    parse_model,
    read_yaml,
)

HEADERS = {
    "public": "# Public half: what the agent may see. SYNTHETIC data only.\n",
    "hidden": "# Hidden half: never shown to an agent. SYNTHETIC data only.\n",
}


FLOW_WIDTH = 80
"""A mapping or list whose JSON fits in this many characters is written on one line (flow style)."""


class CompactDumper(yaml.SafeDumper):
    """Block style for what is long, one line for each small mapping or list; a repeated object written out again
    rather than as an anchor and alias."""

    def ignore_aliases(self, data) -> bool:
        return True

    def represent_mapping(self, tag, mapping, flow_style=None):
        return super().represent_mapping(tag, mapping, flow_style=fits(mapping))

    def represent_sequence(self, tag, sequence, flow_style=None):
        return super().represent_sequence(tag, sequence, flow_style=fits(sequence))


def fits(value) -> bool:
    return len(json.dumps(value, ensure_ascii=False)) <= FLOW_WIDTH


def yaml_text(data: dict, header: str = "") -> str:
    return header + yaml.dump(data, Dumper=CompactDumper, allow_unicode=True, sort_keys=False, width=120)


def json_bytes(bundle: dict) -> bytes:
    return (json.dumps(bundle, ensure_ascii=False, indent=1) + "\n").encode("utf-8")


def without_defaults(own: dict, defaults: dict) -> dict:
    """``own`` less what ``defaults`` already give (the same value; mappings compared key by key)."""
    out = {}
    for key, value in own.items():
        if key not in defaults:
            out[key] = value
        elif isinstance(value, dict) and isinstance(defaults[key], dict):
            rest = without_defaults(value, defaults[key])
            if rest:
                out[key] = rest
        elif value != defaults[key]:
            out[key] = value
    return out


def with_defaults(own: dict, defaults: dict) -> dict:
    """``own`` over ``defaults`` as the loader merges them (mappings key by key), ``own``'s keys first."""
    out = {
        key: with_defaults(value, defaults[key])
        if isinstance(value, dict) and isinstance(defaults.get(key), dict)
        else value
        for key, value in own.items()
    }
    return out | {key: value for key, value in defaults.items() if key not in out}


@dataclass(frozen=True)
class Suite:
    """Where a package is saved (``task_root/<suite>/``, ``verifiers_root/<suite>/``) and what its suite files give."""

    task_root: Path
    verifiers_root: Path
    name: str

    @property
    def public_file(self) -> Path:
        return self.task_root / self.name / SUITE_FILE

    @property
    def hidden_file(self) -> Path:
        return self.verifiers_root / self.name / SUITE_FILE

    def defaults(self) -> tuple[dict, dict]:
        """(public, hidden) defaults the suite files give, as JSON data (empty where there is no file)."""
        out = []
        for path, model in ((self.public_file, SuiteDefaults), (self.hidden_file, HiddenDefaults)):
            found = parse_model(model, read_yaml(path), path) if path.is_file() else model()
            out.append(found.model_dump(mode="json", exclude_unset=True, exclude_none=True))
        return out[0], out[1]

    def save(self, public: dict, hidden: dict) -> None:
        """Write the suite files: ``public`` defaults (``SuiteDefaults``) and ``hidden`` ones (``HiddenDefaults``,
        the base verifiers), each checked against its model first."""
        for path, model, data, what in (
            (self.public_file, SuiteDefaults, public, "public"),
            (self.hidden_file, HiddenDefaults, hidden, "hidden"),
        ):
            parse_model(model, data, path)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(yaml_text(data, f"# Suite defaults, {what} half.\n"), encoding="utf-8")


@dataclass
class Draft:
    """A TaskPackage under construction. ``public`` is the whole public half (suite defaults included); the hidden
    half is kept as its parts, cases as edits of the gold where written so."""

    public: TaskPackage
    fixtures: dict[str, dict]
    """Fixture file name (as in ``environment.fixtures``) -> FHIR R4 Bundle."""
    suite: Suite
    verifiers: list[VerifierUse] = field(default_factory=list)
    expected_tools: list[str] = field(default_factory=list)
    """The expected chain; empty: the tools of the gold, in order, each once."""
    gold: TrajectoryFile | None = None
    counterexamples: list[Counterexample] = field(default_factory=list)
    valid_variants: list[ValidVariant] = field(default_factory=list)
    valid_mutants: list[ValidMutant] = field(default_factory=list)
    hidden_version: str = "1.0.0"

    @property
    def folder(self) -> Path:
        return self.suite.task_root / self.public.suite / self.public.id

    @property
    def hidden_path(self) -> Path:
        return self.suite.verifiers_root / self.public.suite / f"{self.public.id}.yaml"

    def add_verifier(self, id: str, kind: str, category: str, severity: str = "hard", **params) -> VerifierUse:
        """Add (or replace, by id) a verifier."""
        use = VerifierUse(id=id, kind=kind, category=category, severity=severity, params=params)
        self.verifiers = [v for v in self.verifiers if v.id != id] + [use]
        return use

    def add_counterexample(self, name: str, edits: list[Edit | dict], must_fail: list[str], **expect) -> Counterexample:
        """A counterexample written as edits of the gold (``expect_accuracy`` / ``expect_completion`` may pin its
        scores); replaces one of the same name."""
        case = Counterexample(name=name, edits=[Edit.model_validate(e) for e in edits], must_fail=must_fail, **expect)
        self.counterexamples = [c for c in self.counterexamples if c.name != name] + [case]
        return case

    def add_variant(self, name: str, edits: list[Edit | dict], reason: str) -> ValidVariant:
        """A valid variant written as edits of the gold; replaces one of the same name."""
        case = ValidVariant(name=name, edits=[Edit.model_validate(e) for e in edits], reason=reason)
        self.valid_variants = [v for v in self.valid_variants if v.name != name] + [case]
        return case

    def hidden_data(self) -> dict:
        """The hidden half as written: cases as edits, a full copy turned into edits, the suite's base verifiers
        left out."""
        if self.gold is None:
            raise SpecError(self.hidden_path, "gold", "record the gold solution first")
        base = {v["id"]: VerifierUse.model_validate(v) for v in self.suite.defaults()[1].get("verifiers", [])}
        cases = {}
        for name, items in (("counterexamples", self.counterexamples), ("valid_variants", self.valid_variants)):
            cases[name] = [
                case.model_dump(mode="json", exclude_none=True, exclude={"trajectory"})
                | (
                    {}
                    if case.edits or case.trajectory is None  # a case has one or the other
                    else {
                        "edits": [
                            e.model_dump(mode="json", exclude_none=True)
                            for e in edits_between(self.gold, case.trajectory)
                        ]
                    }
                )
                for case in items
            ]
        expected = self.expected_tools or list(dict.fromkeys(c.tool for c in self.gold.calls))
        return {
            "id": self.public.id,
            "version": self.hidden_version,
            "expected_tools": expected,
            "verifiers": [
                v.model_dump(mode="json", exclude_defaults=True) for v in self.verifiers if base.get(v.id) != v
            ],
            "gold": self.gold.model_dump(mode="json", exclude_defaults=True),
            **cases,
            **(
                {"valid_mutants": [m.model_dump(mode="json") for m in self.valid_mutants]} if self.valid_mutants else {}
            ),
        }

    def files(self) -> tuple[dict[str, bytes], str, str | None]:
        """(the public files by name, as ``Package.public_files``; the hidden half's YAML; the hidden defaults'
        YAML or None), exactly as ``save`` writes them."""
        public_defaults, hidden_defaults = self.suite.defaults()
        own = without_defaults(self.public.model_dump(mode="json", exclude_none=True), public_defaults)
        files = {PACKAGE_FILE: yaml_text(own, HEADERS["public"]).encode("utf-8")}
        if self.suite.public_file.is_file():
            files[SUITE_DEFAULTS] = self.suite.public_file.read_bytes()
        files.update({name: json_bytes(bundle) for name, bundle in self.fixtures.items()})
        defaults = self.suite.hidden_file.read_text(encoding="utf-8") if hidden_defaults else None
        return files, yaml_text(self.hidden_data(), HEADERS["hidden"]), defaults

    def package(self) -> Package:
        """The package as the loader reads it from the saved files (suite defaults merged, edits expanded)."""
        files, hidden, defaults = self.files()
        return package_from_files(
            self.folder, files, (self.hidden_path, hidden), (self.suite.hidden_file, defaults) if defaults else None
        )

    def hidden_half(self) -> HiddenHalf:
        """The hidden half as grading sees it."""
        return self.package().hidden

    def save(self) -> tuple[Path, Path]:
        """Write both halves and the fixtures; returns (package folder, hidden half file)."""
        files, hidden, _ = self.files()
        for name, content in files.items():
            if name != SUITE_DEFAULTS:
                (self.folder / name).parent.mkdir(parents=True, exist_ok=True)
                (self.folder / name).write_bytes(content)
        self.hidden_path.parent.mkdir(parents=True, exist_ok=True)
        self.hidden_path.write_text(hidden, encoding="utf-8")
        return self.folder, self.hidden_path
