// @ts-check
// Finding one's way in a long trial: the steps a verdict judged, the rows where something happens (a change, a
// verdict, a fault, a write), the next or previous of them from a row, and the rows a filter by tool or by verdict
// leaves. Rows are the player's (aligned) rows, always in ascending order. No DOM.

/** @import { CompactVerdict, Step, Trial } from "../types" */
/** @import { Side } from "./align.js" */

/** The tool that ends a trial with the agent's answer. */
export const FINISH = "finish";

/**
 * The step of a trial's finish call (its last one), or null if it never called it.
 * @param {Trial} traj
 */
export function finishStep(traj) {
  for (let i = traj.steps.length - 1; i >= 0; i--) if (traj.steps[i].tool === FINISH) return traj.steps[i].step;
  return null;
}

/**
 * The steps a verdict judged: those it points at; an answer verdict pointing at none judged the answer, given with
 * the finish call (`finish`, null: none).
 * @param {CompactVerdict} v
 * @param {number | null} finish
 * @returns {readonly number[]}
 */
export const judgedSteps = (v, finish) => (v.steps.length || v.category !== "answer" || finish == null ? v.steps : [finish]);

/**
 * Whether a verdict judged the agent's answer rather than calls (an answer verdict pointing at no step).
 * @param {CompactVerdict} v
 */
export const judgesAnswer = (v) => v.category === "answer" && !v.steps.length;

/** @typedef {"change" | "verdict" | "fault" | "write"} JumpKind */

/**
 * What the player jumps between: the key that jumps to the next (Shift: the previous), its name, and what it is.
 * @type {readonly { kind: JumpKind, key: string, label: string, title: string }[]}
 */
export const JUMPS = [
  { kind: "change", key: "c", label: "change", title: "a step that changed the patient record" },
  { kind: "verdict", key: "v", label: "verdict", title: "a step a verdict points at (the finish call for the answer)" },
  { kind: "fault", key: "f", label: "fault", title: "a step with an injected fault, an error or a call denied by policy" },
  { kind: "write", key: "w", label: "write", title: "a call of a tool that writes to the record (done or refused)" },
];

/** @type {Record<JumpKind, (step: Step, sd: Side) => boolean>} */
const IS = {
  change: (step) => step.changes.length > 0,
  verdict: (step, sd) => sd.marks.has(step.step),
  fault: (step) => !!step.fault || !!step.denied || !step.ok,
  write: (step) => step.kind === "write",
};

/**
 * Whether a row holds, on either side, a step of this kind.
 * @param {readonly Side[]} sides
 * @param {number} row
 * @param {JumpKind} kind
 */
export const rowIs = (sides, row, kind) => sides.some((sd) => {
  const step = sd.step(row);
  return !!step && IS[kind](step, sd);
});

/**
 * What a filter keeps: `tool` a tool's name ("" any); `verdict` "" any step, "any" a step some verdict judged,
 * "failed" one a verdict that did not pass judged, `verdict:ID` one the verdict ID judged.
 * @typedef {{ tool: string, verdict: string }} Filter
 */

/** The filter that keeps every step. */
export const NO_FILTER = Object.freeze({ tool: "", verdict: "" });

/**
 * @param {Filter} filter
 */
export const filtering = (filter) => !!(filter.tool || filter.verdict);

/**
 * Whether a step is judged as the filter's verdict asks.
 * @param {CompactVerdict[]} judged the verdicts that judged it
 * @param {string} verdict
 */
function judgedAs(judged, verdict) {
  if (!verdict) return true;
  if (verdict === "any") return judged.length > 0;
  if (verdict === "failed") return judged.some((v) => !v.passed);
  return judged.some((v) => `verdict:${v.id}` === verdict);
}

/**
 * The rows of `count` a filter keeps: those where a step on either side has the tool and is judged as asked.
 * @param {readonly Side[]} sides
 * @param {number} count
 * @param {Filter} filter
 * @returns {number[]}
 */
export function filterRows(sides, count, filter) {
  const rows = [];
  for (let row = 0; row < count; row++) {
    const kept = !filtering(filter) || sides.some((sd) => {
      const step = sd.step(row);
      return !!step && (!filter.tool || step.tool === filter.tool) && judgedAs(sd.marks.get(step.step) || [], filter.verdict);
    });
    if (kept) rows.push(row);
  }
  return rows;
}

/**
 * The rows among `rows` where a step of each kind is.
 * @param {readonly Side[]} sides
 * @param {readonly number[]} rows
 * @returns {Record<JumpKind, number[]>}
 */
export function jumpRows(sides, rows) {
  /** @type {Record<JumpKind, number[]>} */
  const out = { change: [], verdict: [], fault: [], write: [] };
  for (const { kind } of JUMPS) out[kind] = rows.filter((row) => rowIs(sides, row, kind));
  return out;
}

/**
 * What the filter offers: every tool called (with how many calls), and every verdict that judged a step (failed
 * ones first), across the sides.
 * @param {readonly Side[]} sides
 */
export function filterChoices(sides) {
  /** @type {Map<string, number>} */
  const tools = new Map();
  /** @type {Map<string, CompactVerdict>} */
  const verdicts = new Map();
  for (const sd of sides) {
    for (const step of sd.traj.steps) tools.set(step.tool, (tools.get(step.tool) || 0) + 1);
    for (const vs of sd.marks.values()) for (const v of vs) if (!verdicts.has(v.id) || !v.passed) verdicts.set(v.id, v);
  }
  return {
    tools: [...tools].sort((x, y) => x[0].localeCompare(y[0])),
    verdicts: [...verdicts.values()].sort((x, y) => Number(x.passed) - Number(y.passed) || x.id.localeCompare(y.id)),
  };
}

/**
 * Where `row` is or would go in the ascending `rows`: the index of the first row at or after it.
 * @param {readonly number[]} rows
 * @param {number} row
 */
export function positionOf(rows, row) {
  let lo = 0, hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (rows[mid] < row) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The first of the ascending `rows` after `row` (`dir` 1) or the last before it (-1); null if there is none.
 * @param {readonly number[]} rows
 * @param {number} row
 * @param {1 | -1} dir
 * @returns {number | null}
 */
export function nextIn(rows, row, dir) {
  const at = positionOf(rows, row);
  const i = dir > 0 ? (rows[at] === row ? at + 1 : at) : at - 1;
  return i >= 0 && i < rows.length ? rows[i] : null;
}

/**
 * Where to stand once the rows shown are `rows`: `row` if it is one of them, else the next one, else the last.
 * @param {readonly number[]} rows
 * @param {number} row
 */
export const settle = (rows, row) => (rows.length ? rows[Math.min(positionOf(rows, row), rows.length - 1)] : row);

/**
 * How many steps (of how many) the list shows, in words.
 * @param {number} shown
 * @param {number} total
 * @param {boolean} aligned rows of two trials side by side
 */
export function showing(shown, total, aligned) {
  const noun = aligned ? "row" : "step";
  if (shown === total) return `showing all ${total} ${noun}${total === 1 ? "" : "s"}`;
  return `showing ${shown} of ${total} ${noun}${total === 1 ? "" : "s"}`;
}
