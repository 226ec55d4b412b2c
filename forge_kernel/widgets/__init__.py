"""Widgets for JupyterLab and their static pages: the replay player."""
from .page import player_html, write_player_page
from .player import ReplayPlayer

__all__ = ["ReplayPlayer", "player_html", "write_player_page"]
