"""Run store (SQLite, WAL), run manifest, and loaders that return pandas DataFrames.

The names below are imported on first use: reading one trial loads no package loader.
"""

from .. import _lazy

_HOMES = {
    "loaders": ("iter_trials", "load_events", "load_trials", "load_verdicts", "read_trial"),
    "matching": ("Gold", "Key", "STATES", "evidence_of", "gold_criteria", "reported_criteria", "status_of"),
    "packages": ("run_packages",),
    "records": ("TrialRecord", "Ungraded"),
    "run": ("Run", "Trial", "open_run"),
    "run_store": ("DB_NAME", "OUTSIDE", "RunLock", "RunStore", "SCHEMA_VERSION", "trial_rows", "utc_now"),
    "snapshots": ("stored_files",),
}

__all__ = [
    "DB_NAME",
    "Gold",
    "Key",
    "OUTSIDE",
    "Run",
    "RunLock",
    "RunStore",
    "SCHEMA_VERSION",
    "STATES",
    "Trial",
    "TrialRecord",
    "Ungraded",
    "evidence_of",
    "gold_criteria",
    "iter_trials",
    "load_events",
    "load_trials",
    "load_verdicts",
    "open_run",
    "read_trial",
    "reported_criteria",
    "run_packages",
    "status_of",
    "stored_files",
    "trial_rows",
    "utc_now",
]
__getattr__, __dir__ = _lazy(__name__, _HOMES, __all__)
