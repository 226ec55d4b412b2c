"""The run store: one SQLite file (WAL) per run directory, one transaction per trial."""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TextIO

from ..spec import SpecError, StoreError, compact_json
from ._call_data import pack
from ._facts import writes_hash

if TYPE_CHECKING:
    from ..spec import Grading, Package
    from .records import TrialRecord

SCHEMA_VERSION = 6
DB_NAME = "run.sqlite"
LOCK_NAME = "run.lock"
SCHEMA = Path(__file__).with_name("schema.sql")


dumps = compact_json


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def stored_slices(package: Package) -> dict[str, str]:
    """The package's slices, with ``site`` (the EHR image) and ``period`` (the month of the frozen clock) filled in
    where the package does not declare them, so that out-of-site and out-of-time views always have a value."""
    env = package.public.environment
    return {"site": env.ehr_image, "period": env.now.strftime("%Y-%m"), **package.public.slices}


OUTSIDE = "outside"
"""The isolation of an agent that ran outside forge: the client of ``forge mcp serve`` or ``forge fhir serve``."""
OUTSIDE_TEXT = {"fhir serve": "FHIR REST client outside forge"}
"""How an agent outside forge is shown, by how it was served (its spec's first words); an MCP client otherwise."""


def isolation_of(manifest: dict[str, Any]) -> dict[str, str]:
    """Agent name -> how it ran: ``trusted, in process``, ``<mode> sandbox`` with the bounds it ran without and
    each sandbox a resume changed to, or outside forge (what every report shows)."""
    changes = manifest.get("sandbox_changes", [])
    sandboxes = [c["was"] or {} for c in changes] + [manifest.get("sandbox") or {}]

    def isolated(mode: str) -> str:
        return " then ".join(
            sandbox_text({"mode": mode, **s}) + (f" from {at}" if at else "")
            for s, at in zip(sandboxes, ["", *(c["at"] for c in changes)])
        )

    return {
        a["name"]: "trusted, in process"
        if a.get("trusted", True)
        else OUTSIDE_TEXT.get(str(a.get("spec", "")).split(" (")[0], "MCP client outside forge")
        if a.get("isolation") == OUTSIDE
        else isolated(a.get("isolation"))
        for a in manifest.get("agents", [])
    }


def sandbox_text(sandbox: dict[str, Any]) -> str:
    """``<mode> sandbox``, with the bounds it ran without."""
    missing = [
        *(["processes unbounded"] if "processes" in sandbox and sandbox["processes"] is None else []),
        *(["memory bounded per process only"] if sandbox.get("memory_whole") is False else []),
    ]
    return f"{sandbox.get('mode')} sandbox" + (f" ({', '.join(missing)})" if missing else "")


def connect(db: Path, readonly: bool) -> sqlite3.Connection:
    """A read-write or a read-only (``mode=ro``) connection. In a folder that cannot be written, where SQLite cannot
    create its -shm file, read-only is ``immutable=1``: right only while no changes wait in the -wal file."""
    if not readonly:
        return sqlite3.connect(db, isolation_level=None)
    uri = f"{db.resolve().as_uri()}?mode=ro"
    if not os.access(db.parent, os.W_OK):
        wal = db.with_name(f"{db.name}-wal")
        if wal.exists() and wal.stat().st_size:
            raise StoreError(
                wal, "(run store)", "holds changes not yet in the store: open the run once where it can be written"
            )
        uri += "&immutable=1"
    return sqlite3.connect(uri, uri=True, isolation_level=None)


