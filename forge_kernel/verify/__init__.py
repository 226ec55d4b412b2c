"""Verifiers (a registry of kinds) and scoring: tool-call accuracy, task completion, the safety gate."""
from ..spec.grading import Grading, Scores, Verdict
from . import kinds  # noqa: F401  (registers the built-in kinds)
from .grade import grade
from .registry import VERIFIERS, Outcome, bind, plugin_path, register_plugin, verifier
from .scoring import score
from .verdict import GradeContext

__all__ = ["GradeContext", "Grading", "Outcome", "Scores", "VERIFIERS", "Verdict", "bind", "grade", "plugin_path",
           "register_plugin", "score", "verifier"]
