"""Verifiers (a registry of kinds) and scoring: tool-call accuracy, task completion, the safety gate.

Importing it registers the built-in kinds; the names below are imported on first use."""

from .. import _lazy
from . import kinds  # noqa: F401  (registers the built-in kinds)
from .grade import grade  # imported now: the module and its function share the name

_HOMES = {
    "_shown": ("returned_in_order",),
    "expressions": ("Expression",),
    "grade": ("grade",),
    "kinds._extraction": ("measures_in",),
    "matchers": ("values_at",),
    "mutants": ("MUST_PASS", "Mutant", "OPERATORS", "build_mutants"),
    "quantities": ("unit_registry",),
    "registry": ("Outcome", "VERIFIERS", "bind", "plugin_path", "register_plugin", "verifier"),
    "scoring": ("score",),
    "verdict": ("GradeContext", "Verdict"),
}

__all__ = [
    "Expression",
    "GradeContext",
    "MUST_PASS",
    "Mutant",
    "OPERATORS",
    "Outcome",
    "VERIFIERS",
    "Verdict",
    "bind",
    "build_mutants",
    "grade",
    "measures_in",
    "plugin_path",
    "register_plugin",
    "returned_in_order",
    "score",
    "unit_registry",
    "values_at",
    "verifier",
]
__getattr__, __dir__ = _lazy(__name__, _HOMES, __all__)
