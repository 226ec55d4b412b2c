"""The commands about packages and what grades them: ``forge validate``, ``selftest``, ``catalog`` and
``import-synthea``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..spec import SpecError, echo


@click.command()
@click.argument("paths", nargs=-1, required=True)
def validate(paths: tuple[str, ...]) -> None:
    """Check packages: both halves, their cross-references, FHIR R4 fixtures and shared images, and that each
    current patient has records; every problem of every package is reported."""
    from ..engine import package_problems
    from ..spec import find_packages

    failures = 0
    for folder in find_packages(list(paths)):
        try:
            package, problems = package_problems(folder)
        except SpecError as exc:
            problems = [exc]
        for problem in problems:
            echo(str(problem), err=True)
        if problems:
            failures += 1
        else:
            echo(f"ok    {package.id}  {package.package_hash[:19]}")
    if failures:
        sys.exit(2)


@click.command(name="catalog")
@click.option("--json", "as_json", is_flag=True, help="Print every entry as JSON, with its model's JSON Schema.")
def show_catalog(as_json) -> None:
    """Everything registered by name: tools, verifier kinds (with params), agents, gate checks."""
    from .. import catalog
    from ..built_in import load

    entries = load()
    if as_json:
        echo(
            json.dumps(
                {kind: [catalog.as_json(e) for e in entries.of(kind)] for kind in catalog.KINDS},
                ensure_ascii=False,
                indent=1,
                default=str,
            )
        )
        return
    for kind in catalog.KINDS:
        echo(f"{kind}s ({len(entries.of(kind))})")
        for entry in entries.of(kind):
            echo(f"  {catalog.entry_line(entry)}")


@click.command()
@click.argument("paths", nargs=-1)
@click.option(
    "--mutants",
    "with_mutants",
    is_flag=True,
    help="Also grade generic mutants of each gold solution; list every one the verifiers do not reject.",
)
def selftest(paths, with_mutants) -> None:
    """Verifier coverage: every gold solution passes, every counterexample fails as named, every valid variant
    passes; each judge's agreement with its labelled set. Not a model score."""
    import asyncio

    from ..analysis import cohens_kappa
    from ..engine import Images, judge_agreements, mutation_test, selftest_package
    from ..spec import find_packages, load_package

    packages = [load_package(folder) for folder in find_packages(list(paths) or ["task_packages"])]

    async def all_packages():
        images = Images()
        cases = [await selftest_package(package, images) for package in packages]
        reports = [await mutation_test(package, images) for package in packages] if with_mutants else []
        return cases, reports

    by_package, reports = asyncio.run(all_packages())
    for cases in by_package:
        failing = [c for c in cases if not c.ok]
        kinds = [c.kind for c in cases]
        echo(
            f"{'FAIL' if failing else 'ok  '}  {cases[0].task_id:<32} gold + {kinds.count('counterexample')} "
            f"counterexample(s) + {kinds.count('valid variant')} valid variant(s)"
        )
        for c in failing:
            echo(f"      {c.kind} {c.case}: {c.detail}")
    bad = [cases[0].task_id for cases in by_package if not all(c.ok for c in cases)]
    echo(
        f"verifier coverage: {len(by_package) - len(bad)}/{len(by_package)} package(s) tell the gold solution "
        "and valid variants from every counterexample (a check of the verifiers, not a model score)"
    )
    for judge in judge_agreements(packages):
        agreement = "no labelled set" if judge.pairs is None else str(cohens_kappa(judge.pairs))
        echo(f"judge {judge.name} ({judge.identity}): {agreement} ({judge.labelled_set})")
    if with_mutants:
        echo_mutants(reports)
    if bad or not all(r.ok for r in reports):
        sys.exit(1)


def echo_mutants(reports) -> None:
    """Per package, the operators' rejected / applicable counts and every mutant that is a problem; then one line
    per operator."""
    from ..engine import PROBLEMS, operator_totals, operators_line, totals_line

    for report in reports:
        state = "ok  " if report.ok else "FAIL"
        echo(f"{state}  {report.task_id:<32} mutants rejected: {operators_line(report)}")
        for r in (r for r in report.results if r.status in PROBLEMS):
            echo(f"      {r.status}: {r.mutant.operator} {r.mutant.target} ({r.mutant.note}): {r.detail}")
            for line in r.mutant.lines():
                echo(f"        {line}")
        for d in report.unmatched:
            echo(f"      valid_mutants: {d.operator} {d.target} matches no mutant")
    echo("mutants per operator (a check of the verifiers, not a model score):")
    for operator, counts in operator_totals(reports).items():
        echo(f"  {totals_line(operator, counts)}")


@click.command(name="import-synthea")
@click.argument("bundle_dir", type=click.Path(path_type=Path))
@click.option(
    "--out", required=True, type=click.Path(path_type=Path), help="The image folder: ehr_images/<name>/<version>."
)
@click.option(
    "--patients", type=click.IntRange(min=1), default=None, help="How many patients to draw (all by default)."
)
@click.option("--seed", type=int, default=0, show_default=True, help="The seed of the draw.")
def import_synthea(bundle_dir: Path, out: Path, patients: int | None, seed: int) -> None:
    """Write a named EHR image from Synthea's FHIR R4 patient bundles (synthetic data): each resource validated,
    shared ones written once; says what was kept, merged and dropped."""
    from ..spec import import_synthea as write_image

    report = write_image(bundle_dir, out, patients, seed)
    echo(f"image {out.parent.name} version {out.name}: {len(report.patients)} patient(s) in {out}")
    echo(f"kept    {sum(report.kept.values()):,} resource(s): {counts(report.kept)}")
    echo(
        f"merged  {sum(report.merged.values()):,} identical copies of shared resources, written once: {counts(report.merged)}"
    )
    echo(f"dropped {len(report.dropped):,} resource(s), not valid FHIR R4" + ":" * bool(report.dropped))
    for line in report.dropped:
        echo(f"  {line}")


def counts(by_type) -> str:
    """``Observation 11,245 · Procedure 2,379 · ...``, most first; "none" when empty."""
    return " · ".join(f"{name} {n:,}" for name, n in by_type.most_common()) or "none"
