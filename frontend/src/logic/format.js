// @ts-check
// Numbers, verdicts and JSON objects as the widgets write them. No DOM.

/** @import { CompactTurn, CompactVerdict, Trial } from "../types" */

/** The verdict categories, in the order the player lists them (safety first). */
export const CATEGORIES = ["safety", "success", "answer", "trace", "budget"];

/**
 * A verdict's mark, word and style: passed, raised an error, or failed.
 * @param {CompactVerdict} v
 * @returns {[string, string, string]}
 */
export const verdictMark = (v) => (v.passed ? ["\u2713", "PASS", "pass"] : v.error ? ["!", "ERROR", "error"] : ["\u2717", "FAIL", "fail"]);

/**
 * The hard verdicts a trial failed, safety first.
 * @param {Trial} t
 */
export const failingHard = (t) => t.verdicts.filter((v) => !v.passed && v.severity === "hard")
  .sort((x, y) => CATEGORIES.indexOf(x.category) - CATEGORIES.indexOf(y.category));

/** @param {number} n */
export const count = (n) => n.toLocaleString("en-US");
/** @param {number} x */
export const usd = (x) => `$${x.toFixed(4)}`;
/** @param {number} x */
export const ms = (x) => `${x < 10 ? x.toFixed(1) : Math.round(x)} ms`;

/**
 * The tokens of model turns, summed: in, out and cached.
 * @param {readonly CompactTurn[]} turns
 */
export const tokens = (turns) => {
  /** @param {"prompt_tokens" | "completion_tokens" | "cached_tokens"} key */
  const sum = (key) => count(turns.reduce((total, t) => total + t[key], 0));
  return `${sum("prompt_tokens")} in / ${sum("completion_tokens")} out / ${sum("cached_tokens")} cached tokens`;
};

/**
 * `k` of `n` as a whole percentage; a dash for none of none.
 * @param {number} k
 * @param {number} n
 */
export const pct = (k, n) => (n ? `${Math.round((100 * k) / n)}%` : "\u2014");

/**
 * A closed object's one-line preview: its first scalar fields.
 * @param {object} obj
 */
export function preview(obj) {
  const shown = Object.entries(obj).filter(([, v]) => v === null || typeof v !== "object").slice(0, 4)
    .map(([k, v]) => `${k}: ${typeof v === "string" && v.length > 24 ? `${JSON.stringify(v.slice(0, 24)).slice(0, -1)}\u2026"` : JSON.stringify(v)}`);
  const rest = Object.keys(obj).length - shown.length;
  return shown.length ? `${shown.join(", ")}${rest ? `, +${rest}` : ""}` : `${rest} field${rest > 1 ? "s" : ""}`;
}