class RunStore:
    """Open with ``RunStore.create`` for a new run or ``RunStore.open`` for an existing one."""

    def __init__(self, db: Path, readonly: bool = False):
        self.path = db
        self._connect(readonly)
        self.version = SCHEMA_VERSION
        """The store's schema version (an older store opened read-only stays as it is)."""

    @classmethod
    def create(cls, run_dir: Path) -> RunStore:
        run_dir.mkdir(parents=True, exist_ok=True)
        store = cls(run_dir / DB_NAME)
        store.db.execute("PRAGMA journal_mode=WAL")
        store.set_up_writes()
        store.db.executescript(SCHEMA.read_text())
        store.db.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        return store

    @classmethod
    def open(cls, run_dir: Path, readonly: bool = False) -> RunStore:
        """An existing run's store; ``readonly`` for the commands that only read it (it may be in a read-only folder).

        A file that is not a readable run store, or one that cannot be written when not ``readonly``, is a StoreError.
        """
        db = Path(run_dir) / DB_NAME
        if not db.is_file():
            raise StoreError(run_dir, "(run)", f"no run store ({DB_NAME}) in this folder")
        store = cls(db, readonly)
        try:
            if not readonly:
                store.set_up_writes()
            row = store.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        except sqlite3.DatabaseError as exc:
            store.close()
            locked = (exc.sqlite_errorname or "").startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN"))
            raise StoreError(
                db,
                "(run store)",
                f"cannot be written ({exc})" if locked and not readonly else f"not a readable run store ({exc})",
            ) from None
        version = row and row[0]
        if version in OLDER and not readonly:
            migrate(store.db, version)
            version = str(SCHEMA_VERSION)
        elif version not in (str(SCHEMA_VERSION), *OLDER):
            store.close()
            raise StoreError(db, "meta.schema_version", f"is {version}, this code reads {SCHEMA_VERSION}")
        store.version = int(version)
        return store

    def set_up_writes(self) -> None:
        """Settings for writing, and a write lock taken and given back: a store that cannot be written fails here."""
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA foreign_keys=ON")
        self.db.execute("BEGIN IMMEDIATE")
        try:  # a write lock alone does not always find a read-only file (WAL, another user's folder): write once
            self.db.execute("CREATE TABLE IF NOT EXISTS forge_write_probe (x)")
        finally:
            self.db.execute("ROLLBACK")

    def close(self) -> None:
        self.db.close()

    def reopen(self) -> None:
        """Connect again, for writing, after ``close`` (as around a fork: SQLite's state must not cross one)."""
        self._connect(False)
        self.set_up_writes()

    def _connect(self, readonly: bool) -> None:
        self.db = connect(self.path, readonly)
        self.db.row_factory = sqlite3.Row

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self, run_id: str, spec: dict[str, Any], manifest: dict[str, Any], packages: list[Package]) -> None:
        """Record the manifest, the packages (and their files) and grading 1 (the run's own)."""
        from .snapshots import write_snapshots  # the package files: only a run's writer reads them

        with self.transaction():
            self.db.execute("INSERT INTO meta VALUES ('run_id', ?)", (run_id,))
            self.db.execute(
                "INSERT INTO manifest VALUES (1, ?, ?, ?, ?, NULL)",
                (run_id, dumps(spec), dumps(manifest), manifest["started_at"]),
            )
            self.db.executemany(
                "INSERT INTO packages VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                [
                    (
                        p.id,
                        p.public.version,
                        p.public.suite,
                        p.public.category,
                        p.public.purpose,
                        p.public.risk,
                        dumps(stored_slices(p)),
                        str(p.path.resolve()),
                        p.package_hash,
                        p.public_hash,
                        p.hidden_version,
                        p.hidden_hash,
                    )
                    for p in packages
                ],
            )
            for package in packages:
                write_snapshots(self.db, package)
            self.db.execute("INSERT INTO gradings VALUES (1, 'run', ?)", (manifest["started_at"],))

    def spec(self) -> dict[str, Any] | None:
        """The stored run spec; None before the run was started."""
        row = self.db.execute("SELECT spec FROM manifest").fetchone()
        return json.loads(row[0]) if row else None

    def manifest(self) -> dict[str, Any]:
        row = self.db.execute("SELECT json, ended_at FROM manifest").fetchone()
        return {**json.loads(row[0]), "ended_at": row[1]}

    def isolation(self) -> dict[str, str]:
        """Agent name -> how it ran (see ``isolation_of``)."""
        return isolation_of(self.manifest())

    def package_hashes(self) -> dict[str, str]:
        return {r[0]: r[1] for r in self.db.execute("SELECT task_id, package_hash FROM packages")}

    def record_sandbox_change(self, sandbox: dict[str, Any], at: str) -> None:
        """A resume accepted another sandbox for the isolated agents: the manifest's ``sandbox`` becomes it, and
        ``sandbox_changes`` keeps what it was and when it changed."""
        manifest = json.loads(self.db.execute("SELECT json FROM manifest").fetchone()[0])
        manifest.setdefault("sandbox_changes", []).append({"at": at, "was": manifest.get("sandbox")})
        manifest["sandbox"] = sandbox
        with self.transaction():
            self.db.execute("UPDATE manifest SET json = ?", (dumps(manifest),))

    def finish(self) -> None:
        with self.transaction():
            self.db.execute("UPDATE manifest SET ended_at = ?", (utc_now(),))

    def done(self) -> set[tuple[str, str, int]]:
        """(task, agent, trial) of every stored trial."""
        return {tuple(r) for r in self.db.execute("SELECT task_id, agent, trial FROM trials")}

    def transaction(self) -> _Transaction:
        return _Transaction(self.db)

    def write_trial(self, rec: TrialRecord) -> int:
        """Store one trial with its events, verdicts and scores, atomically."""
        return self.write_trials([rec])[0]

    def write_trials(self, records: list[TrialRecord]) -> list[int]:
        """Store finished trials in one transaction (each whole or not at all); their trial ids."""
        return self.write_rows([trial_rows(rec) for rec in records])

    def write_rows(self, trials: list[TrialRows]) -> list[int]:
        """Store finished trials made into rows (``trial_rows``) in one transaction; their trial ids."""
        ids = []
        with self.transaction():
            for rows in trials:
                trial_id = self.db.execute(
                    "INSERT INTO trials VALUES (NULL,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows.trial
                ).lastrowid
                assert trial_id is not None  # the row just inserted
                self.db.executemany(
                    "INSERT INTO events VALUES (?,?,?,?,?,?,?,?,?,?,?)", [(trial_id, *event) for event in rows.events]
                )
                self.db.execute("INSERT INTO call_data VALUES (?,?)", (trial_id, rows.call_data))
                self.db.executemany(
                    "INSERT INTO turns VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", [(trial_id, *turn) for turn in rows.turns]
                )
                self._write_grading(trial_id, 1, rows.grading)
                ids.append(trial_id)
        return ids

    def new_grading(self) -> int:
        with self.transaction():
            cur = self.db.execute("INSERT INTO gradings VALUES (NULL, 'regrade', ?)", (utc_now(),))
        assert cur.lastrowid is not None  # the row just inserted
        return cur.lastrowid

    def write_gradings(
        self, grading_id: int, gradings: list[tuple[int, Grading]], hidden_from_disk: Sequence[Package] = ()
    ) -> None:
        """Store a regrade's (trial id, grading) pairs and the hidden halves read from disk for it, in one
        transaction."""
        from .snapshots import keep_hidden

        with self.transaction():
            for trial_id, grading in gradings:
                self._write_grading(trial_id, grading_id, grading_rows(grading))
            for package in hidden_from_disk:
                keep_hidden(self.db, package)

    def _write_grading(self, trial_id: int, grading_id: int, rows: GradingRows) -> None:
        scores, verdicts = rows
        self.db.execute("INSERT INTO scores VALUES (?,?,?,?,?,?,?,?,?,?)", (trial_id, grading_id, *scores))
        ids = [text_id(*text) for _, text, _, _, _ in verdicts]
        self.db.executemany(
            "INSERT OR IGNORE INTO verdict_texts VALUES (?,?,?,?,?)",
            [(i, *text) for i, (_, text, _, _, _) in zip(ids, verdicts, strict=True)],
        )
        self.db.executemany(
            f"INSERT INTO verdict_rows VALUES (?,?,?,{TEXT_OF},?,?,?)",
            [
                (trial_id, grading_id, verifier_id, i, *text, passed, steps, error)
                for i, (verifier_id, text, passed, steps, error) in zip(ids, verdicts, strict=True)
            ],
        )


