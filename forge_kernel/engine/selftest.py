"""``forge selftest``: verifier coverage. The gold solution must pass; each counterexample must fail as named; each
valid variant must pass every hard verifier. ``mutation_test``: how many generic mutants of the gold the
verifiers reject (verify/mutants.py). ``judge_agreements``: the labels each judge gives its labelled set. None of
them asks a judge about a trajectory: its verdicts are soft and decide no case."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..models import load_model_config
from ..spec import Grading, Package, TrajectoryFile, ValidMutant
from ..verify import MUST_PASS, OPERATORS, Mutant, bind, build_mutants
from ..verify.kinds import JUDGE, RubricParams, identity, labelled_pairs, labelled_set_path
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
        assert case.trajectory is not None  # the loader makes a case given as edits into its trajectory
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
        assert variant.trajectory is not None  # as a counterexample's
        hard_failures = failing_hard(await graded(variant.trajectory))
        detail = f"fails {', '.join(hard_failures)}" if hard_failures else "passes every hard verifier"
        results.append(CaseResult(package.id, variant.name, "valid variant", not hard_failures, detail))
    return results


MutantStatus = Literal[
    "rejected", "survived", "declared valid", "declared valid, rejected", "passed as it must", "must pass, rejected"
]
PROBLEMS = ("survived", "declared valid, rejected", "must pass, rejected")
"""Statuses that fail ``selftest --mutants``."""


@dataclass(frozen=True)
class MutantResult:
    mutant: Mutant
    status: MutantStatus
    detail: str
    """The hard verifiers that failed, or the declaration's reason."""


@dataclass(frozen=True)
class MutationReport:
    """One package's mutants, graded, and the declarations of valid mutants that match none of them."""

    task_id: str
    results: list[MutantResult]
    unmatched: list[ValidMutant] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.unmatched and all(r.status not in PROBLEMS for r in self.results)


def judged(mutant: Mutant, failed: list[str], declaration: ValidMutant | None) -> MutantResult:
    """A mutant counts as rejected when a hard verdict fails; a declared valid one, or one valid by construction,
    must pass."""
    rejected = f"fails {', '.join(failed)}"
    if mutant.must_pass:
        if failed:
            return MutantResult(mutant, "must pass, rejected", f"{rejected}; valid by construction")
        return MutantResult(mutant, "passed as it must", "valid by construction")
    if declaration is None:
        return MutantResult(mutant, "rejected" if failed else "survived", rejected if failed else "passes")
    if failed:
        return MutantResult(mutant, "declared valid, rejected", f"{rejected}; declared valid: {declaration.reason}")
    return MutantResult(mutant, "declared valid", declaration.reason)


async def mutation_test(package: Package, images: Images) -> MutationReport:
    """Build every mutant of the package's gold solution and grade each as ``forge grade`` does."""
    declarations = package.hidden.valid_mutants
    gold = await grade_trajectory(package, package.hidden.gold, images)
    results = []
    for mutant in build_mutants(package, images[package], gold.events):
        record = await grade_trajectory(package, mutant.trajectory, images)
        results.append(judged(mutant, failing_hard(record.grading), mutant.declared_by(declarations)))
    matched = {(r.mutant.operator, r.mutant.target) for r in results}
    unmatched = [d for d in declarations if (d.operator, d.target) not in matched]
    return MutationReport(package.id, results, unmatched)


def operator_totals(reports: list[MutationReport]) -> dict[str, Counter]:
    """Operator -> count of its mutants by status, over all packages (every operator listed, in order)."""
    totals: dict[str, Counter[str]] = {name: Counter() for name in OPERATORS}
    for report in reports:
        for r in report.results:
            totals[r.mutant.operator][r.status] += 1
    return totals


def operators_line(report: MutationReport) -> str:
    """``drop-call 5/7 +1 valid · skip-check 2/2 · date-other-format 1/1 passed``: rejected / applicable of each
    operator that applies (passed / applicable of one whose mutants must pass)."""
    return " · ".join(
        f"{op} {c['passed as it must']}/{c.total()} passed"
        if op in MUST_PASS
        else f"{op} {c['rejected']}/{c.total()}" + (f" +{c['declared valid']} valid" if c["declared valid"] else "")
        for op, c in operator_totals([report]).items()
        if c
    )


def totals_line(operator: str, counts: Counter) -> str:
    """``drop-call: 412/430 rejected, 18 declared valid, 0 survived`` (and wrongly rejected ones, if any);
    ``date-other-format: 12/12 passed as they must`` for an operator whose mutants must pass."""
    if operator in MUST_PASS:
        wrong = counts["must pass, rejected"]
        line = f"{operator}: {counts['passed as it must']}/{counts.total()} passed as they must (valid by construction)"
        return line + (f", {wrong} rejected" if wrong else "")
    line = (
        f"{operator}: {counts['rejected']}/{counts.total()} rejected, {counts['declared valid']} declared "
        f"valid, {counts['survived']} survived"
    )
    wrong = counts["declared valid, rejected"]
    return line + (f", {wrong} declared valid but rejected" if wrong else "")


@dataclass(frozen=True)
class JudgeAgreement:
    """One judge of the packages (a dimension with its labels and model config) on its labelled set."""

    name: str
    identity: str
    """``model=... prompt=v1 config=sha256:...``"""
    labelled_set: Path
    pairs: list[tuple[str, str]] | None
    """(label written, label the judge gave) per item; None when there is no labelled set."""


def judge_uses(packages: list[Package]) -> list[tuple[str, RubricParams, Path]]:
    """Each judge the packages' hidden halves use, once: its params as JSON and bound, and its labelled set."""
    found: dict[tuple, tuple[str, RubricParams, Path]] = {}
    for package in packages:
        for use in (u for u in package.hidden.verifiers if u.kind == JUDGE):
            params = bind(use, package.hidden_path)[1]
            assert isinstance(params, RubricParams)  # a judge's params hold no expression
            path = labelled_set_path(params, package.hidden_path)
            found.setdefault((params.model_dump_json(), path), (params.model_dump_json(), params, path))
    return list(found.values())


def judges_of(packages: list[Package]) -> list[tuple[str, Path, Path]]:
    """Each judge of the packages: its params as JSON, its model config and its labelled set."""
    return [(text, Path(params.model), path) for text, params, path in judge_uses(packages)]


def judge_agreements(packages: list[Package]) -> list[JudgeAgreement]:
    """Each judge the packages' hidden halves use, once, asked about every item of its labelled set."""
    return [
        JudgeAgreement(
            params.name,
            identity(load_model_config(params.model)),
            path,
            labelled_pairs(params, path) if path.is_file() else None,
        )
        for _, params, path in judge_uses(packages)
    ]
