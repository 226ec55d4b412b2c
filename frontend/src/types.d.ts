// What the widgets receive from the kernel. The trial is generated from its JSON Schema
// (generated/compact-trajectory.d.ts); the other widgets' state is written here from the Python that sets it
// (failures.py, dashboard.py). No DOM types: the modules in logic/ read this file too.
import type { CompactTrajectory, Event } from "./generated/compact-trajectory";

export type { CompactCall, CompactResource, CompactTurn, CompactVerdict } from "./generated/compact-trajectory";

/** A trial as the player receives it: the compact trajectory with its seed as text (a JavaScript number holds only
 * 53 bits: _frontend.payload), and what the schema leaves open typed: its scores and its steps' changes. */
export type Trial = Omit<CompactTrajectory, "seed" | "scores" | "steps"> & { seed: string; scores: Scores; steps: Step[] };

/** A call as the player receives it: an Event with its changes typed. */
export type Step = Omit<Event, "changes"> & { changes: PatchOp[] };

/** A trial's scores (forge_kernel/spec/grading.py's Scores; the compact form has them as any object). */
export interface Scores {
  passed: boolean;
  accuracy: number;
  completion: number;
  safety_gate: string;
  missing: string[];
  extra: string[];
}

/** A JSON-Patch operation a call made to the record (a step's `changes`), with the value it replaced. */
export interface PatchOp {
  op: string;
  path: string;
  value?: unknown;
  replaced?: unknown;
}

/** What anywidget hands a module's render() as `model`, as far as the widgets use it; a static page's shim answers
 * only get, on and off (the player uses no more). */
export interface Model<S> {
  get<K extends keyof S & string>(key: K): S[K];
  set<K extends keyof S & string>(key: K, value: S[K]): void;
  save_changes(): void;
  on(event: string, handler: () => void): void;
  off(event: string, handler: () => void): void;
  send(message: object): void;
}

/** The replay player's synced state (player.py): JSON in a binary buffer from the kernel, the object in a static
 * page. */
export interface PlayerState {
  trajectory: DataView | Trial;
  other: DataView | Trial | null;
}

/** A failing verifier as the failure browser lists it (failures.py's verifier_list). */
export interface FailingVerifier {
  id: string;
  category: string;
  severity: string;
}

/** A failed trial, a row of the failure browser (failures.py's row_json). */
export interface FailureRow {
  trial_id: number;
  suite: string;
  dimension: string;
  task_id: string;
  task_version: string;
  risk: string;
  agent: string;
  trial: number;
  status: string;
  failing: FailingVerifier[];
  error_class: string;
  triage: string;
  critical: boolean;
  /** Trials of this task that this agent passed, of how many: "k of n". */
  passed: number;
  trials: number;
  passes: string;
  stability: string;
  /** A passing trial of the same task and agent (the task is unstable), or null. */
  passing_trial_id: number | null;
}

/** A failing verdict of the opened trial with its triage decision (FailureBrowser._show_verdicts). */
export interface TriageVerdict extends FailingVerifier {
  reason: string;
  decision: string;
  comment: string;
  reviewer: string;
  every_agent: boolean;
}

/** The outcome of the last triage edit; empty before any. */
export interface TriageMessage {
  kind?: "saved" | "error";
  text?: string;
  verifier?: string | null;
}

export type SortDirection = "asc" | "desc";

/** The failure table's synced state (failures.py's FailureTable). */
export interface FailuresState {
  banner: string;
  rows: FailureRow[];
  matching: number;
  total: number;
  options: Record<string, string[]>;
  filters: Record<string, string>;
  sort: [string, SortDirection];
  selected: number | null;
  /** The passing trial shown beside the opened one, or empty. */
  beside: { trial_id?: number; trial?: number };
  verdicts: TriageVerdict[];
  triage_file: string;
  reviewer: string;
  message: TriageMessage;
}

/** A check of the release gate (dashboard.py's gate_state). */
export interface GateCheck {
  name: string;
  level: string;
  status: string;
  detail: string;
  note: string;
}

/** The dashboard's selection: a cell clicked (dimension "" for a whole agent), or empty. */
export interface Selection {
  agent?: string;
  dimension?: string;
  /** A task's row clicked: its failures, its first failed trial opened. */
  task?: string;
}

/** One agent on one task in the dashboard's task table (dashboard.py's task_rows), or null: it did not run it. */
export type TaskCell = { agent: string; passed: number; trials: number; unstable: boolean } | null;

/** The run dashboard's synced state (dashboard.py's RunDashboard). */
export interface DashboardState {
  banner: string;
  heading: { run_id: string; trials: number; passed: number; agents: string[]; tasks: number };
  /** Chart name -> its Vega-Lite spec; empty until the kernel has made them; `error` if it could not. */
  charts: Record<string, object | string>;
  gate: {
    baseline: string; candidate: string; green: boolean; summary: string; checks: GateCheck[];
    /** Task success, retrieval and citations, candidate against baseline: [component, figure, baseline, candidate, change]. */
    components: { headline: string; rows: string[][] };
  } | null;
  usage: { columns: string[]; rows: string[][] };
  tasks: { agents: string[]; rows: { task_id: string; dimension: string; unstable: boolean; cells: TaskCell[] }[] };
  selection: Selection;
}
