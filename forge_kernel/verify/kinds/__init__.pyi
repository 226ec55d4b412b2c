# The face's names for editors and type checkers, written from _HOMES by scripts/face_stubs.py: do not edit.
from ._checks import ChecksBeforeParams as ChecksBeforeParams, as_checks as as_checks, retargeted as retargeted
from .answer import NumberParams as NumberParams, read_date as read_date, stated as stated
from .evidence import CLINICAL_TYPES as CLINICAL_TYPES, outside_window as outside_window, resolve as resolve
from .grounding import is_grounded as is_grounded
from .judge import (
    JUDGE as JUDGE,
    RubricParams as RubricParams,
    identity as identity,
    labelled_pairs as labelled_pairs,
    labelled_set_path as labelled_set_path,
)
from .trace import called_tools as called_tools
