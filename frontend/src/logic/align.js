// @ts-check
// Two trials side by side: their steps aligned on the longest common run of tool names, with gaps where the two
// differ, and each side's lookups by row. No DOM.

/** @import { CompactTurn, CompactVerdict, Step, Trial } from "../types" */
import { finishStep, judgedSteps } from "./navigate.js";

/**
 * A trial beside its aligned rows: `idx[row]` its step's index there (-1: a gap), `reached[row]` its last step at or
 * before that row (0: none yet), `marks` step -> the verdicts that judged it (an answer verdict: the finish call),
 * `spoke` step -> the model turns shown with it.
 * @typedef {{ traj: Trial, idx: number[], reached: number[], marks: Map<number, CompactVerdict[]>,
 *   spoke: Map<number, CompactTurn[]>, step: (row: number) => Step | null }} Side
 */

/**
 * Rows of [index in a, index in b] (-1: no step on that side): the longest common subsequence of tool names matched,
 * and where they differ a's step before b's. Without b, a's steps alone.
 * @param {readonly { tool: string }[]} a
 * @param {readonly { tool: string }[] | null | undefined} b
 * @returns {[number, number][]}
 */
export function align(a, b) {
  if (!b) return a.map((_, i) => [i, -1]);
  const n = a.length, m = b.length, w = m + 1;
  const lcs = new Uint16Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i * w + j] = a[i].tool === b[j].tool ? lcs[(i + 1) * w + j + 1] + 1 : Math.max(lcs[(i + 1) * w + j], lcs[i * w + j + 1]);
  /** @type {[number, number][]} */
  const rows = [];
  let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i].tool === b[j].tool) rows.push([i++, j++]);
    else if (j >= m || (i < n && lcs[(i + 1) * w + j] >= lcs[i * w + j + 1])) rows.push([i++, -1]);
    else rows.push([-1, j++]);
  }
  return rows;
}

/**
 * Append `value` to the list at `key`.
 * @template K, V
 * @param {Map<K, V[]>} map
 * @param {K} key
 * @param {V} value
 */
function add(map, key, value) {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/**
 * One side of the aligned rows: `which` 0 for a, 1 for b.
 * @param {Trial} traj
 * @param {readonly [number, number][]} rows
 * @param {0 | 1} which
 * @returns {Side}
 */
export function side(traj, rows, which) {
  const idx = rows.map((r) => r[which]);
  const reached = []; // the last step of this trial at or before each row
  let last = 0;
  for (const i of idx) {
    if (i >= 0) last = traj.steps[i].step;
    reached.push(last);
  }
  /** @type {Map<number, CompactVerdict[]>} */
  const marks = new Map();
  const finish = finishStep(traj);
  for (const v of traj.verdicts) for (const s of judgedSteps(v, finish)) add(marks, s, v);
  // step -> the model turns shown with it: those reported just before it, and after the last step those after it
  /** @type {Map<number, CompactTurn[]>} */
  const spoke = new Map();
  const lastStep = traj.steps.length ? traj.steps[traj.steps.length - 1].step : 0;
  for (const t of traj.turns) add(spoke, Math.min(t.after_step + 1, lastStep), t);
  return { traj, idx, reached, marks, spoke, step: (row) => (idx[row] >= 0 ? traj.steps[idx[row]] : null) };
}
