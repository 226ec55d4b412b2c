"""Evaluation that follows the change: which suites and test groups a change to the repository needs.

The mapping (``parameterized_runs/impact.yaml``) holds the suites (each its package folder and the test groups that
run the reference agents on it) and rules (path patterns -> suites and test groups). Every rule a changed path
matches adds what it names; a path that no rule matches selects everything, the safe default. A release never
selects: it runs everything.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field, model_validator

from ..spec import SpecError, Strict, UsageError, parse_model, read_yaml

IMPACT_FILE = Path("parameterized_runs") / "impact.yaml"
EVERY_SUITE = "*"
SUITE_SLOT = "{suite}"
"""In a path pattern: the name of any suite of the mapping; in a rule's ``suites``: the suite that name matched."""
PATH_SLOT = "{path}"
"""In a rule's ``tests``: the changed path itself (a test file that changed runs)."""


class Suite(Strict):
    """A suite the mapping can select: where its packages are, and the test groups that run it."""

    packages: str = Field(description="The folder of its packages, from the repository's root.")
    tests: list[str] = Field(default_factory=list, description="Test groups (pytest paths) that run the suite.")


class Rule(Strict):
    """Path patterns (``*`` inside a folder, ``**`` any depth, ``{suite}`` a suite's name) and what they need."""

    why: str = Field(min_length=1, description="What the paths are, as the selection says it.")
    paths: list[str] = Field(min_length=1)
    suites: list[str] = Field(
        default_factory=list, description="Suites by name, `*` (every suite) or `{suite}` (the one the path names)."
    )
    tests: list[str] = Field(
        default_factory=list, description="Test groups: pytest paths from the root; `{path}` is the changed path."
    )
    adds_only: bool = Field(
        False, description="Adds its tests to what other rules select; a path only it matches is still unmatched."
    )


class ImpactMap(Strict):
    """``parameterized_runs/impact.yaml``: the suites, what everything means, and the rules."""

    suites: dict[str, Suite] = Field(min_length=1)
    everything: list[str] = Field(
        default_factory=lambda: ["tests"], description="The test groups run when everything is (with every suite)."
    )
    rules: list[Rule] = Field(min_length=1)

    @model_validator(mode="after")
    def _suites_known(self) -> ImpactMap:
        for i, rule in enumerate(self.rules):
            for name in rule.suites:
                slotted = name == SUITE_SLOT and any(SUITE_SLOT in p for p in rule.paths)
                if name not in self.suites and name != EVERY_SUITE and not slotted:
                    raise ValueError(f"rules.{i}.suites: {name!r} is no suite of the mapping (nor * or {SUITE_SLOT})")
        return self


def read_impact(path: str | Path = IMPACT_FILE) -> ImpactMap:
    """The mapping, as its format reads it (a missing file or a bad field is a SpecError)."""
    path = Path(path)
    return parse_model(ImpactMap, read_yaml(path), path)


def pattern_regex(pattern: str, suites: Iterable[str]) -> re.Pattern[str]:
    """A path pattern as a regular expression over a whole path."""
    slot = "(?P<suite>" + "|".join(re.escape(s) for s in suites) + ")"
    tokens = re.split(r"(\*\*/|/\*\*$|\*\*|\*|\?|\{suite\})", pattern)
    meaning = {"**/": "(?:.*/)?", "/**": "(?:/.*)?", "**": ".*", "*": "[^/]*", "?": "[^/]", SUITE_SLOT: slot}
    return re.compile("".join(meaning.get(t, re.escape(t)) for t in tokens))


@dataclass(frozen=True)
class Match:
    """A changed path, the rule and pattern it matched, and what that adds."""

    path: str
    why: str
    pattern: str
    suites: tuple[str, ...]
    tests: tuple[str, ...]
    adds_only: bool = False


