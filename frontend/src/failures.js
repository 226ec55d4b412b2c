// @ts-check
// The failure browser's table: filters and sort go to the kernel (which sends the rows back), a click opens a trial
// in the replay player below, and triage edits are sent as messages whose outcome comes back as `message`.

/** @import { FailingVerifier, FailureRow, FailuresState, Model } from "./types" */
import { banner, h, listen, sync } from "./common.js";
import { countLine, nextSort, sortMarks, withFilter } from "./logic/failures.js";

/** @typedef {Model<FailuresState>} FailuresModel */
/** @typedef {Map<string, { decision: string, comment: string, every: boolean }>} Drafts */

/** @type {[string, string, string?][]} */
const COLUMNS = [
  ["critical", "", "critical: a hard safety verdict failed on a high- or critical-risk task"],
  ["suite", "Suite"], ["dimension", "Dimension"], ["task_id", "Task"], ["agent", "Agent"], ["trial", "Trial"],
  ["passes", "Passed", "trials of this task this agent passed; unstable: some passed, some failed"],
  ["verifiers", "Failing verifiers", "hard before soft, safety first"], ["error_class", "Error class"],
  ["triage", "Triage"],
];
const FILTERS = [["suite", "suite"], ["dimension", "dimension"], ["task_id", "task"], ["agent", "agent"],
  ["verifier", "failing verifier"], ["error_class", "error class"], ["triage", "triage status"],
  ["stability", "across trials"]];
const DECISIONS = [["open", "open (no decision)"], ["confirmed", "confirmed: the agent is at fault"],
  ["wrong_gold", "wrong gold: the package is wrong"], ["fixed", "fixed"], ["wont_fix", "won't fix"]];

/** @param {FailureRow} row */
const unstable = (row) => row.passing_trial_id !== null;

/** @param {FailingVerifier} v */
const chip = (v) => h("span", { class: `ff-chip ff-cat-${v.category}${v.severity === "soft" ? " ff-soft" : ""}`,
  title: `${v.category}, ${v.severity}` }, v.id);

/** @param {FailuresModel} model */
function filterBar(model) {
  const filters = model.get("filters"), options = model.get("options");
  /**
   * @param {string} name
   * @param {string} value
   */
  const set = (name, value) => sync(model, "filters", withFilter(model.get("filters"), name, value));
  return h("div", { class: "ff-filters", role: "group", "aria-label": "filters" },
    FILTERS.map(([name, label]) => h("label", { class: "ff-filter" }, h("span", {}, label),
      h("select", { "data-filter": name, onchange: (e) => set(name, /** @type {HTMLSelectElement} */ (e.target).value) },
        h("option", { value: "" }, "any"),
        (options[name] || []).map((v) => h("option", { value: v, selected: filters[name] === v }, v))))),
    h("button", { class: "mf-control ff-clear", type: "button", disabled: !Object.keys(filters).length,
      onclick: () => sync(model, "filters", {}) }, "clear filters"));
}

/**
 * "k of n" passed, and for an unstable task a mark saying a click opens it beside a passing trial.
 * @param {FailureRow} row
 */
const passesCell = (row) => h("td", { class: "ff-passes", title: unstable(row)
  ? "unstable: some trials passed, some failed; a click opens this failed trial beside a passing one" : "this agent failed every trial of this task" },
row.passes, unstable(row) ? h("span", { class: "ff-unstable" }, "unstable") : null);

/** @param {FailuresModel} model */
function table(model) {
  const sort = model.get("sort"), selected = model.get("selected");
  /** @param {string} name */
  const sortBy = (name) => sync(model, "sort", nextSort(sort, name));
  /** @param {FailureRow} row */
  const open = (row) => sync(model, "selected", row.trial_id);
  const head = h("tr", {}, COLUMNS.map(([name, label, title]) => {
    const [order, arrow] = sortMarks(sort, name);
    return h("th", { "aria-sort": order, title },
      h("button", { type: "button", class: "mf-control ff-sort", "data-sort": name, onclick: () => sortBy(name) },
        label || "\u26a0", arrow));
  }));
  const body = model.get("rows").map((row) => h("tr", {
    class: `ff-row${row.trial_id === selected ? " ff-selected" : ""}`, tabindex: "0", "data-trial-id": row.trial_id,
    "aria-selected": String(row.trial_id === selected), title: "open this trial in the replay player",
    onclick: () => open(row), onkeydown: (/** @type {KeyboardEvent} */ e) => { if (e.key === "Enter") open(row); } },
  h("td", {}, row.critical ? h("span", { class: "ff-critical", title: `critical: ${row.risk}-risk task, a hard safety verdict failed` }, "CRITICAL") : null),
  h("td", {}, row.suite), h("td", {}, row.dimension), h("td", { class: "ff-task" }, row.task_id),
  h("td", { class: "ff-agent" }, row.agent), h("td", { class: "ff-num" }, row.trial), passesCell(row),
  h("td", {}, row.failing.map(chip)), h("td", {}, row.error_class),
  h("td", {}, h("span", { class: `ff-status ff-status-${row.triage}` }, row.triage.replace("_", " ")))));
  return h("table", { class: "ff-table" }, h("thead", {}, head), h("tbody", {}, body));
}

/**
 * For an unstable task: what the player shows beside the failed trial, and a button that adds or removes it.
 * @param {FailuresModel} model
 * @param {FailureRow} row
 */
