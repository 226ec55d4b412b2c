"""The registry of verifier kinds: each is a function of (context, validated params)."""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, get_type_hints

from pydantic import ValidationError

from ..spec import SpecError, VerifierUse
from ..spec.package import Strict
from .verdict import GradeContext, Verdict


@dataclass(frozen=True)
class Outcome:
    """What a verifier kind decides: passed or not, why, and the steps it points at."""

    passed: bool
    reason: str
    steps: tuple[int, ...] = ()


@dataclass(frozen=True)
class VerifierKind:
    name: str
    params_model: type[Strict]
    check: Callable[[GradeContext, Strict], Outcome]
    description: str


VERIFIERS: dict[str, VerifierKind] = {}
"""Every registered verifier kind, by name."""


def verifier(name: str):
    """Register ``fn(ctx, params) -> Outcome``; the params model comes from the annotation."""

    def register(fn):
        params = list(inspect.signature(fn).parameters)
        model = get_type_hints(fn)[params[1]]
        VERIFIERS[name] = VerifierKind(name, model, fn, inspect.cleandoc(fn.__doc__ or ""))
        return fn

    return register


def bind(use: VerifierUse, file: object = "hidden half") -> tuple[VerifierKind, Strict]:
    """The kind and validated params of one verifier use; bad ones are SpecErrors."""
    kind = VERIFIERS.get(use.kind) or load_plugin(use.kind, plugin_path(use.kind, Path(str(file))).parent)
    if kind is None:
        raise SpecError(file, f"verifiers.{use.id}.kind", f"unknown verifier kind {use.kind!r}")
    try:
        return kind, kind.params_model.model_validate(use.params)
    except ValidationError as exc:
        inner = SpecError.from_validation(file, exc)
        raise SpecError(file, f"verifiers.{use.id}.params.{inner.field}", inner.message) from None


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


def run_verifier(use: VerifierUse, ctx: GradeContext) -> Verdict:
    kind, params = bind(use, ctx.package.hidden_path)
    outcome = kind.check(ctx, params)
    return Verdict(use.id, use.kind, use.category, use.severity, outcome.passed, outcome.reason, outcome.steps)
