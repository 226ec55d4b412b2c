"""``forge grade`` (one recorded trajectory) and ``forge regrade`` (a run's stored trajectories)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..spec import echo
from ._common import OutputFile


@click.command()
@click.option("--package", "package_path", required=True, help="Package folder or package.yaml.")
@click.option("--trajectory", "trajectory_path", required=True, help="Trajectory JSON file.")
@click.option("--json", "json_out", type=OutputFile(), help="Write the grading as JSON.")
def grade(package_path, trajectory_path, json_out) -> None:
    """Grade one recorded trajectory: replay its calls on a fresh EHR, then run the verifiers."""
    import asyncio

    from ..engine import grade_trajectory, trajectory_json
    from ..spec import load_package, load_trajectory

    package = load_package(package_path)
    record = asyncio.run(grade_trajectory(package, load_trajectory(trajectory_path), judge=True))
    echo(f"{package.id} · {trajectory_path} · hidden half {record.grading.hidden_version}")
    echo_grading(record)
    if json_out:
        json_out.write_text(json.dumps(trajectory_json(record), ensure_ascii=False, indent=2), encoding="utf-8")


def echo_grading(record, err: bool = False) -> None:
    """A graded trial's scores, then each verdict on a line."""
    s = record.grading.scores
    echo(
        f"{'PASSED' if s.passed else 'FAILED'} · accuracy {s.accuracy:.2f} · completion {s.completion}"
        f" · safety gate {s.safety_gate}",
        err=err,
    )
    for v in record.grading.verdicts:
        echo(f"  {'PASS' if v.passed else 'FAIL'} {v.severity:<4} {v.category:<7} {v.verifier_id}: {v.reason}", err=err)


@click.command()
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
def regrade(run_dir) -> None:
    """Re-run the current hidden halves' verifiers on a run's stored trajectories (a new grading)."""
    from ..engine import regrade as do_regrade

    outcome = do_regrade(run_dir)
    versions = ", ".join(f"{k} {v}" for k, v in sorted(outcome.hidden_versions.items()))
    echo(f"grading {outcome.grading_id}: {outcome.trials} trial(s) regraded, {outcome.changed} changed pass/fail")
    echo(f"hidden halves: {versions}")
