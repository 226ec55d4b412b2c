// @ts-check
// The player's panels: the task, each trial's header, the call at the current row, the patient record's changes,
// the verdicts, and the scores with why.

/** @import { Step, Trial } from "../types" */
/** @import { Side } from "../logic/align.js" */
/** @import { FieldChange } from "../logic/state.js" */
/** @import { Jump } from "./turns.js" */
import { h } from "../common.js";
import { describe, describeItem, isItem, itemRef, num } from "../logic/describe.js";
import { CATEGORIES, failingHard, ms, tokens, usd, verdictMark } from "../logic/format.js";
import { FINISH } from "../logic/navigate.js";
import { diffState } from "../logic/state.js";
import { jsonTree, scalar } from "./json.js";
import { ACCOUNT, badge, verdictLinks } from "./marks.js";
import { turnsAround } from "./turns.js";

const SHOW_RESOURCES = 30; // resource changes listed before "show all"
/** @type {Record<string, string>} */
const POLICY = {
  cross_patient: "a call about another patient than the task's",
  unauthorized_write: "a write of a resource type the policy does not allow",
  precedence: "a required check had not happened yet",
};
const STATUS = { added: ["+", "added"], changed: ["~", "changed"], removed: ["\u2212", "removed"] };

/**
 * What the diff panel shows: changes since the start or made by this step only, the resources shown whole, and
 * whether every changed resource is listed.
 * @typedef {{ mode: string, whole: Set<string>, allResources: boolean }} DiffView
 */

/**
 * @param {Trial} t
 * @param {string} label
 * @param {Jump} onJump
 * @param {() => void} onAnswer
 */
export function headerPanel(t, label, onJump, onAnswer) {
  const s = t.scores;
  const failing = failingHard(t);
  return h("div", { class: "mf-head" },
    h("div", { class: "mf-head-line" },
      label ? h("span", { class: "mf-side-label" }, label) : null,
      t.passed ? badge("pass", "\u2713 PASS", "every hard verdict passed") : badge("fail", "\u2717 FAIL", "a hard verdict failed"),
      h("span", { class: "mf-agent" }, t.agent), h("span", { class: "mf-muted" }, ` ${t.agent_version}`),
      h("span", {}, ` \u00b7 trial ${t.trial}`)),
    h("div", { class: "mf-facts" },
      h("span", { title: "how the agent ran" }, `ran: ${t.isolation}`),
      h("span", {}, `status: ${t.status}${t.reason ? ` (${t.reason})` : ""}`),
      h("span", {}, `${t.steps.length} call${t.steps.length === 1 ? "" : "s"}, ${num(t.duration_ms)} ms`),
      t.turns.length ? h("span", { class: "mf-model-use", title: ACCOUNT },
        `model (reported by the agent): ${t.turns.length} turn${t.turns.length === 1 ? "" : "s"} \u00b7 ${tokens(t.turns)}`
        + ` \u00b7 ${ms(t.turns.reduce((total, x) => total + x.latency_ms, 0))}`) : null,
      t.turns.length || t.cost ? h("span", { title: "what the trial was charged, its model turns included" }, `cost ${usd(t.cost)}`)
        : null,
      t.attempts > 1 ? h("span", { class: "mf-again", title: "a stall of the worker it shared spoiled an earlier "
        + "attempt before it had acted; the steps and time shown are the last attempt's, the cost counts every one's" },
        `run ${t.attempts} times`) : null,
      h("span", { title: "tool-call accuracy \u00b7 task completion \u00b7 safety gate" },
        `accuracy ${s.accuracy.toFixed(2)} \u00b7 completion ${s.completion} \u00b7 safety gate ${s.safety_gate}`),
      h("span", { class: "mf-muted" }, `seed ${t.seed} \u00b7 run ${t.run_id} \u00b7 hidden half ${t.hidden_version}`)),
    failing.length ? h("div", { class: "mf-why" }, h("b", {}, "Failed:"), failing.map((v) => h("span", {}, `\u2717 ${v.id} (${v.category})`,
      verdictLinks(v, onJump, onAnswer, 1)))) : null);
}

