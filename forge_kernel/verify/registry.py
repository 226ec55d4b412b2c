"""Verifier kinds, registered in the catalog: each is a function of (context, validated params)."""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, get_type_hints

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from ..catalog import CATALOG
from ..ehr import EHRImage
from ..spec import ERROR_PREFIX, RUBRIC, AnswerField, Package, SpecError, Strict, Verdict, VerifierUse
from .expressions import Chart, find_expressions, none_read_as_unset, under_expression
from .verdict import GradeContext


@dataclass(frozen=True)
class Outcome:
    """What a verifier kind decides: passed or not, why, and the steps it points at."""

    passed: bool
    reason: str
    steps: tuple[int, ...] = ()
    measures: tuple[tuple[str, float], ...] = ()
    """Numbers the verdict scores (name, value), for an analysis to aggregate (e.g. an extraction's node F1)."""


@dataclass(frozen=True)
class VerifierKind:
    name: str
    params_model: type[Strict]
    check: Callable[[GradeContext, Strict], Outcome]
    description: str
    category: str | None = None
    """The one category its uses may take (None: any)."""


F = TypeVar("F", bound=Callable[..., Any])

VERIFIERS = CATALOG.section("verifier kind")
"""Every registered verifier kind, by name."""


def verifier(name: str, category: str | None = None) -> Callable[[F], F]:
    """Register ``fn(ctx, params) -> Outcome``; the params model comes from the annotation. A name is taken once;
    ``category``, when given, is the only one its uses may take."""

    def register(fn: F) -> F:
        params = list(inspect.signature(fn).parameters)
        model = get_type_hints(fn)[params[1]]
        CATALOG.add(
            "verifier kind",
            name,
            VerifierKind(name, model, fn, inspect.cleandoc(fn.__doc__ or ""), category),
            args={"params": model.__name__},
            where=fn.__module__,
        )
        return fn

    return register


def bind(
    use: VerifierUse, file: object = "hidden half", answer: dict[str, AnswerField] | None = None
) -> tuple[VerifierKind, Strict | None]:
    """The kind and validated params of one verifier use; bad ones are SpecErrors (so is a category its kind does
    not take, and a rubric verdict that is not soft). ``answer``, the task's typed answer, lets params be checked
    against the fields it declares. Params that hold expressions (``expressions.py``) are checked
    for shape and otherwise validated, and come back as None: only a trial's initial EHR gives them their values
    (``graded_params``)."""
    kind = VERIFIERS.get(use.kind) or load_plugin(use.kind, plugin_path(use.kind, Path(str(file))).parent)
    if kind is None:
        raise SpecError(file, f"verifiers.{use.id}.kind", f"unknown verifier kind {use.kind!r}")
    if kind.category not in (None, use.category):
        raise SpecError(file, f"verifiers.{use.id}.category", f"{use.kind} verdicts are of category {kind.category}")
    if use.category == RUBRIC and use.severity != "soft":
        raise SpecError(
            file,
            f"verifiers.{use.id}.severity",
            "a rubric verdict is a model's judgement: it is soft "
            "only (severity: soft) and never decides a trial's pass",
        )
    expressions = find_expressions(use.params, file, f"verifiers.{use.id}.params")
    try:
        params = validated(kind, use, use.params, file, answer)
    except ValidationError as exc:
        errors = [e for e in exc.errors() if not under_expression(use.params, e["loc"])]
        if errors:
            raise params_error(use, file, errors[0]) from None
        params = None  # every error is where an expression stands: valued when graded
    return kind, None if expressions else params


def validated(
    kind: VerifierKind, use: VerifierUse, params: Any, file: object, answer: dict[str, AnswerField] | None = None
) -> Strict:
    """The params model of ``params``; a params model may read the use's severity, the hidden half's file (to find
    a file it names) and the task's typed answer (where given) from the validation context."""
    context = {"severity": use.severity, "file": file} | ({} if answer is None else {"answer": answer})
    return kind.params_model.model_validate(params, context=context)


def params_error(use: VerifierUse, file: object, err: ErrorDetails) -> SpecError:
    """One validation error of a use's params as a SpecError naming the params field."""
    inner = SpecError.from_error(file, err)
    where = f"verifiers.{use.id}.params" + ("" if inner.field == "(root)" else f".{inner.field}")
    return SpecError(file, where, inner.message)


