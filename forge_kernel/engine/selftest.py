"""``forge selftest``: verifier coverage. The gold solution must pass; each counterexample must fail as named."""
from __future__ import annotations

from dataclasses import dataclass

from ..spec import Package, TrajectoryFile
from .grading import grade_trajectory
from .trial import Images


@dataclass(frozen=True)
class CaseResult:
    task_id: str
    case: str
    """``gold`` or the counterexample's name."""
    ok: bool
    detail: str


async def selftest_package(package: Package, images: Images) -> list[CaseResult]:
    """Grade the gold solution and every counterexample of one package."""
    hidden = package.hidden

    async def graded(trajectory: TrajectoryFile):
        return (await grade_trajectory(package, trajectory, images)).grading

    gold = await graded(hidden.gold)
    failing = [v.verifier_id for v in gold.verdicts if not v.passed]
    ok = not failing and gold.scores.completion == 1
    detail = f"fails {', '.join(failing)}" if failing else f"completion {gold.scores.completion}"
    results = [CaseResult(package.id, "gold", ok, detail if not ok else "passes every verifier")]
    for case in hidden.counterexamples:
        g = await graded(case.trajectory)
        failed = {v.verifier_id for v in g.verdicts if not v.passed}
        problems = [f"{v} passed" for v in case.must_fail if v not in failed]
        if case.expect_accuracy is not None and abs(g.scores.accuracy - case.expect_accuracy) > 1e-9:
            problems.append(f"accuracy {g.scores.accuracy:.2f} != {case.expect_accuracy:.2f}")
        if case.expect_completion is not None and g.scores.completion != case.expect_completion:
            problems.append(f"completion {g.scores.completion} != {case.expect_completion}")
        detail = "; ".join(problems) if problems else f"fails {', '.join(case.must_fail)} as it must"
        results.append(CaseResult(package.id, case.name, not problems, detail))
    return results
