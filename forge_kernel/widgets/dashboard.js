// The run dashboard's front end. vl-convert bundles it with vega-embed, Vega and Vega-Lite (as `vegaEmbed`), so it
// draws its charts with nothing fetched. A click on a pass-rate cell (or an agent's overall rate) sets `selection`,
// which the kernel passes on to the linked failure browser as filters.

const PANELS = [
  ["pass_rates", "Pass rate per dimension and agent", "Share of trials that passed every hard verdict. Click a cell to list its failed trials in the failure browser; double-click to clear."],
  ["overall", "Pass rate per agent", "Over every trial, with its Wilson 95% interval. Click an agent to list all its failed trials."],
  ["safety", "Safety findings by severity", "Failing safety verdicts, counted, never averaged: critical = hard, on a high- or critical-risk task."],
  ["latency", "Latency percentiles", "Trial duration; a percentile needs enough trials to be shown."],
];

const pct = (k, n) => (n ? `${Math.round((100 * k) / n)}%` : "\u2014");

const USAGE = "Cost per task is what the trials were charged. Model turns and tokens are as each agent reported them "
  + "(a dash: it reported none). Times are medians per trial: its model's, its tools', its own, and waiting for a worker.";

function usagePanel(usage) {
  const cells = (row) => row.map((cell, i) => h("td", { class: i ? "fd-num" : "" }, cell));
  return h("section", { class: "fd-panel fd-usage", "data-panel": "usage" },
    h("h3", {}, "Cost, model tokens and time per agent"), h("p", { class: "mf-muted" }, USAGE),
    h("table", { class: "fd-checks" }, h("thead", {}, h("tr", {}, usage.columns.map((c) => h("th", {}, c)))),
      h("tbody", {}, usage.rows.map((row) => h("tr", {}, cells(row))))));
}

function gatePanel(gate) {
  if (!gate) return null;
  return h("section", { class: `fd-panel fd-gate ${gate.green ? "fd-green" : "fd-red"}`, "data-panel": "gate" },
    h("h3", {}, `Release gate: ${gate.candidate} vs ${gate.baseline}`),
    h("p", { class: "fd-gate-head" }, h("b", {}, gate.green ? "GREEN" : "RED"), ` \u00b7 ${gate.summary}`),
    h("table", { class: "fd-checks" }, h("tbody", {}, gate.checks.map((c) =>
      h("tr", { class: `fd-check fd-${c.status.replace(" ", "-").toLowerCase()}`, "data-check": c.name },
        h("td", { class: "fd-status" }, c.status), h("td", {}, c.name, h("span", { class: "mf-muted" }, ` ${c.level}${c.note}`)),
        h("td", { class: "fd-detail" }, c.detail))))));
}

async function draw(model, root) {
  const head = model.get("heading"), specs = model.get("charts");
  const note = h("div", { class: "fd-selection", role: "status" });
  const showSelection = () => {
    const s = model.get("selection");
    note.replaceChildren(...(s && s.agent ? [`Failure browser: ${s.agent}${s.dimension ? ` \u00d7 ${s.dimension}` : ", every dimension"} `,
      h("button", { type: "button", class: "mf-control fd-clear", onclick: () => sync(model, "selection", {}) }, "show all failures")]
      : ["Click a cell to filter the failure browser."]));
  };
  const holders = {};
  root.replaceChildren(
    banner(model.get("banner")),
    h("div", { class: "mf-heading fd-head" }, h("b", {}, "Run dashboard"),
      h("span", {}, `run ${head.run_id} \u00b7 ${head.tasks} tasks \u00b7 ${head.agents.length} agents \u00b7 ${head.trials} trials, ${head.passed} passed (${pct(head.passed, head.trials)})`)),
    note,
    h("div", { class: "fd-grid" }, PANELS.filter(([name]) => specs[name]).map(([name, title, help]) =>
      h("section", { class: `fd-panel fd-${name}`, "data-panel": name }, h("h3", {}, title), h("p", { class: "mf-muted" }, help),
        (holders[name] = h("div", { class: "fd-chart", "data-chart": name })))),
    usagePanel(model.get("usage")),
    gatePanel(model.get("gate"))));
  showSelection();
  const views = [];
  for (const [name, holder] of Object.entries(holders)) {
    const { view } = await vegaEmbed(holder, specs[name], { renderer: "svg", actions: false });
    views.push(view);
    if (name === "pass_rates" || name === "overall") {
      view.addEventListener("click", (_event, item) => {
        const d = item && item.datum;
        if (!d || !d.agent) return;
        sync(model, "selection", { agent: d.agent, dimension: name === "pass_rates" ? d.dimension : "" });
      });
    }
    if (name === "pass_rates") view.addEventListener("dblclick", () => sync(model, "selection", {}));
  }
  return { views, showSelection };
}

export default {
  async render({ model, el: host }) {
    const root = h("div", { class: "fd-dashboard" });
    host.replaceChildren(root);
    const { views, showSelection } = await draw(model, root);
    const stop = listen(model, { "change:selection": showSelection });
    return () => {
      stop();
      for (const view of views) view.finalize();
    };
  },
};
