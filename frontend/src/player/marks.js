// @ts-check
// Small marks the player's panels share: a badge, a link to a step, and the words for the agent's own account.

import { h } from "../common.js";

/** What a model turn is, wherever one is shown. */
export const ACCOUNT = "reported by the agent: its own account of what its model said and asked for, never graded";

/**
 * @param {string} cls
 * @param {string} label
 * @param {string} title
 */
export const badge = (cls, label, title) => h("span", { class: `mf-badge mf-${cls}`, title }, label);

/**
 * A link that jumps to a step.
 * @param {number} step
 * @param {(step: number) => void} onJump
 */
export const stepLink = (step, onJump) =>
  h("button", { class: "mf-steplink", type: "button", "data-step": step, onclick: () => onJump(step) }, `step ${step} \u2192`);
