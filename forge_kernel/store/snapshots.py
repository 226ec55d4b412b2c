"""The files of every package a run used, kept in its store by content hash: a copied store needs nothing else.

A package is its ``package.yaml``, its suite's public defaults and fixtures (role ``public``), its hidden half
(``hidden``), its suite's hidden defaults (``hidden-defaults``) and the custom verifier kinds its hidden half uses
(``plugin``, ``verifiers/plugins/<kind>.py``).
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from ..spec import StoreError, package_from_files

if TYPE_CHECKING:
    from ..spec import Package


def digest(content: bytes) -> str:
    return "sha256:" + hashlib.sha256(content).hexdigest()


def hidden_files(package: Package) -> list[tuple[str, str, bytes]]:
    """(role, name, content) of a package's hidden half on disk and the custom verifier kinds it uses."""
    from ..verify import plugin_path  # grading's side: a replay needs no verifier

    files = [("hidden", str(package.hidden_path.resolve()), package.hidden_path.read_bytes())]
    defaults = package.hidden_defaults_path
    if defaults is not None:
        files.append(("hidden-defaults", str(defaults.resolve()), defaults.read_bytes()))
    for kind in sorted({use.kind for use in package.read_hidden().verifiers}):
        path = plugin_path(kind, package.hidden_path)
        if path.is_file():
            files.append(("plugin", kind, path.read_bytes()))
    return files


def disk_files(package: Package) -> list[tuple[str, str, bytes]]:
    """(role, name, content) of every file of a package loaded from disk."""
    public = [("public", name, (package.path / name).read_bytes()) for name in package.public_files]
    return public + hidden_files(package)


def write_snapshots(db: sqlite3.Connection, package: Package) -> None:
    """Keep the files of a package loaded from disk in the store (inside the caller's transaction)."""
    keep(db, package.id, disk_files(package))


def keep_hidden(db: sqlite3.Connection, package: Package) -> None:
    """Keep the hidden half (from disk) a regrade used, in place of the one the store held."""
    db.execute(
        "DELETE FROM package_files WHERE task_id = ? AND role IN ('hidden', 'hidden-defaults', 'plugin')", (package.id,)
    )
    keep(db, package.id, hidden_files(package))


def keep(db: sqlite3.Connection, task_id: str, files: list[tuple[str, str, bytes]]) -> None:
    for role, name, content in files:
        key = digest(content)
        db.execute("INSERT OR IGNORE INTO snapshots VALUES (?, ?)", (key, content))
        db.execute("INSERT OR REPLACE INTO package_files VALUES (?, ?, ?, ?)", (task_id, role, name, key))


def has_snapshots(db: sqlite3.Connection, task_id: str) -> bool:
    return db.execute("SELECT 1 FROM package_files WHERE task_id = ? LIMIT 1", (task_id,)).fetchone() is not None


def snapshot_package(db: sqlite3.Connection, task_id: str, path: str, where: Path) -> Package:
    """The package as the run used it, from the store alone; its custom verifier kinds are registered.

    ``path`` is where the run found the package (named in messages); ``where`` is the store, for errors.
    """
    rows = kept_files(db, task_id)
    if not rows:
        raise StoreError(where, "package_files", f"holds no files of {task_id}")
    public = {name: content for role, name, content in rows if role == "public"}
    hidden = next((name, content) for role, name, content in rows if role == "hidden")
    defaults = next(
        ((Path(name), content.decode("utf-8")) for role, name, content in rows if role == "hidden-defaults"), None
    )
    hidden_path = Path(hidden[0])
    for role, kind, content in rows:
        if role == "plugin":
            from ..verify import plugin_path, register_plugin

            register_plugin(kind, content.decode("utf-8"), plugin_path(kind, hidden_path))
    return package_from_files(Path(path), public, (hidden_path, hidden[1].decode("utf-8")), defaults)


def stored_files(store, package: Package) -> list[tuple[str, str, bytes]]:
    """(role, name, content) of a run's package as the store keeps it, or from disk for a store of schema 1."""
    rows = kept_files(store.db, package.id) if store.version >= 2 else []
    return rows or disk_files(package)


def kept_files(db: sqlite3.Connection, task_id: str) -> list[tuple[str, str, bytes]]:
    """(role, name, content) of a package's files as the store keeps them (none in a store of schema 1)."""
    return [
        tuple(row)
        for row in db.execute(
            "SELECT f.role, f.name, s.content FROM package_files f JOIN snapshots s USING (hash) WHERE f.task_id = ?",
            (task_id,),
        )
    ]
