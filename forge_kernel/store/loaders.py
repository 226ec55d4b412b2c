"""Read a run store: pandas DataFrames for analysis, and one trial at a time for replay and regrading."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..spec import AgentResult, Event, Grading, ModelTurn, Scores, StoreError, Verdict
from ._call_data import unpack
from .records import TrialRecord
from .run_store import RunStore

if TYPE_CHECKING:
    import pandas as pd

LATEST = """
SELECT s.* FROM scores s
JOIN (SELECT trial_id, MAX(grading_id) AS g FROM scores GROUP BY trial_id) m
  ON s.trial_id = m.trial_id AND s.grading_id = m.g
"""


def _frame(run_dir: str | Path, sql: str, params: tuple[Any, ...] = ()) -> pd.DataFrame:
    import pandas as pd  # imported here: the CLI starts without it

    with RunStore.open(Path(run_dir), readonly=True) as store:
        return pd.read_sql_query(sql, store.db, params=params)


TRIAL_ROWS = f"""
SELECT t.*, p.version AS task_version, p.suite, p.category, p.purpose, p.risk, p.slices,
       s.grading_id, s.passed, s.accuracy, s.completion, s.safety_gate, s.missing, s.extra,
       s.hidden_version, s.hidden_hash
FROM trials t JOIN packages p USING (task_id) JOIN ({LATEST}) s USING (trial_id)
ORDER BY t.task_id, t.agent, t.trial
"""
"""One row per trial with its package facts and its latest scores."""


def trial_frame(db: sqlite3.Connection) -> pd.DataFrame:
    """TRIAL_ROWS as a DataFrame (``passed`` as bool)."""
    import pandas as pd  # imported here: the CLI starts without it

    df = pd.read_sql_query(TRIAL_ROWS, db)
    df["passed"] = df["passed"].astype(bool)
    return df


def load_trials(run_dir: str | Path) -> pd.DataFrame:
    """One row per trial with its package facts and its latest scores."""
    with RunStore.open(Path(run_dir), readonly=True) as store:
        return trial_frame(store.db)


def load_events(run_dir: str | Path, trial_id: int | None = None) -> pd.DataFrame:
    """Events of one trial, or of the whole run, with the columns of a version 4 store: each call's ``args``,
    ``result`` and ``changes`` as JSON text."""
    import pandas as pd  # imported here: the CLI starts without it

    where, params = ("WHERE trial_id = ?", (trial_id,)) if trial_id is not None else ("", ())
    with RunStore.open(Path(run_dir), readonly=True) as store:
        frame = pd.read_sql_query(f"SELECT * FROM events {where} ORDER BY trial_id, step", store.db, params=params)
        if store.version < 5:
            return frame
        data = store.db.execute(f"SELECT data FROM call_data {where} ORDER BY trial_id", params)
        calls = [call for (blob,) in data for call in unpack(blob)]
    for after, name, i in (("kind", "args", 0), ("ok", "result", 1), ("latency_ms", "changes", 2)):
        frame.insert(frame.columns.get_loc(after) + 1, name, [call[i] for call in calls])
    return frame


def load_verdicts(run_dir: str | Path, latest: bool = True) -> pd.DataFrame:
    """Verdicts of the latest grading of each trial (or of every grading)."""
    join = f"JOIN ({LATEST}) s ON v.trial_id = s.trial_id AND v.grading_id = s.grading_id" if latest else ""
    return _frame(run_dir, f"SELECT v.* FROM verdicts v {join} ORDER BY v.trial_id, v.verifier_id")


def read_trial(store: RunStore, task_id: str, agent: str, trial: int) -> TrialRecord:
    """Read one trial without touching the others."""
    return trial_from_row(store, trial_row(store, task_id, agent, trial))


def trial_row(store: RunStore, task_id: str, agent: str, trial: int) -> sqlite3.Row:
    """One trial's ``trials`` row; a StoreError when there is none."""
    row: sqlite3.Row | None = store.db.execute(
        "SELECT * FROM trials WHERE task_id = ? AND agent = ? AND trial = ?", (task_id, agent, trial)
    ).fetchone()
    if row is None:
        raise StoreError(store.path.parent, "--task/--agent/--trial", f"no trial {task_id} / {agent} / {trial}")
    return row


def trial_row_by_id(store: RunStore, trial_id: int) -> sqlite3.Row:
    row: sqlite3.Row | None = store.db.execute("SELECT * FROM trials WHERE trial_id = ?", (trial_id,)).fetchone()
    if row is None:
        raise StoreError(store.path.parent, "trial_id", f"no trial with id {trial_id}")
    return row


def event_of(e: dict[str, Any]) -> Event:
    """One stored ``events`` row as an Event."""
    return Event(
        step=e["step"],
        tool=e["tool"],
        args=json.loads(e["args"]),
        kind=e["kind"],
        ok=bool(e["ok"]),
        result=json.loads(e["result"]) if e["result"] else None,
        error=json.loads(e["error"]) if e["error"] else None,
        denied=e["denied"],
        flags=json.loads(e["flags"]),
        fault=e["fault"],
        latency_ms=e["latency_ms"],
        started_ms=started_of(e),
        changes=json.loads(e["changes"]),
    )


