"""Reports: trajectories as text (release notebooks and HTML export follow)."""
from .trajectory_text import render_trial

__all__ = ["render_trial"]
