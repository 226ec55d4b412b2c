"""Run store (SQLite, WAL), run manifest, and loaders that return pandas DataFrames.

The names below are imported on first use: reading one trial loads no package loader.
"""
from .. import _lazy

_HOMES = {
    "loaders": ("iter_trials", "load_events", "load_trials", "load_verdicts", "read_trial"),
    "packages": ("run_packages",),
    "records": ("TrialRecord",),
    "run": ("Run", "Trial", "open_run"),
    "run_store": ("DB_NAME", "SCHEMA_VERSION", "RunLock", "RunStore"),
    "snapshots": ("stored_files",),
}

__all__ = [
    "DB_NAME", "Run", "RunLock", "RunStore", "SCHEMA_VERSION", "Trial", "TrialRecord", "iter_trials", "load_events",
    "load_trials", "load_verdicts", "read_trial", "open_run", "run_packages", "stored_files",
]
__getattr__ = _lazy(__name__, _HOMES)


def __dir__() -> list[str]:
    return __all__
