"""Read a run store: pandas DataFrames for analysis, and one trial at a time for replay and regrading."""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from ..spec.errors import StoreError
from ..spec.trajectory import AgentResult, Event
from ..spec.grading import Grading, Scores, Verdict
from .records import TrialRecord
from .run_store import RunStore

if TYPE_CHECKING:
    import pandas as pd

LATEST = """
SELECT s.* FROM scores s
JOIN (SELECT trial_id, MAX(grading_id) AS g FROM scores GROUP BY trial_id) m
  ON s.trial_id = m.trial_id AND s.grading_id = m.g
"""


def _frame(run_dir: str | Path, sql: str, params: tuple = ()) -> pd.DataFrame:
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


def trial_frame(db) -> pd.DataFrame:
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
    """Events of one trial, or of the whole run."""
    where, params = ("WHERE trial_id = ?", (trial_id,)) if trial_id is not None else ("", ())
    return _frame(run_dir, f"SELECT * FROM events {where} ORDER BY trial_id, step", params)


def load_verdicts(run_dir: str | Path, latest: bool = True) -> pd.DataFrame:
    """Verdicts of the latest grading of each trial (or of every grading)."""
    join = f"JOIN ({LATEST}) s ON v.trial_id = s.trial_id AND v.grading_id = s.grading_id" if latest else ""
    return _frame(run_dir, f"SELECT v.* FROM verdicts v {join} ORDER BY v.trial_id, v.verifier_id")


def read_trial(store: RunStore, task_id: str, agent: str, trial: int) -> TrialRecord:
    """Read one trial without touching the others."""
    row = store.db.execute("SELECT * FROM trials WHERE task_id = ? AND agent = ? AND trial = ?",
                           (task_id, agent, trial)).fetchone()
    if row is None:
        raise StoreError(store.path.parent, "--task/--agent/--trial", f"no trial {task_id} / {agent} / {trial}")
    return trial_from_row(store, row)


def read_trial_by_id(store: RunStore, trial_id: int) -> TrialRecord:
    """Read one trial by its row id."""
    row = store.db.execute("SELECT * FROM trials WHERE trial_id = ?", (trial_id,)).fetchone()
    if row is None:
        raise StoreError(store.path.parent, "trial_id", f"no trial with id {trial_id}")
    return trial_from_row(store, row)


def trial_from_row(store: RunStore, row) -> TrialRecord:
    """A trial's events, result and latest grading, from its ``trials`` row."""
    db = store.db
    tid = row["trial_id"]
    events = [Event.model_construct(  # the store's own rows: already valid
        step=e["step"], tool=e["tool"], args=json.loads(e["args"]), kind=e["kind"], ok=bool(e["ok"]),
        result=json.loads(e["result"]) if e["result"] else None, error=json.loads(e["error"]) if e["error"] else None,
        denied=e["denied"], flags=json.loads(e["flags"]), fault=e["fault"], latency_ms=e["latency_ms"],
        started_ms=e["started_ms"] if "started_ms" in e.keys() else None, changes=json.loads(e["changes"]))
        for e in db.execute("SELECT * FROM events WHERE trial_id = ? ORDER BY step", (tid,))]
    s = db.execute("SELECT * FROM scores WHERE trial_id = ? ORDER BY grading_id DESC LIMIT 1", (tid,)).fetchone()
    verdicts = [Verdict(v["verifier_id"], v["kind"], v["category"], v["severity"], bool(v["passed"]), v["reason"],
                        tuple(json.loads(v["steps"])), bool(v["error"]) if "error" in v.keys() else False)
                for v in db.execute("SELECT * FROM verdicts WHERE trial_id = ? AND grading_id = ? "
                                    "ORDER BY verifier_id", (tid, s["grading_id"]))]
    scores = Scores(bool(s["passed"]), s["accuracy"], s["completion"], s["safety_gate"], tuple(json.loads(s["missing"])),
                    tuple(json.loads(s["extra"])))
    result = AgentResult(answer=row["answer"], output=json.loads(row["output"]), confidence=row["confidence"],
                         status=row["self_status"])
    return TrialRecord(row["task_id"], row["agent"], row["agent_version"], row["trial"], row["seed"], row["status"],
                       row["reason"], result, events, row["duration_s"], row["cost"],
                       Grading(verdicts, scores, s["hidden_version"], s["hidden_hash"]), row["queued_s"], tid,
                       row["finished_at"], s["grading_id"])


def iter_trials(store: RunStore):
    """Every stored trial, one at a time."""
    for row in store.db.execute("SELECT * FROM trials ORDER BY trial_id").fetchall():
        yield trial_from_row(store, row)
