"""The built-in verifier kinds; importing this package registers them. The names below are imported on first use."""

# The kinds register in the order they are imported, the catalog's: not sorted.
# isort: off
from . import (  # noqa: F401  (registers the kinds, in the catalog's order)
    answer,
    _typed,
    _state,
    _audit,
    _budget,
    _checks,
    evidence,
    _criteria,
    _extraction,
    grounding,
    judge,
    _safety,
    trace,
)

# isort: on
from ... import _lazy

_HOMES = {
    "_checks": ("ChecksBeforeParams", "as_checks", "retargeted"),
    "answer": ("NumberParams", "read_date", "stated"),
    "evidence": ("CLINICAL_TYPES", "outside_window", "resolve"),
    "grounding": ("is_grounded",),
    "judge": ("JUDGE", "RubricParams", "identity", "labelled_pairs", "labelled_set_path"),
    "trace": ("called_tools",),
}

__all__ = [
    "CLINICAL_TYPES",
    "ChecksBeforeParams",
    "JUDGE",
    "NumberParams",
    "RubricParams",
    "as_checks",
    "called_tools",
    "identity",
    "is_grounded",
    "labelled_pairs",
    "labelled_set_path",
    "outside_window",
    "read_date",
    "resolve",
    "retargeted",
    "stated",
]
__getattr__, __dir__ = _lazy(__name__, _HOMES, __all__)
