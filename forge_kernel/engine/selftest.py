"""``forge selftest``: verifier coverage. The gold solution must pass; each counterexample must fail as named; each
valid variant must pass every hard verifier."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..spec import Package, TrajectoryFile
from ..verify.grade import Grading
from .grading import grade_trajectory
from .trial import Images


@dataclass(frozen=True)
class CaseResult:
    task_id: str
    case: str
    """``gold``, or the counterexample's or valid variant's name."""
    kind: Literal["gold", "counterexample", "valid variant"]
    ok: bool
    detail: str


def failing_hard(grading: Grading) -> list[str]:
    """Ids of the hard verdicts that failed."""
    return [v.verifier_id for v in grading.verdicts if v.severity == "hard" and not v.passed]


async def selftest_package(package: Package, images: Images) -> list[CaseResult]:
    """Grade the gold solution, every counterexample and every valid variant of one package."""
    hidden = package.hidden

    async def graded(trajectory: TrajectoryFile) -> Grading:
        return (await grade_trajectory(package, trajectory, images)).grading

    gold = await graded(hidden.gold)
    failing = [v.verifier_id for v in gold.verdicts if not v.passed]
    ok = not failing and gold.scores.completion == 1
    detail = f"fails {', '.join(failing)}" if failing else f"completion {gold.scores.completion}"
    results = [CaseResult(package.id, "gold", "gold", ok, detail if not ok else "passes every verifier")]
    for case in hidden.counterexamples:
        g = await graded(case.trajectory)
        failed = {v.verifier_id for v in g.verdicts if not v.passed}
        problems = [f"{v} passed" for v in case.must_fail if v not in failed]
        if case.expect_accuracy is not None and abs(g.scores.accuracy - case.expect_accuracy) > 1e-9:
            problems.append(f"accuracy {g.scores.accuracy:.2f} != {case.expect_accuracy:.2f}")
        if case.expect_completion is not None and g.scores.completion != case.expect_completion:
            problems.append(f"completion {g.scores.completion} != {case.expect_completion}")
        detail = "; ".join(problems) if problems else f"fails {', '.join(case.must_fail)} as it must"
        results.append(CaseResult(package.id, case.name, "counterexample", not problems, detail))
    for variant in hidden.valid_variants:
        failed = failing_hard(await graded(variant.trajectory))
        detail = f"fails {', '.join(failed)}" if failed else "passes every hard verifier"
        results.append(CaseResult(package.id, variant.name, "valid variant", not failed, detail))
    return results
