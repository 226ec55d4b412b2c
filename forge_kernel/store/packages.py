"""The packages a run used: rebuilt from the store's own copies of their files, or (older stores) from disk."""

from __future__ import annotations

from pathlib import Path

from ..spec import Package, StoreError, load_package
from .run_store import RunStore
from .snapshots import has_snapshots, snapshot_package


def run_packages(store: RunStore, tasks: set[str] | None = None, hidden: str = "stored") -> dict[str, Package]:
    """Task id -> the package as the run used it (only ``tasks`` when given).

    The public half and fixtures are always the run's own. ``hidden="stored"`` keeps the hidden half the store
    holds (the one last graded with); ``hidden="current"`` takes the one on disk beside the package's folder when
    there is one (a regrade with a newer hidden half), else the stored one. A store without copies (schema 1, not
    yet migrated) reloads from disk, refusing a changed public half.
    """
    packages = {}
    for row in store.db.execute("SELECT task_id, path, public_hash FROM packages").fetchall():
        task_id = row["task_id"]
        if tasks is not None and task_id not in tasks:
            continue
        if store.version >= 2 and has_snapshots(store.db, task_id):
            package = snapshot_package(store.db, task_id, row["path"], store.path)
            if hidden == "current" and package.hidden_path.is_file():
                package.hidden_source = None  # read it from disk, where it was found
        else:
            package = load_package(row["path"])
            if package.public_hash != row["public_hash"]:
                raise StoreError(
                    Path(row["path"]) / "package.yaml",
                    "(public half)",
                    "changed since the run: its trajectories no longer fit it; run it again",
                )
        packages[task_id] = package
    return packages
