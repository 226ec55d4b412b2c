"""``forge validate``: a package is well formed, its halves agree with each other, its fixtures and shared image are
FHIR R4 and its current patient has records."""

from __future__ import annotations

from collections.abc import Iterator

from ..spec import RUBRIC, HiddenHalf, Package, SpecError, load_package, validate_fixture, validate_image
from ..tools import TOOLS
from ..verify import bind
from .trial import initial_image


def check_package(path) -> Package:
    """Load and cross-check one package, FHIR R4 fixtures included; the first problem is raised as a SpecError."""
    package, problems = package_problems(path)
    if problems:
        raise problems[0]
    return package


def package_problems(path) -> tuple[Package, list[SpecError]]:
    """Load one package (a package that does not load is raised as a SpecError) and every problem of it."""
    package = load_package(path)
    fhir = fhir_problems(package)
    return package, [*fhir, *halves_problems(package, charted=not fhir)]


def fhir_problems(package: Package) -> list[SpecError]:
    """The fixtures and shared image that are not valid FHIR R4 (an image is checked once for all its packages)."""
    checks = [lambda name=name: validate_fixture(package.path / name) for name in package.public.environment.fixtures]
    if package.image is not None:
        checks.append(lambda image=package.image: validate_image(image))
    problems = []
    for check in checks:
        try:
            check()
        except SpecError as exc:
            problems.append(exc)
    return problems


def check_halves(package: Package) -> Package:
    """Cross-check a loaded package's two halves (tools, faults, patient, verifiers, trajectories); the first problem
    is raised as a SpecError."""
    for problem in halves_problems(package):
        raise problem
    return package


def halves_problems(package: Package, charted: bool = True) -> Iterator[SpecError]:
    """Every problem of a loaded package's two halves (``check_halves``); a hidden half that does not load ends them.
    With ``charted``, also the current patient's (``patient_problems``): only over an EHR that is valid FHIR."""
    public, manifest = package.public, package.path / "package.yaml"
    for i, name in enumerate(public.tools):
        if name not in TOOLS:
            yield SpecError(manifest, f"tools.{i}", f"unknown tool {name!r}")
    for i, fault in enumerate(public.faults):
        if fault.tool not in public.tools:
            yield SpecError(manifest, f"faults.{i}.tool", f"{fault.tool!r} is not in the tool manifest")
    if charted:
        yield from patient_problems(package)
    try:
        hidden, hidden_file = package.read_hidden(), package.hidden_path
    except SpecError as exc:
        yield exc
        return
    for i, name in enumerate(hidden.expected_tools):
        if name not in public.tools:
            yield SpecError(hidden_file, f"expected_tools.{i}", f"{name!r} is not in the tool manifest")
    ids = [use.id for use in hidden.verifiers]
    if len(set(ids)) != len(ids):
        yield SpecError(hidden_file, "verifiers", "verifier ids must be unique")
    for use in hidden.verifiers:
        try:
            bind(use, hidden_file, public.task.answer)
        except SpecError as exc:
            yield exc
    yield from trajectory_problems(package, hidden)


def patient_problems(package: Package) -> Iterator[SpecError]:
    """The current patient is missing from the EHR (fixtures and shared image), or has no records of their own."""
    manifest, patient = package.path / "package.yaml", package.public.environment.patient_id
    where = "the fixtures" if package.image is None else f"the fixtures or the EHR image {package.image.folder}"
    image = initial_image(package)
    if ("Patient", patient) not in image.resources:
        yield SpecError(manifest, "environment.patient_id", f"no such Patient in {where}")
    elif not image.charted(patient):
        yield SpecError(manifest, "environment.patient_id", f"the patient has no clinical records in {where}")


def trajectory_problems(package: Package, hidden: HiddenHalf) -> Iterator[SpecError]:
    """Trajectories that call tools outside the manifest, counterexamples that name unknown or judged verifiers."""
    public, hidden_file = package.public, package.hidden_path
    ids = [use.id for use in hidden.verifiers]
    trajectories = [("gold", hidden.gold)] + [
        (f"counterexamples.{c.name}", c.trajectory) for c in hidden.counterexamples
    ]
    trajectories += [(f"valid_variants.{v.name}", v.trajectory) for v in hidden.valid_variants]
    for where, trajectory in trajectories:
        assert trajectory is not None  # the loader makes a case given as edits into its trajectory
        for i, call in enumerate(trajectory.calls):
            if call.tool not in public.tools:
                yield SpecError(hidden_file, f"{where}.calls.{i}.tool", f"{call.tool!r} is not in the tool manifest")
    judged = {use.id for use in hidden.verifiers if use.category == RUBRIC}
    for c in hidden.counterexamples:
        unknown = [v for v in c.must_fail if v not in ids]
        if unknown:
            yield SpecError(hidden_file, f"counterexamples.{c.name}.must_fail", f"unknown verifier {unknown[0]!r}")
        opinions = [v for v in c.must_fail if v in judged]
        if opinions:
            yield SpecError(
                hidden_file,
                f"counterexamples.{c.name}.must_fail",
                f"{opinions[0]!r} is a rubric verdict "
                "(a model's judgement), which selftest does not ask for: no counterexample can rest on it",
            )