TEXT_OF = "(SELECT text_id FROM verdict_texts WHERE text_id = ? AND (kind, category, severity, reason) = (?,?,?,?))"
"""A verdict text's id, looked up by id and text: NULL (refused by ``verdict_rows``) where another text has the id
(never seen: 63 bits), so no verdict is ever stored with another's text."""


VerdictText = tuple[str, str, str, str]
"""What a verdict says (``verdict_texts``): its verifier's kind, category and severity, and its reason."""
GradingRows = tuple[tuple[Any, ...], list[tuple[str, VerdictText, bool, str, bool]]]
"""A grading as its row of scores and its verdicts' rows (verifier id, text, passed, steps, error), without the
trial and grading ids."""


@dataclass(frozen=True)
class TrialRows:
    """A graded trial as the store's rows, without its trial id (the store gives it when it writes them): made
    wherever the trial is graded, written by the run's store."""

    trial: tuple[Any, ...]
    events: list[tuple[Any, ...]]
    call_data: bytes
    grading: GradingRows
    turns: Sequence[tuple[Any, ...]] = ()


def trial_rows(rec: TrialRecord) -> TrialRows:
    r = rec.result
    calls = [(dumps(e.args), dumps(e.result), dumps(e.changes)) for e in rec.events]
    return TrialRows(
        (
            rec.task_id,
            rec.agent,
            rec.agent_version,
            rec.trial,
            rec.seed,
            rec.status,
            rec.reason,
            r.answer,
            dumps(r.output),
            r.confidence,
            r.status,
            len(rec.events),
            rec.duration_s,
            rec.queued_s,
            rec.cost,
            utc_now(),
            rec.attempts,
            writes_hash(changes for _, _, changes in calls),
        ),
        [
            (
                e.step,
                e.tool,
                e.kind,
                e.ok,
                e.error and dumps(e.error),
                e.denied,
                dumps(e.flags),
                e.fault,
                e.latency_ms,
                e.started_ms,
            )
            for e in rec.events
        ],
        pack(calls),
        grading_rows(rec.grading),
        [
            (
                t.turn,
                t.after_step,
                t.text,
                dumps(t.tool_calls),
                t.finish_reason,
                t.refusal,
                t.prompt_tokens,
                t.completion_tokens,
                t.cached_tokens,
                t.cost,
                t.latency_ms,
                dumps(t.retries),
                t.error,
            )
            for t in rec.turns
        ],
    )


