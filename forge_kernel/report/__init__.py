"""Reports: the release (parameters, missing trials, the papermill report, its offline HTML, sign-off and
verification), comparisons as Markdown and trajectories as text. The names below are imported on first use."""

from .. import _lazy

_HOMES = {
    "build": ("build_release",),
    "compare_markdown": ("render_ablations", "render_comparison"),
    "release": ("ReleaseReport", "recorded"),
    "signoff": ("SIGNOFF", "chain_head", "decision_text", "keygen", "sign", "trusted_keys", "verify"),
    "signoff_section": ("placeholder",),
    "trajectory_text": ("render_trial",),
}

__all__ = [
    "ReleaseReport",
    "SIGNOFF",
    "build_release",
    "chain_head",
    "decision_text",
    "keygen",
    "placeholder",
    "recorded",
    "render_ablations",
    "render_comparison",
    "render_trial",
    "sign",
    "trusted_keys",
    "verify",
]
__getattr__, __dir__ = _lazy(__name__, _HOMES, __all__)
