// @ts-check
// Small marks the player's panels share: a badge, a link to a step or to the answer, and the words for the agent's
// own account.

/** @import { CompactVerdict } from "../types" */
import { h } from "../common.js";
import { judgesAnswer } from "../logic/navigate.js";

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

/**
 * A link that opens the agent's answer (its finish call and what it returned).
 * @param {() => void} onAnswer
 */
export const answerLink = (onAnswer) =>
  h("button", { class: "mf-steplink mf-answerlink", type: "button", "data-answer": "", title: "open the agent's final answer",
    onclick: onAnswer }, "the answer \u2192");

/**
 * Where a verdict points: links to the (first `most`) steps it judged, to the answer for an answer verdict, or a word
 * that it judged the trial as a whole.
 * @param {CompactVerdict} v
 * @param {(step: number) => void} onJump
 * @param {() => void} onAnswer
 * @param {number} [most]
 */
export function verdictLinks(v, onJump, onAnswer, most = Infinity) {
  if (judgesAnswer(v)) return answerLink(onAnswer);
  if (v.steps.length) return v.steps.slice(0, most).map((s) => stepLink(s, onJump));
  return h("span", { class: "mf-whole", title: "this verdict judged the trial as a whole, not one step" }, "whole trial");
}
