"""Requirements and their tests: ``task_packages/requirements.yaml`` lists requirements by id, each package names the
ones it tests (``covers`` of its public half), and the trace matrix says which packages test each requirement."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field, model_validator

from .loading import parse_model, read_yaml
from .package import Strict

REQUIREMENTS_FILE = Path("task_packages") / "requirements.yaml"
REQUIREMENT_ID = r"^[A-Z][A-Z0-9]*(-[A-Z0-9]+)+$"
"""A requirement's id: upper-case words joined by ``-`` (``SAFE-ALLERGY-CHECK``)."""


class Requirement(Strict):
    """One requirement a package can test."""

    id: str = Field(pattern=REQUIREMENT_ID)
    group: str = Field(description="The group it belongs to: a key of the file's `groups`.")
    text: str = Field(min_length=1, description="What is required, in words.")
    source: str = Field("", description="Where the requirement comes from: a verifier kind, a protocol, a suite.")


class Requirements(Strict):
    """A requirements file: its groups (name -> what they hold) and its requirements, each id once."""

    groups: dict[str, str] = Field(min_length=1)
    requirements: list[Requirement] = Field(min_length=1)

    @model_validator(mode="after")
    def _ids_once_groups_known(self) -> Requirements:
        seen: set[str] = set()
        for i, requirement in enumerate(self.requirements):
            if requirement.id in seen:
                raise ValueError(f"requirements.{i}.id: {requirement.id} is listed twice")
            if requirement.group not in self.groups:
                raise ValueError(f"requirements.{i}.group: {requirement.group!r} is not one of groups")
            seen.add(requirement.id)
        return self


def read_requirements(path: str | Path = REQUIREMENTS_FILE) -> Requirements:
    """A requirements file, as its format reads it (a missing file or a bad field is a SpecError)."""
    path = Path(path)
    return parse_model(Requirements, read_yaml(path), path)


@dataclass(frozen=True)
class Coverage:
    """What a package says it covers: its id, where its public half is, the requirement ids it names."""

    package: str
    file: Path
    covers: tuple[str, ...]


@dataclass(frozen=True)
class TraceMatrix:
    """Each requirement and the packages that test it; the problems: a requirement no package tests, a package that
    names an unknown requirement (one line each)."""

    rows: dict[str, list[str]]
    problems: list[str]


def trace_matrix(requirements: Requirements, source: Path, coverages: Iterable[Coverage]) -> TraceMatrix:
    """The trace matrix of ``requirements`` (read from ``source``) against what the packages cover."""
    rows: dict[str, list[str]] = {r.id: [] for r in requirements.requirements}
    problems: list[str] = []
    for coverage in coverages:
        for requirement in coverage.covers:
            if requirement in rows:
                rows[requirement].append(coverage.package)
            else:
                problems.append(f"{coverage.file}: covers: {requirement} is not a requirement of {source}")
    problems += [f"{source}: {rid}: no package covers it" for rid, packages in rows.items() if not packages]
    return TraceMatrix(rows, problems)
