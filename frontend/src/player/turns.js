// @ts-check
// Model turns, the agent's own account: what its model said and asked for, shown with the calls they led to.

/** @import { CompactCall, CompactTurn, Step } from "../types" */
/** @import { Side } from "../logic/align.js" */
import { h } from "../common.js";
import { join } from "../logic/describe.js";
import { count, ms, tokens, usd } from "../logic/format.js";
import { jsonTree } from "./json.js";
import { ACCOUNT, stepLink } from "./marks.js";

/** @typedef {(step: number) => void} Jump */

/**
 * The model's words: a JSON object (a final answer, say) as a folded tree, anything else as the text it wrote.
 * @param {CompactTurn} turn
 */
function words(turn) {
  let data = null;
  if (turn.text.trimStart().startsWith("{")) {
    try { data = JSON.parse(turn.text); } catch (err) { /* cut short or not JSON: shown as text */ }
  }
  return h("div", { class: "mf-said" }, data && typeof data === "object" ? jsonTree(data, 1) : turn.text,
    turn.text_cut ? h("span", { class: "mf-muted" }, ` \u2026 ${count(turn.text_cut)} more characters (in the run store)`)
      : null);
}

const UNSENT = "the harness never ran it: its arguments were not a JSON object, or the trial ended first";

/**
 * A call the model asked for: its name and arguments as written, and the step it became (or that it never did).
 * @param {CompactCall} c
 * @param {Jump} onJump
 */
const asked = (c, onJump) => h("li", {}, h("span", { class: "mf-muted" }, "asked for "), h("span", { class: "mf-tool" }, c.name),
  " ", h("code", { class: "mf-call-args" }, c.arguments),
  c.step == null ? h("span", { class: "mf-chip mf-chip-denied", title: UNSENT }, "\u2717 never reached the tools") : stepLink(c.step, onJump));

/**
 * @param {CompactTurn} turn
 * @param {Jump} onJump
 */
function turnBlock(turn, onJump) {
  const meta = join([turn.finish_reason ? `finish: ${turn.finish_reason}` : "", tokens([turn]), usd(turn.cost),
    ms(turn.latency_ms), turn.retries.length ? `tried ${turn.retries.length + 1} times` : ""], " \u00b7 ");
  return h("div", { class: "mf-turn", "data-turn": turn.turn, title: ACCOUNT },
    h("div", { class: "mf-turn-head" }, h("b", {}, `Model turn ${turn.turn}`),
      h("span", { class: "mf-turn-who" }, "reported by the agent"), h("span", { class: "mf-turn-meta" }, meta)),
    turn.text ? words(turn) : null,
    turn.refusal ? h("div", { class: "mf-policy mf-denied" }, h("b", {}, "The model refused: "), turn.refusal) : null,
    turn.calls.length ? h("ul", { class: "mf-asked" }, turn.calls.map((c) => asked(c, onJump))) : null,
    turn.retries.map((why) => h("div", { class: "mf-muted" }, `tried again after: ${why}`)),
    turn.error ? h("div", { class: "mf-policy mf-denied" }, h("b", {}, "The turn failed: "), turn.error) : null);
}

/**
 * The model turns shown with a step (in a trial without a call, all of them): [before it, after it].
 * @param {Side} sd
 * @param {Step | null} step
 * @param {Jump} onJump
 */
export function turnsAround(sd, step, onJump) {
  const at = step ? step.step : 0, turns = sd.spoke.get(at) || [];
  const before = turns.filter((t) => t.after_step < at), after = turns.filter((t) => t.after_step >= at);
  const from = step && !before.length ? sd.traj.turns.find((t) => t.calls.some((c) => c.step === at)) : null;
  return [
    before.length ? [h("h4", {}, "Before this call, the model said"), before.map((t) => turnBlock(t, onJump))]
      : from ? h("p", { class: "mf-muted" }, `Asked for in model turn ${from.turn} (reported by the agent), shown at `,
        stepLink(/** @type {number} */ (from.calls.find((c) => c.step != null)?.step), onJump)) : null,
    after.length ? [h("h4", {}, step ? "After this call, the model said" : "The model said"),
      after.map((t) => turnBlock(t, onJump))] : null,
  ];
}
