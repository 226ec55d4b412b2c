"""What analysis reads of a run, filtered and aggregated in SQL: only the latest grading of each trial, only the
columns used, and never a whole events or verdicts table.

- ``tasks``: one row per package (its facts and slices);
- ``outcomes``: one row per trial, its keys, status and scores (``failed_outcomes``: those of the failed trials, with
  how many read tools of the expected chain never ran successfully, ``missing_reads``); ``task_passes``: per task,
  agent and outcome, how many trials and the first one, counted in SQL;
- ``trial_facts``: one row per trial of an agent with what a comparison needs: its outcome, answer and output,
  tool time and counts, tool success, faults met and recovered, idempotent replays, cross-patient and
  unauthorized-write attempts, the fingerprint of its writes, its model turns, tokens and time (``USAGE_COLUMNS``),
  and its failing hard safety and answer verdicts;
- ``usage``: one row per trial, its cost and its model turns added up, without reading a single event;
- ``failing_verdicts`` and ``failed_calls`` of the failed trials, for the failure ledger.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..spec import CROSS_PATIENT, ERROR_PREFIX, UNAUTHORIZED_WRITE

if TYPE_CHECKING:
    import pandas as pd

LATEST = "(SELECT MAX(grading_id) FROM scores WHERE trial_id = t.trial_id)"
"""The latest grading of trial ``t``."""
RETRIED = (
    "EXISTS (SELECT 1 FROM events l WHERE l.trial_id = e.trial_id AND l.step > e.step AND l.tool = e.tool AND l.ok)"
)
"""Event ``e`` is followed by a successful call of the same tool."""

LATEST_SCORES = f"trials t JOIN scores s ON s.trial_id = t.trial_id AND s.grading_id = {LATEST}"
"""Each trial with the scores of its latest grading."""
FAILED_SCORES = "NOT s.passed AND s.grading_id = (SELECT MAX(grading_id) FROM scores l WHERE l.trial_id = s.trial_id)"
"""Scores ``s`` are the latest of a failed trial: found from ``scores`` alone, so that only a failed trial's
``trials`` row, with its answer and output, is read (``scores s CROSS JOIN trials t`` keeps that order)."""

TURN_TOTALS = """SELECT m.trial_id, COUNT(*) AS turns, SUM(m.prompt_tokens) AS prompt_tokens,
       SUM(m.completion_tokens) AS completion_tokens, SUM(m.cached_tokens) AS cached_tokens,
       SUM(m.latency_ms) / 1000.0 AS model_s FROM turns m"""
"""Each trial's reported model turns added up (followed by ``GROUP BY m.trial_id``)."""
NO_TURNS = (
    "FROM (SELECT 0 AS trial_id, 0 AS prompt_tokens, 0 AS completion_tokens, 0 AS cached_tokens, "
    "0.0 AS latency_ms WHERE 0) m"
)
"""What ``TURN_TOTALS`` reads in a store without a ``turns`` table (before version 4): no turn."""
OLD_WRITES = "(SELECT forge_fingerprint(w.changes) FROM events w WHERE w.trial_id = t.trial_id) AS fingerprint"
"""``trials.writes`` of a store older than version 5, from its events' changes."""
USAGE_COLUMNS = "COALESCE(u.turns, 0) AS turns, u.prompt_tokens, u.completion_tokens, u.cached_tokens, u.model_s"
"""A trial's model turns, tokens and model time (seconds) from its ``TURN_TOTALS`` row ``u``: NULL tokens and time
for a trial that reported no turn, never zeros that would read as data."""

TASKS = "SELECT task_id, version, suite, category, purpose, risk, slices FROM packages ORDER BY task_id"

OUTCOME_COLUMNS = """t.trial_id, t.task_id, t.agent, t.agent_version, t.trial, t.status, s.passed, s.accuracy,
       s.completion, s.missing, s.hidden_version, s.hidden_hash"""

OUTCOMES = f"SELECT {OUTCOME_COLUMNS} FROM {LATEST_SCORES} ORDER BY t.task_id, t.agent, t.trial"

TASK_PASSES = f"""
SELECT t.task_id, t.agent, s.passed, COUNT(*) AS trials, MIN(t.trial) AS first_trial, t.trial_id AS first_trial_id
FROM {LATEST_SCORES} GROUP BY t.task_id, t.agent, s.passed ORDER BY t.task_id, t.agent, s.passed
"""
"""Per task, agent and outcome: the trials, and the first (``trial_id`` is a bare column beside ``MIN``: SQLite
takes it from the row with the least trial index)."""

FAILED_OUTCOMES = f"""
SELECT {OUTCOME_COLUMNS},
       (SELECT COUNT(*) FROM json_each(s.missing) WHERE value IN (SELECT value FROM json_each(:reads))) AS missing_reads
FROM scores s CROSS JOIN trials t ON t.trial_id = s.trial_id WHERE {FAILED_SCORES}
ORDER BY t.task_id, t.agent, t.trial
"""