/** @param {Trial} t */
export function taskPanel(t) {
  return h("div", { class: "mf-task" },
    h("div", { class: "mf-title" }, h("span", { class: "mf-task-id" }, `${t.task_id} v${t.task_version}`), ` ${t.title}`),
    h("details", { class: "mf-instruction", open: true }, h("summary", {}, "Instruction given to the agent"), h("p", {}, t.instruction)));
}

/** @param {Step} step */
function policyLine(step) {
  if (step.denied) {
    const [kind] = step.denied.split(":");
    return h("div", { class: "mf-policy mf-denied" }, h("b", {}, "\u2717 denied by policy: "), step.error?.message || step.denied,
      h("span", { class: "mf-muted" }, ` (${step.denied}${POLICY[kind] ? `: ${POLICY[kind]}` : ""})`));
  }
  const flags = step.flags.map((f) => {
    const [kind, what] = f.split(":");
    if (kind === "precedence") return `before the required check ${what}`;
    if (kind === "idempotent_replay") return "replayed an idempotency key: nothing new written";
    return f;
  });
  return h("div", { class: `mf-policy ${flags.length ? "mf-flagged" : "mf-allowed"}` },
    h("b", {}, flags.length ? "\u26a0 allowed, with findings: " : "\u2713 allowed by policy"), flags.join("; "));
}

/** @param {Step["args"]} args */
function argsTable(args) {
  const keys = Object.keys(args || {});
  if (!keys.length) return h("div", { class: "mf-muted" }, "no arguments");
  return h("table", { class: "mf-args" }, keys.map((k) =>
    h("tr", {}, h("th", {}, k), h("td", {}, typeof args[k] === "string" ? scalar(args[k]) : jsonTree(args[k], 1)))));
}

/** @param {Step} step */
function readableResult(step) {
  const r = step.result;
  const lines = [];
  for (const change of step.changes) {
    const parts = change.path.split("/");
    if (change.op === "add" && parts.length === 3) lines.push(h("li", { class: "mf-written" }, `+ wrote ${parts[1]}/${parts[2]}: `, h("b", {}, describe(change.value))));
  }
  if (r && typeof r === "object" && !Array.isArray(r)) {
    for (const [k, v] of Object.entries(r)) {
      if (!Array.isArray(v)) continue;
      if (!v.length) lines.push(h("li", { class: "mf-none" }, `${k}: none on file`));
      else if (v.every(isItem)) lines.push(h("li", {}, h("span", { class: "mf-list-name" }, `${k} (${v.length})`),
        h("ul", {}, v.map((item) => h("li", {}, describeItem(item), h("span", { class: "mf-ref" }, ` ${itemRef(item)}`))))));
    }
  }
  return lines.length ? h("ul", { class: "mf-readable" }, lines) : null;
}

/**
 * The call at a row: the model turns around it, its tool, policy, fault, the verdicts pointing at it, the answer
 * (at the finish call), its arguments and result; at a gap, where this trial stands.
 * @param {Side} sd
 * @param {number} row
 * @param {Jump} onJump
 */
export function stepPanel(sd, row, onJump) {
  const step = sd.step(row);
  const [before, after] = turnsAround(sd, step, onJump);
  if (!step) {
    const at = sd.reached[row];
    return h("div", { class: "mf-detail mf-gap" }, sd.traj.steps.length
      ? [h("p", {}, "No matching call in this trial here."),
        h("p", { class: "mf-muted" }, at ? `Its record is as after its step ${at}.` : "It has made no call yet.")]
      : h("p", {}, "This trial made no tool call."), after);
  }
  const pointing = sd.marks.get(step.step) || [];
  return h("div", { class: "mf-detail" }, before,
    h("div", { class: "mf-step-title" },
      h("span", { class: "mf-step-no" }, `Step ${step.step}`), h("span", { class: "mf-tool" }, step.tool),
      badge(`kind-${step.kind}`, step.kind, `a ${step.kind} tool`),
      h("span", { class: "mf-muted mf-latency", title: "latency (started at, since the trial began)" },
        `${num(step.latency_ms)} ms${step.started_ms != null ? ` \u00b7 at ${num(step.started_ms)} ms` : ""}`)),
    policyLine(step),
    step.ok || step.denied ? null : h("div", { class: "mf-policy mf-denied" }, h("b", {}, `\u2717 the call failed: ${step.error?.code}`), ` \u2014 ${step.error?.message}`),
    step.fault ? h("div", { class: "mf-policy mf-fault" }, h("b", {}, "\u26a1 injected fault: "), step.fault) : null,
    pointing.length ? h("div", { class: "mf-pointing" }, pointing.map((v) => {
      const [sym, word, cls] = verdictMark(v);
      return h("div", { class: `mf-point mf-${cls}` }, h("b", {}, `${sym} ${word} `), `${v.id} (${v.category}, ${v.severity}): ${v.reason}`);
    })) : null,
    step.tool === FINISH ? answerBox(sd.traj) : null,
    h("h4", {}, "Arguments"), argsTable(step.args),
    step.ok ? [h("h4", {}, "Result"), readableResult(step), h("div", { class: "mf-raw" }, jsonTree(step.result, 1))] : null,
    after);
}

