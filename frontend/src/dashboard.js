// @ts-check
// The run dashboard's front end. vl-convert bundles it with vega-embed, Vega and Vega-Lite (as `vegaEmbed`), so it
// draws its charts with nothing fetched. A click on a pass-rate cell (or an agent's overall rate) sets `selection`,
// which the kernel passes on to the linked failure browser as filters.

/** @import { DashboardState, Model } from "./types" */
import { banner, h, listen, sync } from "./common.js";
import { checkClass, clicked, headline, passesText, selectionLine } from "./logic/dashboard.js";

/** @typedef {Model<DashboardState>} DashboardModel */

const PANELS = [
  ["pass_rates", "Pass rate per dimension and agent", "Share of trials that passed every hard verdict. Click a cell to list its failed trials in the failure browser; double-click to clear."],
  ["overall", "Pass rate per agent", "Over every trial, with its Wilson 95% interval. Click an agent to list all its failed trials."],
  ["safety", "Safety findings by severity", "Failing safety verdicts, counted, never averaged: critical = hard, on a high- or critical-risk task."],
  ["latency", "Latency percentiles", "Trial duration; a percentile needs enough trials to be shown."],
];

const USAGE = "Cost per task is what the trials were charged. Model turns and tokens are as each agent reported them "
  + "(a dash: it reported none). Times are medians per trial: its model's, its tools', its own, and waiting for a worker.";

/** @param {DashboardState["usage"]} usage */
function usagePanel(usage) {
  /** @param {string[]} row */
  const cells = (row) => row.map((cell, i) => h("td", { class: i ? "fd-num" : "" }, cell));
  return h("section", { class: "fd-panel fd-usage", "data-panel": "usage" },
    h("h3", {}, "Cost, model tokens and time per agent"), h("p", { class: "mf-muted" }, USAGE),
    h("table", { class: "fd-checks" }, h("thead", {}, h("tr", {}, usage.columns.map((c) => h("th", {}, c)))),
      h("tbody", {}, usage.rows.map((row) => h("tr", {}, cells(row))))));
}

const TASKS = "Trials passed per task and agent, for every task some agent did not pass every time; unstable tasks "
  + "(some trials passed, some failed) first. Click a cell to list its failed trials in the failure browser and open "
  + "the first; an unstable one opens beside a passing trial.";

/** @param {DashboardModel} model */
function tasksPanel(model) {
  const { agents, rows } = model.get("tasks");
  if (!rows.length) return null;
  /** @param {string} task @param {import("./types").TaskCell} cell */
  const cellOf = (task, cell) => h("td", { class: `fd-num fd-passes${cell && cell.unstable ? " fd-unstable" : ""}${cell && cell.passed < cell.trials ? " fd-failed" : ""}` },
    cell && cell.passed < cell.trials
      ? h("button", { type: "button", class: "mf-control fd-task-cell", "data-task": task, "data-agent": cell.agent,
        title: cell.unstable ? "unstable: open a failed trial beside a passing one" : "open its failed trials",
        onclick: () => sync(model, "selection", { agent: cell.agent, task }) }, passesText(cell), cell.unstable ? " unstable" : "")
      : passesText(cell));
  return h("section", { class: "fd-panel fd-tasks", "data-panel": "tasks" },
    h("h3", {}, "Trials passed per task"), h("p", { class: "mf-muted" }, TASKS),
    h("div", { class: "fd-tasks-scroll" }, h("table", { class: "fd-checks" },
      h("thead", {}, h("tr", {}, h("th", {}, "task"), h("th", {}, "dimension"), agents.map((a) => h("th", { class: "fd-num" }, a)))),
      h("tbody", {}, rows.map((row) => h("tr", { "data-task": row.task_id },
        h("td", { class: "fd-task" }, row.task_id), h("td", {}, row.dimension), row.cells.map((c) => cellOf(row.task_id, c))))))));
}