def text_id(kind: str, category: str, severity: str, reason: str) -> int:
    """A verdict text's id in ``verdict_texts``: the first 63 bits of the BLAKE2b hash of its columns."""
    import hashlib  # imported here: reading a trial (``forge replay``) does not load OpenSSL

    key = repr((kind, category, severity, reason)).encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest()) >> 1


def grading_rows(g: Grading) -> GradingRows:
    s = g.scores
    return (
        (
            s.passed,
            s.accuracy,
            s.completion,
            s.safety_gate,
            dumps(s.missing),
            dumps(s.extra),
            g.hidden_version,
            g.hidden_hash,
        ),
        [
            (v.verifier_id, (v.kind, v.category, v.severity, v.reason), v.passed, dumps(v.steps), v.error)
            for v in g.verdicts
        ],
    )


OLDER = ("1", "2", "3", "4", "5")
"""The schema versions a store is brought up from when it is opened for writing (read-only, it is read as it is)."""
ADDED_COLUMNS = (
    ("events", "started_ms REAL"),
    ("verdicts", "error INTEGER NOT NULL DEFAULT 0"),
    ("trials", "attempts INTEGER NOT NULL DEFAULT 1"),
)
"""The columns added since version 1, with their defaults for the rows stored before."""


def create_schema(db: sqlite3.Connection) -> None:
    """Every table, index and view of ``schema.sql`` that the store lacks, statement by statement (unlike
    ``executescript``, within the transaction open)."""
    statement = ""
    for line in SCHEMA.read_text().splitlines(keepends=True):
        statement += line
        if sqlite3.complete_statement(statement):
            db.execute(statement)
            statement = ""


def migrate(db: sqlite3.Connection, version: str) -> None:
    """Bring an older store to this version in place: the new tables and columns, and, from version 1, the package
    files from the folders the run named, where they are still there and unchanged (their public hash still
    matches); before version 5, each trial's call data moved out of ``events`` (``move_call_data``); before version
    6, the verdicts' texts out of their rows (``move_verdict_texts``)."""
    with _Transaction(db):  # a migration cut short is taken up again: each step is skipped once done
        create_schema(db)
        for table, column in ADDED_COLUMNS:
            if column.split()[0] not in {row[1] for row in db.execute(f"PRAGMA table_info({table})")}:
                db.execute(f"ALTER TABLE {table} ADD COLUMN {column}")
        if version == "1":
            snapshot_packages(db)
        moved = move_call_data(db)
        moved = move_verdict_texts(db) or moved
        create_schema(db)  # the view verdicts, where the table was
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
    if moved:
        db.execute("VACUUM")  # the pages the moved rows gave up back to the file system: as small as a new store


MOVED = ("args", "result", "changes")
"""The columns of ``events`` before version 5 that ``call_data`` holds since."""


