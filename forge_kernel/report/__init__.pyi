# The face's names for editors and type checkers, written from _HOMES by scripts/face_stubs.py: do not edit.
from .build import build_release as build_release
from .compare_markdown import render_ablations as render_ablations, render_comparison as render_comparison
from .release import ReleaseReport as ReleaseReport, recorded as recorded
from .signoff import (
    SIGNOFF as SIGNOFF,
    chain_head as chain_head,
    decision_text as decision_text,
    keygen as keygen,
    sign as sign,
    trusted_keys as trusted_keys,
    verify as verify,
)
from .signoff_section import placeholder as placeholder
from .trajectory_text import render_trial as render_trial
