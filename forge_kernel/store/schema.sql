-- MedAgent Forge run store, schema version 6 (stored in meta.schema_version).
-- One SQLite file (WAL) per run directory: RUN_DIR/run.sqlite. Self-contained: it keeps the files of every package
-- it used (both halves, fixtures, custom verifier kinds) by content hash, so a copy of the file alone can be
-- replayed, regraded and reported on elsewhere.
-- Each trial, with its events, verdicts and scores, is written in one transaction.
-- JSON columns hold compact JSON text.
-- Version 1 lacked package_files, snapshots, events.started_ms and verdicts.error, version 2 trials.attempts,
-- version 3 turns, version 4 trials.writes and call_data: it kept each call's arguments, result and changes in
-- columns of events (args, result, changes, after kind, ok and latency_ms), with an index events_calls;
-- version 5 kept verdicts in a table, each row with its kind, category, severity and reason (verdict_texts since);
-- opening an older store for writing migrates it (a version 1 store's snapshots come from the package folders it
-- names, where they still match). Read-only, an older store is read as it is.

CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,           -- schema_version, run_id
  value TEXT NOT NULL
);

-- The run manifest: code commit and dirty flag, agents and versions, seeds, host, start and end.
CREATE TABLE IF NOT EXISTS manifest (
  id         INTEGER PRIMARY KEY CHECK (id = 1),
  run_id     TEXT NOT NULL,
  spec       TEXT NOT NULL,          -- JSON: suite paths, agents, trials per task, run seed
  json       TEXT NOT NULL,          -- JSON: the full manifest
  started_at TEXT NOT NULL,
  ended_at   TEXT                    -- NULL while running or after a crash
);

-- The packages the run used, with their content hashes.
CREATE TABLE IF NOT EXISTS packages (
  task_id        TEXT PRIMARY KEY,
  version        TEXT NOT NULL,
  suite          TEXT NOT NULL,
  category       TEXT NOT NULL,
  purpose        TEXT NOT NULL,      -- capability | regression
  risk           TEXT NOT NULL,
  slices         TEXT NOT NULL,      -- JSON object; site and period default to the EHR image and the clock's month
  path           TEXT NOT NULL,      -- the package folder, absolute, where the run found it
  package_hash   TEXT NOT NULL,      -- both halves and fixtures
  public_hash    TEXT NOT NULL,
  hidden_version TEXT NOT NULL,
  hidden_hash    TEXT NOT NULL
);

-- One row per (task, agent, trial index): a trial is never stored twice.
CREATE TABLE IF NOT EXISTS trials (
  trial_id      INTEGER PRIMARY KEY,
  task_id       TEXT NOT NULL REFERENCES packages(task_id),
  agent         TEXT NOT NULL,
  agent_version TEXT NOT NULL,
  trial         INTEGER NOT NULL,    -- 0-based trial index
  seed          INTEGER NOT NULL,
  status        TEXT NOT NULL,       -- completed | agent_error | timeout | budget_exceeded
  reason        TEXT,                -- why a trial ended abnormally
  answer        TEXT NOT NULL,
  output        TEXT NOT NULL,       -- JSON
  confidence    REAL,
  self_status   TEXT NOT NULL,       -- what the agent reported: completed | escalated | gave_up | error
  n_calls       INTEGER NOT NULL,
  duration_s    REAL NOT NULL,       -- wall time of the agent run, tools included
  queued_s      REAL NOT NULL,       -- time waiting for a concurrency slot before the trial started
  cost          REAL NOT NULL,
  finished_at   TEXT NOT NULL,
  attempts      INTEGER NOT NULL DEFAULT 1,  -- more than 1: run again after a stall of a shared worker
  writes        TEXT NOT NULL,       -- a short hash of what the trial wrote: its calls' changes (see call_data)
  UNIQUE (task_id, agent, trial)
);

-- Every tool call of a trial, in order (its arguments, result and changes are in call_data).
CREATE TABLE IF NOT EXISTS events (
  trial_id   INTEGER NOT NULL REFERENCES trials(trial_id),
  step       INTEGER NOT NULL,
  tool       TEXT NOT NULL,
  kind       TEXT NOT NULL,
  ok         INTEGER NOT NULL,
  error      TEXT,                   -- JSON {code, message}
  denied     TEXT,                   -- policy reason when refused
  flags      TEXT NOT NULL,          -- JSON list
  fault      TEXT,
  latency_ms REAL NOT NULL,
  started_ms REAL,                   -- when the call began, in ms after the trial began (NULL before version 2)
  PRIMARY KEY (trial_id, step)
) WITHOUT ROWID;

-- What each call of a trial was given and gave back, compressed together (zlib): one line per call in step order,
-- its arguments, result and changes (JSON-Patch operations with replaced values) as compact JSON, separated by
-- tabs (JSON text holds no raw tab or newline). A trial's calls share most of their keys and codes: together they
-- take about a third of their text, a call alone about two thirds.
CREATE TABLE IF NOT EXISTS call_data (
  trial_id INTEGER PRIMARY KEY REFERENCES trials(trial_id),
  data     BLOB NOT NULL
);

