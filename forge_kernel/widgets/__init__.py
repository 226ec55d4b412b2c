"""Widgets for JupyterLab and their static pages: the replay player, the failure browser, the run dashboard, and the
small sample run the notebooks use. The dashboard (which needs Altair) and the others are imported when first named."""
from importlib import import_module

from .page import player_html, write_player_page
from .player import ReplayPlayer

__all__ = ["FailureBrowser", "ReplayPlayer", "RunDashboard", "player_html", "sample_run", "write_player_page"]
LAZY = {"FailureBrowser": ".failures", "RunDashboard": ".dashboard", "sample_run": ".sample"}


def __getattr__(name: str):
    if name not in LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(LAZY[name], __name__), name)