def started_of(e: dict[str, Any]) -> float | None:
    """When the call began (None in a version 1 store, which did not record it)."""
    return e.get("started_ms")


def event_json(e: dict[str, Any]) -> str:
    """One row of ``event_rows`` as the JSON of its Event, the stored JSON columns passed through (not decoded)."""
    ms = started_of(e)
    started = "null" if ms is None else repr(float(ms))  # floats as Python writes them
    return (
        f'{{"step":{e["step"]},"tool":{e["tool_json"]},"args":{e["args"]},"kind":{e["kind_json"]},'
        f'"ok":{"true" if e["ok"] else "false"},"result":{e["result"] or "null"},"error":{e["error"] or "null"},'
        f'"denied":{e["denied_json"]},"flags":{e["flags"]},"fault":{e["fault_json"]},'
        f'"latency_ms":{float(e["latency_ms"])!r},"started_ms":{started},"changes":{e["changes"]}}}'
    )


def event_rows(store: RunStore, trial_id: int) -> list[dict[str, Any]]:
    """A trial's stored ``events`` rows, in step order, not decoded, each with its call data (``args``, ``result``
    and ``changes`` as JSON text) and with its text columns also as JSON strings (``tool_json`` ...) for
    ``event_json``."""
    rows = store.db.execute(
        "SELECT *, json_quote(tool) AS tool_json, json_quote(kind) AS kind_json, json_quote(denied) AS denied_json, "
        "json_quote(fault) AS fault_json FROM events WHERE trial_id = ? ORDER BY step",
        (trial_id,),
    ).fetchall()
    if store.version < 5:
        return [dict(row) for row in rows]
    (data,) = store.db.execute("SELECT data FROM call_data WHERE trial_id = ?", (trial_id,)).fetchone()
    return [
        dict(row, args=args, result=result, changes=changes)
        for row, (args, result, changes) in zip(rows, unpack(data), strict=True)
    ]


def turns_of(store: RunStore, trial_id: int) -> list[ModelTurn]:
    """A trial's reported model turns, in order (none in a store older than version 4)."""
    if store.version < 4:
        return []
    return [
        ModelTurn(
            t["turn"],
            t["after_step"],
            t["text"],
            json.loads(t["tool_calls"]),
            t["finish_reason"],
            t["refusal"],
            t["prompt_tokens"],
            t["completion_tokens"],
            t["cached_tokens"],
            t["cost"],
            t["latency_ms"],
            json.loads(t["retries"]),
            t["error"],
        )
        for t in store.db.execute("SELECT * FROM turns WHERE trial_id = ? ORDER BY turn", (trial_id,))
    ]


def trial_from_row(store: RunStore, row: sqlite3.Row) -> TrialRecord:
    """A trial's events, result and latest grading, from its ``trials`` row."""
    record = trial_without_events(store, row)
    record.events = [event_of(e) for e in event_rows(store, row["trial_id"])]
    record.turns = turns_of(store, row["trial_id"])
    return record


def trial_without_events(store: RunStore, row: sqlite3.Row) -> TrialRecord:
    """A trial's result and latest grading from its ``trials`` row; its ``events`` None (``event_rows`` reads them)."""
    db = store.db
    tid = row["trial_id"]
    s = db.execute("SELECT * FROM scores WHERE trial_id = ? ORDER BY grading_id DESC LIMIT 1", (tid,)).fetchone()
    verdicts = [
        Verdict(
            v["verifier_id"],
            v["kind"],
            v["category"],
            v["severity"],
            bool(v["passed"]),
            v["reason"],
            tuple(json.loads(v["steps"])),
            bool(v["error"]) if "error" in v.keys() else False,  # noqa: SIM118  (sqlite3.Row: `in` reads values)
        )
        for v in db.execute(
            "SELECT * FROM verdicts WHERE trial_id = ? AND grading_id = ? ORDER BY verifier_id", (tid, s["grading_id"])
        )
    ]
    scores = Scores(
        bool(s["passed"]),
        s["accuracy"],
        s["completion"],
        s["safety_gate"],
        tuple(json.loads(s["missing"])),
        tuple(json.loads(s["extra"])),
    )
    result = AgentResult(
        answer=row["answer"], output=json.loads(row["output"]), confidence=row["confidence"], status=row["self_status"]
    )
    not_read = cast("list[Event]", None)  # the events: read apart (event_rows)
    return TrialRecord(
        row["task_id"],
        row["agent"],
        row["agent_version"],
        row["trial"],
        row["seed"],
        row["status"],
        row["reason"],
        result,
        not_read,
        row["duration_s"],
        row["cost"],
        row["queued_s"],
        tid,
        row["finished_at"],
        s["grading_id"],
        attempts=attempts_of(row),
        grading=Grading(verdicts, scores, s["hidden_version"], s["hidden_hash"]),
    )


def attempts_of(row: sqlite3.Row) -> int:
    """How often the trial's agent was run (1 in a store older than version 3, which did not record it)."""
    return row["attempts"] if "attempts" in row.keys() else 1  # noqa: SIM118  (a sqlite3.Row: "in" reads values)


def iter_trials(store: RunStore) -> Iterator[TrialRecord]:
    """Every stored trial, one at a time."""
    for row in store.db.execute("SELECT * FROM trials ORDER BY trial_id").fetchall():
        yield trial_from_row(store, row)
