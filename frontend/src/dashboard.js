// @ts-check
// The run dashboard's front end. vl-convert bundles it with vega-embed, Vega and Vega-Lite (as `vegaEmbed`), so it
// draws its charts with nothing fetched. A click on a pass-rate cell (or an agent's overall rate) sets `selection`,
// which the kernel passes on to the linked failure browser as filters.

/** @import { DashboardState, Model } from "./types" */
import { banner, h, listen, sync } from "./common.js";
import { checkClass, clicked, headline, selectionLine } from "./logic/dashboard.js";

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

/** @param {DashboardState["gate"]} gate */
function gatePanel(gate) {
  if (!gate) return null;
  return h("section", { class: `fd-panel fd-gate ${gate.green ? "fd-green" : "fd-red"}`, "data-panel": "gate" },
    h("h3", {}, `Release gate: ${gate.candidate} vs ${gate.baseline}`),
    h("p", { class: "fd-gate-head" }, h("b", {}, gate.green ? "GREEN" : "RED"), ` \u00b7 ${gate.summary}`),
    h("table", { class: "fd-checks" }, h("tbody", {}, gate.checks.map((c) =>
      h("tr", { class: `fd-check ${checkClass(c.status)}`, "data-check": c.name },
        h("td", { class: "fd-status" }, c.status), h("td", {}, c.name, h("span", { class: "mf-muted" }, ` ${c.level}${c.note}`)),
        h("td", { class: "fd-detail" }, c.detail))))));
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