TRIAL_FACTS = f"""
WITH picked AS MATERIALIZED (
  SELECT t.trial_id, {LATEST} AS grading_id FROM trials t WHERE :agent IS NULL OR t.agent = :agent
), calls AS (
  SELECT e.trial_id, SUM(e.latency_ms) / 1000.0 AS tool_s, COUNT(*) AS tool_calls, SUM(e.ok) AS tool_ok,
         SUM(e.fault IS NOT NULL) AS faults, SUM(CASE WHEN e.fault IS NOT NULL THEN {RETRIED} ELSE 0 END) AS recovered,
         SUM(instr(e.flags, '"idempotent_replay"') > 0) AS idempotent_replays,
         SUM(e.denied IS :cross) AS cross_patient, SUM(e.denied IS :unauthorized) AS unauthorized_writes
  FROM events e WHERE e.trial_id IN (SELECT trial_id FROM picked) GROUP BY e.trial_id
), model AS (
  {TURN_TOTALS} WHERE m.trial_id IN (SELECT trial_id FROM picked) GROUP BY m.trial_id
), failing AS (
  SELECT v.trial_id, SUM(v.category = 'safety' AND v.severity = 'hard') AS safety_failures,
         SUM(v.category = 'answer') AS answer_failures, group_concat(v.verifier_id, ',') AS failed_verifiers
  FROM picked k CROSS JOIN verdicts v ON v.trial_id = k.trial_id AND v.grading_id = k.grading_id
  WHERE v.passed = 0 GROUP BY v.trial_id
)
SELECT t.trial_id, t.task_id, t.agent, t.agent_version, t.trial, t.status, t.answer, t.output, t.confidence,
       t.self_status, t.duration_s, t.queued_s, t.cost, t.attempts, p.category, p.risk, s.passed, s.hidden_hash,
       COALESCE(c.tool_s, 0.0) AS tool_s, {USAGE_COLUMNS},
       MAX(t.duration_s - COALESCE(c.tool_s, 0.0) - COALESCE(u.model_s, 0.0), 0.0) AS agent_s,
       COALESCE(c.tool_calls, 0) AS tool_calls, COALESCE(c.tool_ok, 0) AS tool_ok, COALESCE(c.faults, 0) AS faults,
       COALESCE(c.recovered, 0) AS recovered, COALESCE(c.idempotent_replays, 0) AS idempotent_replays,
       COALESCE(c.cross_patient, 0) AS cross_patient, COALESCE(c.unauthorized_writes, 0) AS unauthorized_writes,
       t.writes AS fingerprint, COALESCE(f.safety_failures, 0) AS safety_failures,
       COALESCE(f.answer_failures, 0) AS answer_failures, COALESCE(f.failed_verifiers, '') AS failed_verifiers
FROM picked k JOIN trials t USING (trial_id) JOIN scores s USING (trial_id, grading_id) JOIN packages p USING (task_id)
LEFT JOIN calls c USING (trial_id) LEFT JOIN model u USING (trial_id) LEFT JOIN failing f USING (trial_id)
ORDER BY t.task_id, t.agent, t.trial
"""

USAGE = f"""
SELECT t.trial_id, t.task_id, t.agent, t.trial, t.cost, {USAGE_COLUMNS}
FROM trials t LEFT JOIN ({TURN_TOTALS} GROUP BY m.trial_id) u USING (trial_id)
ORDER BY t.task_id, t.agent, t.trial
"""

FAILED = f"SELECT s.trial_id, s.grading_id FROM scores s WHERE {FAILED_SCORES}"

FAILING_VERDICTS = f"""
WITH failed AS MATERIALIZED ({FAILED})
SELECT v.trial_id, v.verifier_id, v.category, v.severity, v.steps,
       substr(v.reason, 1, length(:raised)) = :raised AS raised
FROM failed f CROSS JOIN verdicts v ON v.trial_id = f.trial_id AND v.grading_id = f.grading_id
WHERE NOT v.passed ORDER BY v.trial_id, v.verifier_id
"""

TEXTED_ROWS = "(SELECT r.*, x.reason FROM verdict_rows r JOIN verdict_texts x USING (text_id))"
OF_KIND = "v.text_id IN (SELECT text_id FROM verdict_texts WHERE kind = :kind)"
"""Verdicts of a kind, picked by their texts' ids before each text is looked up: through the view ``verdicts``,
every verdict's text would be (twice the time at 100,000 trials). A store older than version 6 reads ``verdicts``
(``of_version``)."""

VERDICTS_OF_KIND = f"""
SELECT t.trial_id, v.passed, v.reason
FROM {LATEST_SCORES} JOIN {TEXTED_ROWS} v ON v.trial_id = t.trial_id AND v.grading_id = s.grading_id
WHERE {OF_KIND} ORDER BY t.trial_id, v.verifier_id
"""

