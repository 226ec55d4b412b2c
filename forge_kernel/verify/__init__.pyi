# The face's names for editors and type checkers, written from _HOMES by scripts/face_stubs.py: do not edit.
from ._shown import returned_in_order as returned_in_order
from .expressions import Expression as Expression
from .grade import grade as grade
from .kinds._extraction import measures_in as measures_in
from .matchers import values_at as values_at
from .mutants import MUST_PASS as MUST_PASS, OPERATORS as OPERATORS, Mutant as Mutant, build_mutants as build_mutants
from .quantities import unit_registry as unit_registry
from .registry import (
    VERIFIERS as VERIFIERS,
    Outcome as Outcome,
    bind as bind,
    plugin_path as plugin_path,
    register_plugin as register_plugin,
    verifier as verifier,
)
from .scoring import score as score
from .verdict import GradeContext as GradeContext, Verdict as Verdict