def graded_params(
    kind: VerifierKind, use: VerifierUse, file: object, chart: Chart, answer: dict[str, AnswerField] | None = None
) -> Strict:
    """The params of a use with every expression valued in the chart; a value that does not fit (the task's typed
    ``answer`` where given) is a SpecError."""
    expressions = find_expressions(use.params, file, f"verifiers.{use.id}.params")
    params = chart.substitute(use.params, expressions)
    try:
        model = validated(kind, use, params, file, answer)
    except ValidationError as exc:
        raise params_error(use, file, exc.errors()[0]) from None
    unset = none_read_as_unset(model, params, list(expressions))
    if unset is not None:
        where = ".".join(map(str, unset))
        raise SpecError(
            file,
            f"verifiers.{use.id}.params.{where}",
            "the expression is none (no such record), and none here would mean 'not given'",
        )
    return model


def plugin_path(kind: str, hidden_path: Path) -> Path:
    """Where a custom verifier kind lives for a hidden half: ``verifiers/plugins/<kind>.py`` beside its suite."""
    return Path(hidden_path).parent.parent / "plugins" / f"{kind}.py"


def load_plugin(name: str, folder: Path) -> VerifierKind | None:
    """Import ``verifiers/plugins/<name>.py`` (which registers kind ``name`` with @verifier), if it exists."""
    path = folder / f"{name}.py"
    if not path.is_file():
        return None
    return register_plugin(name, path.read_text(encoding="utf-8"), path)


def register_plugin(name: str, source: str, path: Path) -> VerifierKind | None:
    """Run a custom verifier kind's source (as kept in a run store, or read from ``path``) unless it is known."""
    if name not in VERIFIERS:
        code = compile(source, str(path), "exec")
        exec(code, {"__name__": f"forge_verifier_plugin_{name.replace('.', '_')}", "__file__": str(path)})
    return VERIFIERS.get(name)


@dataclass(frozen=True)
class BoundUse:
    """A verifier use with its kind and validated params (None where expressions give them their values)."""

    use: VerifierUse
    kind: VerifierKind
    params: Strict | None
    valued: weakref.WeakKeyDictionary[EHRImage, dict[str, Strict]] = field(
        default_factory=weakref.WeakKeyDictionary, compare=False, repr=False
    )
    """Where expressions give the params their values: the params valued in each initial EHR, by patient (the
    image is never changed, so neither are they)."""

    def params_in(self, ctx: GradeContext) -> Strict:
        """The params for a trial: as bound, or valued in the trial's initial EHR for its patient (once per image
        and patient; a use whose values do not fit raises every time)."""
        if self.params is not None:
            return self.params
        image, patient = ctx.view.image, ctx.package.public.environment.patient_id
        by_patient = self.valued.setdefault(image, {})
        if patient not in by_patient:
            chart = Chart(image, patient)
            by_patient[patient] = graded_params(
                self.kind, self.use, ctx.package.hidden_path, chart, ctx.package.public.task.answer
            )
        return by_patient[patient]


BOUND: dict[int, tuple[BoundUse, ...]] = {}
"""The bound uses of each hidden half in memory, by the id of that object (dropped when it is collected)."""


def bound_uses(package: Package) -> tuple[BoundUse, ...]:
    """Every verifier use of the package's hidden half, bound once per hidden half object: another package, or the
    same one loaded again, binds its own. Only grading calls it, so the hidden half is still first read after an
    agent has returned."""
    hidden = package.hidden
    found = BOUND.get(id(hidden))
    if found is None:
        found = BOUND[id(hidden)] = tuple(
            BoundUse(use, *bind(use, package.hidden_path, package.public.task.answer)) for use in hidden.verifiers
        )
        weakref.finalize(hidden, BOUND.pop, id(hidden), None)
    return found


def run_verifier(bound: BoundUse, ctx: GradeContext) -> Verdict:
    """One verifier's verdict on a trial. A verifier that raises (or whose expressions give values that do not
    fit its params) gives a verdict that fails as an error, the exception in its reason; grading goes on."""
    use = bound.use
    try:
        outcome = bound.kind.check(ctx, bound.params_in(ctx))
    except Exception as exc:  # any failure of a verifier is the grading's, never the trial's
        reason = f"{ERROR_PREFIX}{type(exc).__name__}: {exc}"
        return Verdict(use.id, use.kind, use.category, use.severity, False, reason, error=True)
    return Verdict(
        use.id,
        use.kind,
        use.category,
        use.severity,
        outcome.passed,
        outcome.reason,
        outcome.steps,
        measures=outcome.measures,
    )
