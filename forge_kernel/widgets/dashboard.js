// The run dashboard's front end. vl-convert bundles it with vega-embed, Vega and Vega-Lite (as `vegaEmbed`), so it
// draws its charts with nothing fetched. A click on a pass-rate cell (or an agent's overall rate) sets `selection`,
// which the kernel passes on to the linked failure browser as filters.

const PANELS = [
  ["pass_rates", "Pass rate per dimension and agent", "Share of trials that passed every hard verdict. Click a cell to list its failed trials in the failure browser; double-click to clear."],
  ["overall", "Pass rate per agent", "Over every trial, with its Wilson 95% interval. Click an agent to list all its failed trials."],
  ["safety", "Safety findings by severity", "Failing safety verdicts, counted, never averaged: critical = hard, on a high- or critical-risk task."],
  ["latency", "Latency percentiles", "Trial duration; a percentile needs enough trials to be shown."],
];

function el(tag, attrs, ...kids) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const kid of kids.flat(Infinity)) if (kid !== undefined && kid !== null && kid !== false) node.append(kid);
  return node;
}

const pct = (k, n) => (n ? `${Math.round((100 * k) / n)}%` : "\u2014");

function gatePanel(gate) {
  if (!gate) return null;
  return el("section", { class: `fd-panel fd-gate ${gate.green ? "fd-green" : "fd-red"}`, "data-panel": "gate" },
    el("h3", {}, `Release gate: ${gate.candidate} vs ${gate.baseline}`),
    el("p", { class: "fd-gate-head" }, el("b", {}, gate.green ? "GREEN" : "RED"), ` \u00b7 ${gate.summary}`),
    el("table", { class: "fd-checks" }, el("tbody", {}, gate.checks.map((c) =>
      el("tr", { class: `fd-check fd-${c.status.replace(" ", "-").toLowerCase()}`, "data-check": c.name },
        el("td", { class: "fd-status" }, c.status), el("td", {}, c.name, el("span", { class: "fd-muted" }, ` ${c.level}${c.note}`)),
        el("td", { class: "fd-detail" }, c.detail))))));
}

async function draw(model, root) {
  const h = model.get("heading"), specs = model.get("charts");
  const note = el("div", { class: "fd-selection", role: "status" });
  const showSelection = () => {
    const s = model.get("selection");
    note.replaceChildren(...(s && s.agent ? [`Failure browser: ${s.agent}${s.dimension ? ` \u00d7 ${s.dimension}` : ", every dimension"} `,
      el("button", { type: "button", class: "fd-clear", onclick: () => { model.set("selection", {}); model.save_changes(); } }, "show all failures")]
      : ["Click a cell to filter the failure browser."]));
  };
  const holders = {};
  root.replaceChildren(
    el("div", { class: "fd-banner", role: "note" }, model.get("banner")),
    el("div", { class: "fd-head" }, el("b", {}, "Run dashboard"),
      el("span", {}, `run ${h.run_id} \u00b7 ${h.tasks} tasks \u00b7 ${h.agents.length} agents \u00b7 ${h.trials} trials, ${h.passed} passed (${pct(h.passed, h.trials)})`)),
    note,
    el("div", { class: "fd-grid" }, PANELS.filter(([name]) => specs[name]).map(([name, title, help]) =>
      el("section", { class: `fd-panel fd-${name}`, "data-panel": name }, el("h3", {}, title), el("p", { class: "fd-muted" }, help),
        (holders[name] = el("div", { class: "fd-chart", "data-chart": name })))),
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
        model.set("selection", { agent: d.agent, dimension: name === "pass_rates" ? d.dimension : "" });
        model.save_changes();
      });
    }
    if (name === "pass_rates") view.addEventListener("dblclick", () => { model.set("selection", {}); model.save_changes(); });
  }
  return { views, showSelection };
}

export default {
  async render({ model, el: host }) {
    const root = el("div", { class: "fd-dashboard" });
    host.replaceChildren(root);
    const { views, showSelection } = await draw(model, root);
    model.on("change:selection", showSelection);
    return () => {
      model.off("change:selection", showSelection);
      for (const view of views) view.finalize();
    };
  },
};