function pairLine(model, row) {
  const beside = model.get("beside");
  const on = beside && beside.trial !== undefined;
  return h("p", { class: "ff-pair", role: "status" },
    on ? `Unstable: ${row.agent} passed ${row.passes} trials. Below, failed trial ${row.trial} (left) beside trial ${beside.trial}, which passed (right), aligned step by step. `
      : `Unstable: ${row.agent} passed ${row.passes} trials. `,
    h("button", { type: "button", class: "mf-control ff-beside", onclick: () => model.send({ action: "beside", on: !on }) },
      on ? "show the failed trial alone" : "show it beside a passing trial"));
}

/**
 * The opened trial's failing verdicts, each with its triage decision (editable with a triage file).
 * @param {FailuresModel} model
 * @param {Drafts} drafts what the reviewer typed but has not saved (verifier -> decision, comment, every agent),
 *   kept across repaints
 */
function triagePanel(model, drafts) {
  const verdicts = model.get("verdicts"), selected = model.get("selected");
  if (selected === null || selected === undefined) return null;
  const row = model.get("rows").find((r) => r.trial_id === selected);
  const file = model.get("triage_file"), message = model.get("message");
  const reviewer = h("input", { type: "text", class: "ff-reviewer", value: model.get("reviewer"), placeholder: "your name",
    "aria-label": "reviewer", onchange: (e) => sync(model, "reviewer", /** @type {HTMLInputElement} */ (e.target).value) });
  const items = verdicts.map((v) => {
    const draft = drafts.get(v.id) || { decision: v.decision, comment: v.comment, every: v.every_agent };
    const keep = () => drafts.set(v.id, { decision: decision.value, comment: comment.value, every: every.checked });
    const decision = h("select", { class: "ff-decision", "aria-label": `triage status of ${v.id}`, disabled: !file, onchange: keep },
      DECISIONS.map(([value, label]) => h("option", { value, selected: draft.decision === value }, label)));
    const comment = h("textarea", { class: "ff-comment", rows: "1", placeholder: "why (required unless open)",
      "aria-label": `comment on ${v.id}`, disabled: !file, oninput: keep }, draft.comment);
    const every = h("input", { type: "checkbox", class: "ff-every", checked: draft.every, disabled: !file, onchange: keep });
    const save = () => model.send({ action: "triage", trial_id: selected, verifier: v.id, decision: decision.value,
      comment: comment.value, reviewer: reviewer.value, every_agent: every.checked });
    const note = message && message.verifier === v.id
      ? h("div", { class: `ff-message ff-${message.kind}`, role: message.kind === "error" ? "alert" : "status" }, message.text) : null;
    return h("li", { class: "ff-verdict", "data-verifier": v.id },
      h("div", { class: "ff-verdict-head" }, chip(v), h("span", { class: "mf-muted" }, `${v.category} \u00b7 ${v.severity}`),
        v.reviewer ? h("span", { class: "mf-muted" }, `\u00b7 ${v.decision.replace("_", " ")} by ${v.reviewer}`) : null),
      v.reason ? h("div", { class: "ff-reason", title: v.reason }, v.reason) : null,
      file ? h("div", { class: "ff-edit" }, decision, comment,
        h("label", { class: "ff-every-label" }, every, " every agent"),
        h("button", { type: "button", class: "mf-control ff-save", onclick: save }, "save")) : null,
      note);
  });
  return h("section", { class: "ff-triage", "aria-label": "triage" },
    h("h3", {}, `Triage \u00b7 ${row ? `${row.task_id} \u00b7 ${row.agent} trial ${row.trial}` : `trial ${selected}`}`),
    row && unstable(row) ? pairLine(model, row) : null,
    h("p", { class: "mf-muted" }, file ? ["Decisions are saved to ", h("code", {}, file),
      " for this task version; the replay player below shows the trial. Reviewer: ", reviewer]
      : "Read-only: open the browser with a triage file (FailureBrowser(run, triage=\"triage.yaml\")) to record decisions."),
    h("ul", {}, items));
}

/**
 * @param {FailuresModel} model
 * @param {HTMLElement} el
 * @param {Drafts} drafts
 */
function paint(model, el, drafts) {
  const rows = model.get("rows"), matching = model.get("matching"), total = model.get("total");
  const filters = Object.entries(model.get("filters")), message = model.get("message");
  el.replaceChildren(h("div", { class: "ff-browser" },
    banner(model.get("banner")),
    h("div", { class: "mf-heading" }, h("b", {}, "Failed trials"),
      h("span", { class: "ff-count" }, countLine(filters, matching, total)),
      rows.length < matching ? h("span", { class: "mf-muted" }, `showing the first ${rows.length}`) : null,
      h("span", { class: "mf-muted" }, "click a row to replay it below")),
    filterBar(model),
    message && message.kind === "error" && !message.verifier ? h("div", { class: "ff-message ff-error ff-general", role: "alert" }, message.text) : null,
    rows.length ? h("div", { class: "ff-scroll" }, table(model))
      : h("p", { class: "ff-empty" }, total ? "No failed trial matches these filters." : "No trial of this run failed."),
    triagePanel(model, drafts)));
}

export default {
  /** @param {{ model: FailuresModel, el: HTMLElement }} props */
  render({ model, el }) {
    /** @type {Drafts} */
    const drafts = new Map();
    const again = () => paint(model, el, drafts);
    const forget = () => { drafts.clear(); again(); };
    const saved = () => { const m = model.get("message"); if (m && m.kind === "saved" && m.verifier) drafts.delete(m.verifier); again(); };
    const keys = ["rows", "filters", "sort", "verdicts", "options", "matching", "total", "beside"];
    const stop = listen(model, { ...Object.fromEntries(keys.map((key) => [`change:${key}`, again])),
      "change:selected": forget, "change:message": saved });
    again();
    return stop;
  },
};