def move_call_data(db: sqlite3.Connection) -> bool:
    """Before version 5: each trial's calls' arguments, results and changes into ``call_data`` and the hash of its
    writes into ``trials.writes``, then ``events`` without them (and without its index ``events_calls``), with a
    progress bar (about 30 s for 100,000 trials); whether there was anything to move."""
    from tqdm.auto import tqdm  # imported here: only a migration shows progress

    if "changes" not in {row[1] for row in db.execute("PRAGMA table_info(events)")}:
        return False
    db.execute("ALTER TABLE trials ADD COLUMN writes TEXT NOT NULL DEFAULT ''")
    trials = db.execute("SELECT trial_id FROM trials").fetchall()
    for (trial_id,) in tqdm(
        trials, desc=f"run store to version {SCHEMA_VERSION}", unit="trial", disable=None, leave=False
    ):
        calls = db.execute(
            "SELECT args, COALESCE(result, 'null'), changes FROM events WHERE trial_id = ? ORDER BY step", (trial_id,)
        ).fetchall()
        db.execute("INSERT INTO call_data VALUES (?,?)", (trial_id, pack(calls)))
        db.execute("UPDATE trials SET writes = ? WHERE trial_id = ?", (writes_hash(c for _, _, c in calls), trial_id))
    db.execute("DROP INDEX IF EXISTS events_calls")
    for column in MOVED:
        db.execute(f"ALTER TABLE events DROP COLUMN {column}")
    return True


def move_verdict_texts(db: sqlite3.Connection) -> bool:
    """Before version 6: the table ``verdicts`` into ``verdict_texts`` (each text once) and ``verdict_rows``, a
    thousand trials at a time with a progress bar (about 10 s for 100,000 trials), then dropped (the view of that
    name takes its place); whether there was a table to move."""
    from tqdm.auto import tqdm

    if db.execute("SELECT type FROM sqlite_master WHERE name = 'verdicts'").fetchone()[0] != "table":
        return False
    db.create_function("text_id", 4, text_id, deterministic=True)
    last = db.execute("SELECT COALESCE(MAX(trial_id), 0) FROM trials").fetchone()[0]
    with tqdm(
        total=last, desc=f"run store to version {SCHEMA_VERSION}", unit="trial", disable=None, leave=False
    ) as bar:
        for first in range(0, last, MOVED_AT_ONCE):
            trials = {"first": first, "last": first + MOVED_AT_ONCE}
            db.execute(
                "INSERT OR IGNORE INTO verdict_texts SELECT text_id(kind, category, severity, reason), kind, "
                "category, severity, reason FROM verdicts WHERE trial_id > :first AND trial_id <= :last",
                trials,
            )
            db.execute(  # each text looked up by id and text, as TEXT_OF does
                "INSERT INTO verdict_rows SELECT trial_id, grading_id, verifier_id, (SELECT x.text_id FROM "
                "verdict_texts x WHERE x.text_id = text_id(v.kind, v.category, v.severity, v.reason) AND (x.kind, "
                "x.category, x.severity, x.reason) = (v.kind, v.category, v.severity, v.reason)), passed, steps, "
                "error FROM verdicts v WHERE trial_id > :first AND trial_id <= :last",
                trials,
            )
            bar.update(min(MOVED_AT_ONCE, last - first))
    db.execute("DROP TABLE verdicts")
    return True


MOVED_AT_ONCE = 1_000
"""Trials whose verdicts ``move_verdict_texts`` moves in one step of its progress bar."""


def snapshot_packages(db: sqlite3.Connection) -> None:
    """Keep the files of each package of a version 1 run, read from its folder where it is unchanged."""
    from ..spec import load_package  # the loader, only for this once-per-store step
    from .snapshots import write_snapshots

    for path, public_hash in db.execute("SELECT path, public_hash FROM packages").fetchall():
        try:
            package = load_package(path)
            if package.public_hash == public_hash:
                write_snapshots(db, package)
        except (SpecError, OSError):
            pass  # gone or changed: the run can still be read here, and replayed where its packages are


class RunLock:
    """An exclusive lock on a run folder for as long as a process writes the run (``run.lock`` beside the store)."""

    def __init__(self, run_dir: Path):
        self.path = Path(run_dir) / LOCK_NAME
        self._file: TextIO | None = None

    def __enter__(self) -> RunLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = file = open(self.path, "a")
        try:
            fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            file.close()
            raise StoreError(
                self.path.parent, "(run)", "another process is writing this run; wait for it to end"
            ) from None
        return self

    def __exit__(self, *exc: object) -> None:
        file = self._file
        assert file is not None  # entered
        fcntl.flock(file, fcntl.LOCK_UN)
        file.close()


class _Transaction:
    """BEGIN ... COMMIT, or ROLLBACK on an exception."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN")

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")