FAILED_CALLS = f"""
WITH failed AS MATERIALIZED ({FAILED})
SELECT e.trial_id, e.step, e.tool, e.denied, json_extract(e.error, '$.code') AS code, {RETRIED} AS retried
FROM failed f CROSS JOIN events e ON e.trial_id = f.trial_id
WHERE NOT e.ok ORDER BY e.trial_id, e.step
"""


def writes_hash(changes: Iterable[str]) -> str:
    """A short hash of a trial's writes (``trials.writes``): its calls' non-empty ``changes`` (compact JSON) joined
    by newlines in step order."""
    import hashlib  # imported here: reading one trial does not load OpenSSL

    return hashlib.sha256("\n".join(c for c in changes if c != "[]").encode()).hexdigest()[:16]


class Fingerprint:
    """SQLite aggregate: ``writes_hash`` in a store older than version 5, of its events' ``changes`` in the order the
    rows arrive (a scan of ``events`` by its key gives them in step order)."""

    def __init__(self) -> None:
        self.changes: list[str] = []

    def step(self, changes: str) -> None:
        self.changes.append(changes)

    def finalize(self) -> str:
        return writes_hash(self.changes)


def frame(db: sqlite3.Connection, sql: str, params: dict | tuple = ()) -> pd.DataFrame:
    """A query's rows as a DataFrame; ``passed`` (where read) as bool."""
    import pandas as pd  # imported here: the CLI starts without it

    df = pd.read_sql_query(sql, db, params=params)
    if "passed" in df.columns:
        df["passed"] = df["passed"].astype(bool)
    return df


def tasks(db: sqlite3.Connection) -> pd.DataFrame:
    """One row per package the run used; ``slices`` as a dict."""
    df = frame(db, TASKS)
    df["slices"] = df["slices"].map(json.loads)
    return df


def outcomes(db: sqlite3.Connection) -> pd.DataFrame:
    return frame(db, OUTCOMES)


def task_passes(db: sqlite3.Connection) -> pd.DataFrame:
    return frame(db, TASK_PASSES)


def failed_outcomes(db: sqlite3.Connection) -> pd.DataFrame:
    """The outcomes of the failed trials, with ``missing_reads``."""
    from ..tools import TOOLS  # the tool catalog's kinds, only for this (a replay or a summary needs no tool)

    reads = sorted(name for name, tool in TOOLS.items() if tool.kind == "read")
    return frame(db, FAILED_OUTCOMES, {"reads": json.dumps(reads)})


def of_version(query: str, version: int) -> str:
    """A query as a store of schema ``version`` can answer it: before 6 verdicts are a table, before 5 a trial's
    writes are hashed from its events, before 4 no trial has model turns, before 3 each trial counts as run once."""
    if version < 6:
        query = query.replace(TEXTED_ROWS, "verdicts").replace(OF_KIND, "v.kind = :kind")
    if version < 5:
        query = query.replace("t.writes AS fingerprint", OLD_WRITES)
    if version < 4:
        query = query.replace("FROM turns m", NO_TURNS)
    return query if version >= 3 else query.replace("t.attempts", "1 AS attempts")


def trial_facts(db: sqlite3.Connection, agent: str | None, version: int) -> pd.DataFrame:
    """One row per trial of ``agent`` (None: of every agent) with what a comparison needs, from a store of schema
    ``version``."""
    db.create_aggregate("forge_fingerprint", 1, Fingerprint)  # type: ignore[arg-type]  # typeshed: int values only
    return frame(
        db,
        of_version(TRIAL_FACTS, version),
        {"agent": agent, "cross": CROSS_PATIENT, "unauthorized": UNAUTHORIZED_WRITE},
    )


def usage(db: sqlite3.Connection, version: int) -> pd.DataFrame:
    """One row per trial: its keys, cost and ``USAGE_COLUMNS``, from a store of schema ``version``."""
    return frame(db, of_version(USAGE, version))


def failing_verdicts(db: sqlite3.Connection) -> pd.DataFrame:
    """The failing verdicts of every failed trial; ``raised`` when the verifier raised instead of judging."""
    return frame(db, FAILING_VERDICTS, {"raised": ERROR_PREFIX})


def verdicts_of_kind(db: sqlite3.Connection, kind: str, version: int) -> pd.DataFrame:
    """The latest grading's verdicts of one verifier kind: trial id, passed, reason."""
    return frame(db, of_version(VERDICTS_OF_KIND, version), {"kind": kind})


def failed_calls(db: sqlite3.Connection) -> pd.DataFrame:
    """The failed calls of every failed trial: step, tool, policy denial, error code, and whether a later call of
    the same tool succeeded (``retried``)."""
    return frame(db, FAILED_CALLS)
