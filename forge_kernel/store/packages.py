"""The packages a run used, reloaded from the paths it stored."""
from __future__ import annotations

from ..spec import Package, SpecError, load_package
from .run_store import RunStore


def run_packages(store: RunStore, tasks: set[str] | None = None) -> dict[str, Package]:
    """Task id -> package as on disk now (only ``tasks`` when given); a changed public half is refused."""
    packages = {}
    for row in store.db.execute("SELECT task_id, path, public_hash FROM packages").fetchall():
        if tasks is not None and row["task_id"] not in tasks:
            continue
        package = packages[row["task_id"]] = load_package(row["path"])
        if package.public_hash != row["public_hash"]:
            raise SpecError(package.path / "package.yaml", "(public half)",
                            "changed since the run: its trajectories no longer fit it; run it again")
    return packages
