"""``forge validate``: a package is well formed, its halves agree with each other and its fixtures are FHIR R4."""

from __future__ import annotations

from ..spec import RUBRIC, Package, SpecError, load_package, validate_fixture
from ..tools import TOOLS
from ..verify import bind


def check_package(path) -> Package:
    """Load and cross-check one package, FHIR R4 fixtures included; the first problem is raised as a SpecError."""
    package = check_halves(load_package(path))
    for name in package.public.environment.fixtures:
        validate_fixture(package.path / name)
    return package


def check_halves(package: Package) -> Package:
    """Cross-check a loaded package's two halves (tools, faults, patient, verifiers, trajectories)."""
    public, manifest = package.public, package.path / "package.yaml"
    for i, name in enumerate(public.tools):
        if name not in TOOLS:
            raise SpecError(manifest, f"tools.{i}", f"unknown tool {name!r}")
    for i, fault in enumerate(public.faults):
        if fault.tool not in public.tools:
            raise SpecError(manifest, f"faults.{i}.tool", f"{fault.tool!r} is not in the tool manifest")
    hidden, hidden_file = package.read_hidden(), package.hidden_path
    if not any(r["resourceType"] == "Patient" and r["id"] == public.environment.patient_id for r in package.resources):
        raise SpecError(manifest, "environment.patient_id", "no such Patient in the fixtures")
    for i, name in enumerate(hidden.expected_tools):
        if name not in public.tools:
            raise SpecError(hidden_file, f"expected_tools.{i}", f"{name!r} is not in the tool manifest")
    ids = [use.id for use in hidden.verifiers]
    if len(set(ids)) != len(ids):
        raise SpecError(hidden_file, "verifiers", "verifier ids must be unique")
    for use in hidden.verifiers:
        bind(use, hidden_file, public.task.answer)
    trajectories = [("gold", hidden.gold)] + [
        (f"counterexamples.{c.name}", c.trajectory) for c in hidden.counterexamples
    ]
    trajectories += [(f"valid_variants.{v.name}", v.trajectory) for v in hidden.valid_variants]
    for where, trajectory in trajectories:
        assert trajectory is not None  # the loader makes a case given as edits into its trajectory
        for i, call in enumerate(trajectory.calls):
            if call.tool not in public.tools:
                raise SpecError(hidden_file, f"{where}.calls.{i}.tool", f"{call.tool!r} is not in the tool manifest")
    judged = {use.id for use in hidden.verifiers if use.category == RUBRIC}
    for c in hidden.counterexamples:
        unknown = [v for v in c.must_fail if v not in ids]
        if unknown:
            raise SpecError(hidden_file, f"counterexamples.{c.name}.must_fail", f"unknown verifier {unknown[0]!r}")
        opinions = [v for v in c.must_fail if v in judged]
        if opinions:
            raise SpecError(
                hidden_file,
                f"counterexamples.{c.name}.must_fail",
                f"{opinions[0]!r} is a rubric verdict "
                "(a model's judgement), which selftest does not ask for: no counterexample can rest on it",
            )
    return package