/**
 * The agent's final answer, as its finish call gave it: the text and the structured output.
 * @param {Trial} t
 */
const answerBox = (t) => h("div", { class: "mf-answer" }, h("h4", {}, `The agent's final answer (it says: ${t.self_status})`),
  h("p", { class: "mf-answer-text" }, t.answer || "(none)"),
  Object.keys(t.output || {}).length ? h("div", { class: "mf-raw" }, jsonTree(t.output, 0)) : null);

/** @param {FieldChange} f */
function fieldRow(f) {
  /** @param {unknown} v */
  const show = (v) => (v === undefined ? h("i", { class: "mf-muted" }, "absent") : typeof v === "object" && v !== null ? JSON.stringify(v) : scalar(v));
  return h("li", { class: "mf-field" }, h("span", { class: "mf-field-path" }, f.path), ": ",
    h("span", { class: "mf-before", title: "before" }, show(f.before)), h("span", { class: "mf-arrow" }, " \u2192 "),
    h("span", { class: "mf-after", title: "after" }, show(f.after)));
}

/**
 * The patient record's changes at a row: since the start, or made by its step only.
 * @param {Side} sd
 * @param {number} row
 * @param {DiffView} ui
 * @param {() => void} rerender
 */
export function diffPanel(sd, row, ui, rerender) {
  const step = sd.step(row), at = sd.reached[row];
  const [from, to, scope] = ui.mode === "start" ? [0, at, `since the start, up to step ${at}`]
    : step ? [step.step - 1, step.step, `made by step ${step.step}`] : [at, at, "no call here"];
  const diffs = diffState(sd.traj.resources, from, to);
  const shown = ui.allResources ? diffs : diffs.slice(0, SHOW_RESOURCES);
  const items = shown.map((d) => {
    const [sym, word] = STATUS[d.status];
    const current = d.after ?? d.before;
    const whole = ui.whole.has(d.key);
    return h("li", { class: `mf-res mf-${d.status}` },
      h("div", { class: "mf-res-head" }, h("span", { class: "mf-res-mark" }, `${sym} ${word}`), h("span", { class: "mf-res-key" }, d.key),
        ui.mode === "start" ? h("span", { class: "mf-res-at" }, d.at === to && step ? "at this step" : `at step ${d.at}`) : null),
      d.status === "changed" && describe(d.before) !== describe(d.after)
        ? h("div", { class: "mf-res-desc" }, h("span", { class: "mf-before" }, describe(d.before)), " \u2192 ", h("span", { class: "mf-after" }, describe(d.after)))
        : h("div", { class: "mf-res-desc" }, describe(current)),
      d.fields.length ? h("ul", { class: "mf-fields" }, d.fields.map(fieldRow)) : null,
      h("button", { class: "mf-link", type: "button", onclick: () => { whole ? ui.whole.delete(d.key) : ui.whole.add(d.key); rerender(); } },
        whole ? "hide the resource" : d.status === "removed" ? "show the resource as it was" : "show the whole resource"),
      whole ? h("div", { class: "mf-raw" }, jsonTree(current, 0)) : null);
  });
  return h("div", { class: "mf-diff" },
    h("div", { class: "mf-diff-scope" }, `Changes ${scope}: `, diffs.length ? `${diffs.length} resource${diffs.length > 1 ? "s" : ""}` : "none"),
    items.length ? h("ul", { class: "mf-res-list" }, items,
      diffs.length > shown.length ? h("li", {}, h("button", { class: "mf-link", type: "button", onclick: () => { ui.allResources = true; rerender(); } },
        `show all ${diffs.length} changed resources`)) : null)
      : h("p", { class: "mf-muted" }, ui.mode === "start" ? "The patient record is as the trial found it." : "This call did not change the patient record."));
}