-- The model turns an agent reported (the llm agent does), each after the calls recorded before it: the agent's own
-- account of what its model said and asked for, and what it used. Shown beside the calls; no verifier reads it.
CREATE TABLE IF NOT EXISTS turns (
  trial_id          INTEGER NOT NULL REFERENCES trials(trial_id),
  turn              INTEGER NOT NULL,  -- 1-based
  after_step        INTEGER NOT NULL,  -- the calls recorded before it
  text              TEXT NOT NULL,
  tool_calls        TEXT NOT NULL,     -- JSON list of {id, name, arguments} as the model wrote them
  finish_reason     TEXT NOT NULL,
  refusal           TEXT,
  prompt_tokens     INTEGER NOT NULL,
  completion_tokens INTEGER NOT NULL,
  cached_tokens     INTEGER NOT NULL,
  cost              REAL NOT NULL,     -- US dollars, by the agent's price table
  latency_ms        REAL NOT NULL,     -- the model's time, retries included
  retries           TEXT NOT NULL,     -- JSON list: why earlier tries failed
  error             TEXT,              -- why the turn failed for good
  PRIMARY KEY (trial_id, turn)
) WITHOUT ROWID;

-- A grading: the original one of the run (1) and one per regrade.
CREATE TABLE IF NOT EXISTS gradings (
  grading_id INTEGER PRIMARY KEY,
  kind       TEXT NOT NULL,          -- run | regrade
  created_at TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS scores (
  trial_id       INTEGER NOT NULL REFERENCES trials(trial_id),
  grading_id     INTEGER NOT NULL REFERENCES gradings(grading_id),
  passed         INTEGER NOT NULL,
  accuracy       REAL NOT NULL,
  completion     INTEGER NOT NULL,
  safety_gate    TEXT NOT NULL,      -- passed | failed | n/a
  missing        TEXT NOT NULL,      -- JSON list of expected tools not called
  extra          TEXT NOT NULL,      -- JSON list of called tools not expected
  hidden_version TEXT NOT NULL,
  hidden_hash    TEXT NOT NULL,
  PRIMARY KEY (trial_id, grading_id)
) WITHOUT ROWID;

-- What verdicts say, stored once: a verifier's kind, category and severity with the reason it gave. The trials of
-- a task mostly say the same things (one verdict in seven says something new in a run of one trial a task and
-- agent on the bundled suites, one in fifty at three trials and six agents). A text's id is a hash of it
-- (``text_id`` in run_store.py), so that no second index is needed to find it when it is said again.
CREATE TABLE IF NOT EXISTS verdict_texts (
  text_id  INTEGER PRIMARY KEY,      -- the first 63 bits of the BLAKE2b hash of the other columns
  kind     TEXT NOT NULL,
  category TEXT NOT NULL,            -- success | safety | budget | trace | answer
  severity TEXT NOT NULL,            -- hard | soft
  reason   TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS verdict_rows (
  trial_id    INTEGER NOT NULL REFERENCES trials(trial_id),
  grading_id  INTEGER NOT NULL REFERENCES gradings(grading_id),
  verifier_id TEXT NOT NULL,
  text_id     INTEGER NOT NULL REFERENCES verdict_texts(text_id),
  passed      INTEGER NOT NULL,
  steps       TEXT NOT NULL,         -- JSON list of step numbers
  error       INTEGER NOT NULL DEFAULT 0, -- the verifier raised (reason says what); never passed
  PRIMARY KEY (trial_id, grading_id, verifier_id)
) WITHOUT ROWID;

-- Every verdict, as it is read: a table of these columns before version 6.
CREATE VIEW IF NOT EXISTS verdicts AS
SELECT r.trial_id, r.grading_id, r.verifier_id, x.kind, x.category, x.severity, r.passed, x.reason, r.steps, r.error
FROM verdict_rows r JOIN verdict_texts x USING (text_id);

-- File contents by hash: package.yaml texts, fixtures, hidden halves, custom verifier kinds.
CREATE TABLE IF NOT EXISTS snapshots (
  hash    TEXT PRIMARY KEY,          -- sha256:<hex> of content
  content BLOB NOT NULL
) WITHOUT ROWID;

-- Which files make up each package the run used.
CREATE TABLE IF NOT EXISTS package_files (
  task_id TEXT NOT NULL REFERENCES packages(task_id),
  role    TEXT NOT NULL,             -- public (package.yaml, ../suite.yaml and fixtures, by name in the package folder) | hidden |
                                     -- hidden-defaults (the suite's) | plugin (verifiers/plugins/<kind>.py)
  name    TEXT NOT NULL,
  hash    TEXT NOT NULL REFERENCES snapshots(hash),
  PRIMARY KEY (task_id, role, name)
) WITHOUT ROWID;