/** @param {DashboardState["gate"]} gate */
function gatePanel(gate) {
  if (!gate) return null;
  return h("section", { class: `fd-panel fd-gate ${gate.green ? "fd-green" : "fd-red"}`, "data-panel": "gate" },
    h("h3", {}, `Release gate: ${gate.candidate} vs ${gate.baseline}`),
    h("p", { class: "fd-gate-head" }, h("b", {}, gate.green ? "GREEN" : "RED"), ` \u00b7 ${gate.summary}`),
    h("table", { class: "fd-checks" }, h("tbody", {}, gate.checks.map((c) =>
      h("tr", { class: `fd-check ${checkClass(c.status)}`, "data-check": c.name },
        h("td", { class: "fd-status" }, c.status), h("td", {}, c.name, h("span", { class: "mf-muted" }, ` ${c.level}${c.note}`)),
        h("td", { class: "fd-detail" }, c.detail))))),
    h("h3", { class: "fd-components-head" }, "Components"), h("p", {}, gate.components.headline),
    h("table", { class: "fd-checks fd-components" }, h("tbody", {}, gate.components.rows.map((row) =>
      h("tr", { class: `fd-check ${row[4] === "fell" ? "fd-fail" : row[4] === "rose" ? "fd-pass" : ""}` },
        row.map((cell, i) => h("td", { class: i === 4 ? "fd-status" : "" }, cell)))))));
}

/**
 * Draw the charts into their panels' holders, once their specs have come (the kernel makes them after the rest of
 * the dashboard is shown); the views drawn, for the caller to finalize.
 * @param {DashboardModel} model
 * @param {Record<string, HTMLElement>} holders
 */
async function drawCharts(model, holders) {
  const specs = model.get("charts");
  /** @type {VegaView[]} */
  const views = [];
  if (specs.error) {
    for (const holder of Object.values(holders)) holder.replaceChildren(h("span", { class: "fd-error" }, String(specs.error)));
    return views;
  }
  for (const [name, holder] of Object.entries(holders)) {
    const spec = specs[name];
    if (typeof spec !== "object") continue;
    holder.replaceChildren();
    const { view } = await vegaEmbed(holder, spec, { renderer: "svg", actions: false });
    views.push(view);
    if (name === "pass_rates" || name === "overall") {
      view.addEventListener("click", (_event, item) => {
        const selection = clicked(name, item);
        if (selection) sync(model, "selection", selection);
      });
    }
    if (name === "pass_rates") view.addEventListener("dblclick", () => sync(model, "selection", {}));
  }
  return views;
}

/**
 * @param {DashboardModel} model
 * @param {HTMLElement} root
 */
function draw(model, root) {
  const head = model.get("heading");
  const note = h("div", { class: "fd-selection", role: "status" });
  const showSelection = () => {
    const line = selectionLine(model.get("selection"));
    note.replaceChildren(...(line ? [line,
      h("button", { type: "button", class: "mf-control fd-clear", onclick: () => sync(model, "selection", {}) }, "show all failures")]
      : ["Click a cell to filter the failure browser."]));
  };
  /** @type {Record<string, HTMLElement>} */
  const holders = {};
  root.replaceChildren(
    banner(model.get("banner")),
    h("div", { class: "mf-heading fd-head" }, h("b", {}, "Run dashboard"), h("span", {}, headline(head))),
    note,
    h("div", { class: "fd-grid" }, PANELS.map(([name, title, help]) =>
      h("section", { class: `fd-panel fd-${name}`, "data-panel": name }, h("h3", {}, title), h("p", { class: "mf-muted" }, help),
        (holders[name] = h("div", { class: "fd-chart", "data-chart": name }, h("span", { class: "mf-muted" }, "drawing the chart\u2026"))))),
      tasksPanel(model),
      usagePanel(model.get("usage")),
      gatePanel(model.get("gate"))));
  showSelection();
  return { holders, showSelection };
}

export default {
  /** @param {{ model: DashboardModel, el: HTMLElement }} props */
  async render({ model, el: host }) {
    const root = h("div", { class: "fd-dashboard" });
    host.replaceChildren(root);
    const { holders, showSelection } = draw(model, root);
    /** @type {VegaView[]} */
    let views = [];
    const redraw = async () => {
      for (const view of views) view.finalize();
      views = await drawCharts(model, holders);
    };
    const stop = listen(model, { "change:selection": showSelection, "change:charts": redraw });
    await redraw();
    return () => {
      stop();
      for (const view of views) view.finalize();
    };
  },
};