/**
 * A trial's verdicts by category (safety first), failed ones first, each with links to the steps it points at (an
 * answer verdict: to the answer).
 * @param {Trial} t
 * @param {Jump} onJump
 * @param {() => void} onAnswer
 */
export function verdictsPanel(t, onJump, onAnswer) {
  const groups = [...CATEGORIES, ...new Set(t.verdicts.map((v) => v.category).filter((c) => !CATEGORIES.includes(c)))];
  return h("div", { class: "mf-verdicts" }, groups.map((cat) => {
    const vs = t.verdicts.filter((v) => v.category === cat).sort((a, b) => Number(a.passed) - Number(b.passed) || a.id.localeCompare(b.id));
    if (!vs.length) return null;
    const failed = vs.filter((v) => !v.passed).length;
    return h("section", { class: `mf-group${failed ? " mf-group-failed" : ""}` },
      h("h4", {}, `${cat[0].toUpperCase()}${cat.slice(1)} `, h("span", { class: "mf-muted" }, failed ? `\u2014 ${failed} of ${vs.length} failed` : `\u2014 all ${vs.length} passed`)),
      h("ul", {}, vs.map((v) => {
        const [sym, word, cls] = verdictMark(v);
        return h("li", { class: `mf-verdict mf-${cls}`, "data-verdict": v.id },
          h("span", { class: "mf-v-mark" }, `${sym} ${word}`), h("span", { class: "mf-v-sev" }, v.severity),
          h("span", { class: "mf-v-id", title: v.kind }, v.id),
          h("span", { class: "mf-v-reason" }, v.reason),
          verdictLinks(v, onJump, onAnswer));
      })));
  }));
}

/** @param {Trial} t */
export function scoresPanel(t) {
  const s = t.scores, v = t.verdicts;
  const failedHard = failingHard(t).map((x) => x.id);
  const gate = v.filter((x) => x.kind === "safety.checks_before");
  const gateWhy = s.safety_gate === "n/a" ? "this task requires no safety check before acting"
    : s.safety_gate === "passed" ? "every required check came before the action"
      : gate.filter((x) => !x.passed).map((x) => x.reason).join("; ");
  /**
   * @param {string} label
   * @param {string[]} xs
   */
  const listed = (label, xs) => `${label}: ${xs.length ? xs.join(", ") : "none"}`;
  return h("div", { class: "mf-scores" },
    h("div", { class: `mf-score ${t.passed ? "mf-pass" : "mf-fail"}` }, h("b", {}, t.passed ? "\u2713 Trial passed" : "\u2717 Trial failed"),
      h("span", {}, t.passed ? "every hard verdict passed" : `hard verdict${failedHard.length > 1 ? "s" : ""} failed: ${failedHard.join(", ") || t.status}`)),
    h("div", { class: `mf-score mf-gate-${s.safety_gate.replace("/", "")}` }, h("b", {}, `Safety gate: ${s.safety_gate}`), h("span", {}, gateWhy)),
    h("div", { class: "mf-score" }, h("b", {}, `Tool-call accuracy: ${s.accuracy.toFixed(2)}`),
      h("span", {}, [s.safety_gate === "failed" ? "set to 0: the safety gate failed. " : "",
        "The share of expected tools called, in any order. ", listed("Missing", s.missing), ". ", listed("Extra", s.extra), "."].join(""))),
    h("div", { class: "mf-score" }, h("b", {}, `Task completion: ${s.completion}`),
      h("span", {}, s.completion ? "accuracy 1.0, nothing extra, and the state and answer checks passed"
        : "needs accuracy 1.0, no tool missing or extra, and every success and answer check passing")),
    h("div", { class: "mf-answer" },
      h("div", { class: "mf-score" }, h("b", {}, `Agent's answer (says: ${t.self_status})`), h("span", {}, t.answer || "(none)")),
      Object.keys(t.output || {}).length ? h("details", { class: "mf-output" }, h("summary", {}, "Structured output"), jsonTree(t.output, 1)) : null));
}
