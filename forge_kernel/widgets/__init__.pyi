# The face's names for editors and type checkers, written from _HOMES by scripts/face_stubs.py: do not edit.
from ._fonts import (
    CHART_FONTS as CHART_FONTS,
    page_font_face as page_font_face,
    part_font_style as part_font_style,
    svg_with_font as svg_with_font,
    theme_fonts as theme_fonts,
)
from .dashboard import RunDashboard as RunDashboard
from .designer import Designer as Designer
from .failures import FailureBrowser as FailureBrowser
from .page import player_html as player_html, player_module as player_module, write_player_page as write_player_page
from .player import ReplayPlayer as ReplayPlayer, play as play
from .sample import sample_run as sample_run
