"""``forge select`` (what a change needs, from the mapping ``parameterized_runs/impact.yaml``) and ``forge trace``
(every requirement traced to the packages that test it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click

from ..spec import UsageError, echo, printable


def repository_file(default: str, help_text: str) -> dict:
    """The settings of an option naming a file of the repository, read from its root."""
    return {
        "type": click.Path(dir_okay=False, path_type=Path),
        "default": default,
        "show_default": True,
        "help": help_text,
    }


@click.command(name="select")
@click.argument("paths", nargs=-1)
@click.option("--changed", is_flag=True, help="PATHS are what changed (from the repository's root).")
@click.option("--since", "ref", metavar="GIT_REF", help="What changed since this commit (and is not committed yet).")
@click.option(
    "--map",
    "mapping",
    **repository_file("parameterized_runs/impact.yaml", "The mapping: path patterns -> suites and tests."),
)
@click.option("--run", "run_it", is_flag=True, help="Run what is selected; exit 1 when any of it fails.")
def select_change(paths, changed, ref, mapping, run_it) -> None:
    """What a change needs: the suites (`forge selftest --mutants` on their packages, and their test groups, which run
    the reference agents) and test groups, each with the pattern its path matched; a path no pattern matches selects
    everything. Run from the repository's root. A release never selects: it runs everything."""
    from ..engine import changed_since, read_impact, run_commands, select_for_change

    if bool(ref) == changed or bool(paths) != changed:
        raise UsageError("forge select", "--changed PATHS | --since GIT_REF", "give one of the two")
    impact = read_impact(mapping)
    changes = changed_since(ref) if ref else list(paths)
    selection = select_for_change(changes, impact)
    echo(f"{len(changes)} changed path(s)" + (f" since {printable(ref)}" if ref else ""))
    for (why, pattern, suites, tests), paths_matched in by_rule(selection.matches).items():
        echo(f"{why} ({pattern}) -> {needs(suites, tests)}:")
        for path in paths_matched:
            echo(f"  {printable(path)}")
    if selection.unmatched:
        echo(f"no pattern of {mapping} matches these -> everything (the safe default):")
        for path in selection.unmatched:
            echo(f"  {printable(path)}")
    echo(f"suites (forge selftest --mutants, and their test groups): {', '.join(selection.suites) or 'none'}")
    echo(f"test groups: {' '.join(selection.tests) or 'none'}")
    if run_it:
        sys.exit(run_all(run_commands(selection, impact, mapping)))


def by_rule(matches) -> dict[tuple, list[str]]:
    """The changed paths under each (rule, pattern, what it adds), in the order first matched."""
    grouped: dict[tuple, list[str]] = {}
    for m in matches:
        grouped.setdefault((m.why, m.pattern, m.suites, m.tests), []).append(m.path)
    return grouped


def needs(suites, tests) -> str:
    """``suites a, b; tests x y`` for one match, or ``nothing``."""
    parts = [f"suites {', '.join(suites)}"] * bool(suites) + [f"tests {' '.join(tests)}"] * bool(tests)
    return "; ".join(parts) or "nothing"


def run_all(commands: list[list[str]]) -> int:
    """Run each command in turn, every one whatever the last gave; 1 when any failed."""
    failed = []
    for command in commands:
        shown = " ".join(["forge" if part == "forge_kernel.cli" else part for part in command[2:]])
        echo(f"$ {shown}")
        if subprocess.run(command, check=False).returncode:
            failed.append(shown)
    for shown in failed:
        echo(f"FAILED: {shown}", err=True)
    return 1 if failed else 0


@click.command(name="trace")
@click.argument("paths", nargs=-1)
@click.option(
    "--requirements", "requirements_file", **repository_file("task_packages/requirements.yaml", "The requirements.")
)
def trace_requirements(paths, requirements_file) -> None:
    """The trace matrix: each requirement and the packages that name it in `covers` (task_packages by default); exit
    1, with one line each, when a requirement has no package or a package names an unknown requirement."""
    from ..spec import PACKAGE_FILE, Coverage, find_packages, load_package, read_requirements, trace_matrix

    requirements = read_requirements(requirements_file)
    packages = [load_package(folder) for folder in find_packages(list(paths) or ["task_packages"])]
    coverages = [Coverage(p.id, p.path / PACKAGE_FILE, tuple(p.public.covers)) for p in packages]
    matrix = trace_matrix(requirements, requirements_file, coverages)
    for requirement in requirements.requirements:
        covering = matrix.rows[requirement.id]
        echo(f"{requirement.id:<32} {len(covering):>3}  {', '.join(covering) or '-'}")
    for problem in matrix.problems:
        echo(printable(problem), err=True)
    echo(
        f"trace: {len(requirements.requirements)} requirement(s), {len(packages)} package(s): "
        + (f"{len(matrix.problems)} problem(s)" if matrix.problems else "every requirement has a package")
    )
    if matrix.problems:
        sys.exit(1)
