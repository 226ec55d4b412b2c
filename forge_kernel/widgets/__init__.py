"""Widgets for JupyterLab and their static pages: the replay player, the failure browser, the run dashboard, the
task package designer, and the small sample run the notebooks use. The names below are imported on first use (the
dashboard needs Altair)."""

from .. import _lazy

_HOMES = {
    "_fonts": ("CHART_FONTS", "page_font_face", "part_font_style", "svg_with_font", "theme_fonts"),
    "dashboard": ("RunDashboard",),
    "designer": ("Designer",),
    "failures": ("FailureBrowser",),
    "page": ("player_html", "player_module", "write_player_page"),
    "player": ("ReplayPlayer", "play"),
    "sample": ("sample_run",),
}

__all__ = [
    "CHART_FONTS",
    "Designer",
    "FailureBrowser",
    "ReplayPlayer",
    "RunDashboard",
    "page_font_face",
    "part_font_style",
    "play",
    "player_html",
    "player_module",
    "sample_run",
    "svg_with_font",
    "theme_fonts",
    "write_player_page",
]
__getattr__, __dir__ = _lazy(__name__, _HOMES, __all__)
