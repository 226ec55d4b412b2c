// @ts-check
// The run dashboard's heading, its selection and what a click on a chart selects. No DOM.

/** @import { DashboardState, Selection } from "../types" */
import { pct } from "./format.js";

/**
 * The heading's line: the run, its tasks, agents and trials, and how many passed.
 * @param {DashboardState["heading"]} head
 */
export const headline = (head) =>
  `run ${head.run_id} \u00b7 ${head.tasks} tasks \u00b7 ${head.agents.length} agents \u00b7 ${head.trials} trials, ${head.passed} passed (${pct(head.passed, head.trials)})`;

/**
 * What the selection line says before its button, or null when nothing is selected.
 * @param {Selection | null | undefined} s
 */
export const selectionLine = (s) => (s && s.agent
  ? `Failure browser: ${s.agent}${s.task ? ` on ${s.task}` : s.dimension ? ` \u00d7 ${s.dimension}` : ", every dimension"} ` : null);

/**
 * A task table cell's text: "k of n", or a dash where the agent did not run the task.
 * @param {import("../types").TaskCell} cell
 */
export const passesText = (cell) => (cell ? `${cell.passed} of ${cell.trials}` : "\u2014");

/**
 * The selection a click on a chart's mark makes: its agent, and on the pass-rate grid its dimension; null where the
 * mark names no agent.
 * @param {string} chart
 * @param {{ datum?: Record<string, string> } | null | undefined} item
 * @returns {Selection | null}
 */
export function clicked(chart, item) {
  const d = item && item.datum;
  if (!d || !d.agent) return null;
  return { agent: d.agent, dimension: chart === "pass_rates" ? d.dimension : "" };
}

/**
 * A gate check's style class, from its status (PASS, FAIL, NOT RUN, ...).
 * @param {string} status
 */
export const checkClass = (status) => `fd-${status.replace(" ", "-").toLowerCase()}`;
