"""Run store (SQLite, WAL), run manifest, and loaders that return pandas DataFrames."""
from .loaders import (
    iter_trials,
    load_events,
    load_trials,
    load_verdicts,
    read_trial,
)
from .packages import run_packages
from .records import TrialRecord
from .run import Run, Trial, open_run
from .run_store import DB_NAME, SCHEMA_VERSION, RunLock, RunStore
from .snapshots import stored_files

__all__ = [
    "DB_NAME", "Run", "RunLock", "RunStore", "SCHEMA_VERSION", "Trial", "TrialRecord", "iter_trials", "load_events",
    "load_trials", "load_verdicts", "read_trial", "open_run", "run_packages", "stored_files",
]