@dataclass
class Selection:
    """What a change needs: the suites and test groups (in the mapping's order), each path's matches, and the paths
    no rule matched (then everything is selected)."""

    suites: list[str]
    tests: list[str]
    matches: list[Match] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)

    @property
    def everything(self) -> bool:
        return bool(self.unmatched)


def matches_of(path: str, impact: ImpactMap) -> list[Match]:
    """Every rule ``path`` matches (by its first matching pattern), with the suites it names resolved."""
    found = []
    for rule in impact.rules:
        for pattern in rule.paths:
            hit = pattern_regex(pattern, impact.suites).fullmatch(path)
            if hit:
                named = hit.groupdict().get("suite")
                suites = [s for s in impact.suites if rule_names(rule, s, named)]
                tests = tuple(t.replace(PATH_SLOT, path) for t in rule.tests)
                found.append(Match(path, rule.why, pattern, tuple(suites), tests, rule.adds_only))
                break
    return found


def rule_names(rule: Rule, suite: str, named: str | None) -> bool:
    """Whether the rule (matched with ``{suite}`` = ``named``) selects ``suite``."""
    return EVERY_SUITE in rule.suites or suite in rule.suites or (SUITE_SLOT in rule.suites and suite == named)


def select_for_change(paths: Sequence[str], impact: ImpactMap) -> Selection:
    """What the changed ``paths`` need; a path no rule matches selects every suite and the ``everything`` tests."""
    matches = [m for path in paths for m in matches_of(path, impact)]
    unmatched = [p for p in paths if not any(m.path == p and not m.adds_only for m in matches)]
    chosen = set(impact.suites) if unmatched else {s for m in matches for s in m.suites}
    suites = [s for s in impact.suites if s in chosen]
    tests = list(impact.everything) if unmatched else []
    tests += [t for m in matches for t in m.tests] + [t for s in suites for t in impact.suites[s].tests]
    return Selection(suites, without_nested(tests), matches, unmatched)


def without_nested(tests: list[str]) -> list[str]:
    """The test groups once each, in order, leaving out any inside another one of them."""
    unique = list(dict.fromkeys(t.rstrip("/") for t in tests))
    return [t for t in unique if not any(t != o and t.startswith(o + "/") for o in unique)]


def git(args: list[str], field: str, value: str, problem: str) -> str:
    """The output of ``git ARGS`` in this folder; a failure is a one-line UsageError ``field: value: message``, the
    message git's own first line, or ``problem`` where git says nothing."""
    try:
        done = subprocess.run(["git", *args], capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise UsageError(field, value, "git is not installed") from None
    if done.returncode:
        said = done.stderr.strip().splitlines()
        raise UsageError(field, value, said[0] if said else problem)
    return done.stdout


def changed_since(ref: str) -> list[str]:
    """The paths changed since the commit ``ref``: committed since, changed in the work tree, or new and not
    ignored; relative to this folder."""
    git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"], "--since", ref, "no such commit")
    changed = git(["diff", "-z", "--name-only", "--relative", ref, "--"], "--since", ref, "git diff failed")
    new = git(["ls-files", "-z", "--others", "--exclude-standard"], "--since", ref, "git ls-files failed")
    return list(dict.fromkeys(p for p in [*changed.split("\0"), *new.split("\0")] if p))


def run_commands(selection: Selection, impact: ImpactMap, source: Path) -> list[list[str]]:
    """What ``--run`` runs: ``forge selftest --mutants`` on the selected suites' packages, then pytest on the test
    groups; a folder or test file the mapping (read from ``source``) names that does not exist is a SpecError,
    before anything runs."""
    folders = [impact.suites[s].packages for s in selection.suites]
    missing = [p for p in [*folders, *selection.tests] if not Path(p.split("::")[0]).exists()]
    if missing:
        raise SpecError(source, missing[0], "no such file or folder in this repository")
    runs = [[sys.executable, "-m", "forge_kernel.cli", "selftest", "--mutants", *folders]] if folders else []
    return runs + ([[sys.executable, "-m", "pytest", "-q", *selection.tests]] if selection.tests else [])
