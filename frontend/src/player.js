// @ts-check
// The replay player's front end: one ES module for the live widget (anywidget) and the static page (a model shim).
// The model holds `trajectory` (a compact trajectory) and `other` (a second trial of the same task, or null); the
// current step lives here, so stepping never talks to the kernel. The model turns an agent reported show with the
// calls they led to, marked as the agent's own account.

/** @import { Model, PlayerState, Trial } from "./types" */
import { banner, h, listen } from "./common.js";
/** @import { Filter, JumpKind } from "./logic/navigate.js" */
import { align, side } from "./logic/align.js";
import { filtering, filterRows, finishStep, JUMPS, jumpRows, NO_FILTER, nextIn, positionOf, settle } from "./logic/navigate.js";
import { findBar } from "./player/find.js";
import { diffPanel, headerPanel, scoresPanel, stepPanel, taskPanel, verdictsPanel } from "./player/panels.js";
import { stepList } from "./player/steps.js";

/** @typedef {Model<PlayerState>} PlayerModel */

const PLAY_MS = 900;
const FLASH_MS = 1500; // how long an answer opened by a link stays marked

const ICONS = {
  first: "M5 4h2v16H5zM19 4v16L8 12z",
  prev: "M17 4v16L6 12z",
  play: "M7 4v16l13-8z",
  pause: "M6 4h4v16H6zM14 4h4v16h-4z",
  next: "M7 4v16l11-8z",
  last: "M17 4h2v16h-2zM5 4v16l11-8z",
};

/** @param {keyof ICONS} name */
function icon(name) {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  const path = document.createElementNS("http://www.w3.org/2000/svg", "path");
  path.setAttribute("d", ICONS[name]);
  svg.append(path);
  return svg;
}

/**
 * @param {keyof ICONS} name
 * @param {string} label
 * @param {() => void} onclick
 */
function button(name, label, onclick) {
  return h("button", { class: "mf-btn", type: "button", "aria-label": label, title: label, "data-action": name, onclick }, icon(name));
}

/**
 * A synced trial: JSON in one binary buffer from the kernel, the object itself in a static page, or null.
 * @param {DataView | Trial | null | undefined} value
 * @returns {Trial | null}
 */
const trialOf = (value) => (value instanceof DataView ? JSON.parse(new TextDecoder().decode(value)) : value ?? null);

/**
 * Draw the player into `el`; the function returned stops it playing.
 * @param {PlayerModel} model
 * @param {HTMLElement} el
 */
function mount(model, el) {
  const a = /** @type {Trial} */ (trialOf(model.get("trajectory"))), b = trialOf(model.get("other"));
  const rows = align(a.steps, b && b.steps);
  const sides = [side(a, rows, 0), ...(b ? [side(b, rows, 1)] : [])];
  const all = [...rows.keys()];
  /**
   * Where the player stands and what it shows: the row, the rows the filter leaves (`visible`) and, among them, the
   * rows of each kind it jumps to.
   * @type {{ row: number, mode: string, whole: Set<string>, allResources: boolean, timer: ReturnType<typeof setInterval> | null,
   *   filter: Filter, visible: number[], kinds: Record<JumpKind, number[]> }}
   */
  const ui = { row: 0, mode: "start", whole: new Set(), allResources: false, timer: null,
    filter: NO_FILTER, visible: all, kinds: jumpRows(sides, all) };

  const root = h("div", { class: `mf-player${b ? " mf-pair" : ""}`, tabindex: "0", "data-lm-suppress-shortcuts": "true",
    "aria-label": `replay player: Left and Right step, Home and End go to the first and last step, Space plays; ${
      JUMPS.map((j) => `${j.key.toUpperCase()} jumps to the next ${j.label}`).join(", ")}, with Shift to the previous` });
  const position = h("span", { class: "mf-position", "aria-live": "polite" });
  const slider = /** @type {HTMLInputElement} */ (h("input", { class: "mf-slider", type: "range", min: "0", value: "0", "aria-label": "step" }));
  const playBtn = button("play", "play (Space)", () => toggle());
  const modeToggles = () => h("div", { class: "mf-toggles", role: "group", "aria-label": "which changes" },
    [["start", "since the start"], ["step", "this step only"]].map(([mode, label]) =>
      h("button", { class: "mf-toggle", type: "button", "data-mode": mode, "aria-pressed": "false", onclick: () => { ui.mode = mode; paint(); } }, label)));
  const list = stepList(sides, all, (row) => go(row));
  const find = findBar(sides, (kind, dir) => {
    jumpTo(kind, dir);
    root.focus({ preventScroll: true }); // the keys go on working, even once the button clicked is disabled
  }, (filter) => setFilter(filter));
  const columns = sides.map(() => ({ detail: h("div", { class: "mf-col-detail" }), diff: h("div", { class: "mf-col-diff" }) }));

  /** @param {number} row */
  function go(row) {
    ui.row = Math.max(0, Math.min(rows.length - 1, row));
    paint();
  }

  /**
   * To the next (1) or previous (-1) of the rows shown, or of those of a kind among them; nowhere if there is none.
   * @param {readonly number[]} among
   * @param {1 | -1} dir
   */
  function step(among, dir) {
    const row = nextIn(among, ui.row, dir);
    if (row !== null) go(row);
  }

  /**
   * @param {JumpKind} kind
   * @param {1 | -1} dir
   */
  const jumpTo = (kind, dir) => step(ui.kinds[kind], dir);

  /** @param {Filter} filter */
  function setFilter(filter) {
    ui.filter = filter;
    ui.visible = filtering(filter) ? filterRows(sides, rows.length, filter) : all;
    ui.kinds = jumpRows(sides, ui.visible);
    list.setRows(ui.visible);
    slider.max = String(Math.max(0, ui.visible.length - 1));
    find.filtered(ui.visible, rows.length, ui.kinds, filter);
    go(settle(ui.visible, ui.row));
  }

  /**
   * Go to a step of one trial (0: A, 1: B), and give the player the keyboard.
   * @param {number} which
   * @param {number} stepNo
   */
  function jump(which, stepNo) {
    const i = sides[which].traj.steps.findIndex((s) => s.step === stepNo);
    const row = sides[which].idx.indexOf(i);
    if (row >= 0 && ui.visible[positionOf(ui.visible, row)] !== row) setFilter(NO_FILTER); // a step the filter hid
    if (row >= 0) go(row);
    root.focus({ preventScroll: true });
  }

  /**
   * Open a trial's answer: its finish call, where the call panel shows the answer (without one, the answer among
   * the scores), scrolled into view and marked for a moment.
   * @param {number} which
   */
  function openAnswer(which) {
    const finish = finishStep(sides[which].traj);
    if (finish !== null) jump(which, finish);
    const where = finish !== null ? columns[which].detail : root.querySelectorAll(".mf-outcome")[which];
    const box = where?.querySelector(".mf-answer");
    if (!box) return;
    for (const folded of box.querySelectorAll("details")) folded.open = true;
    box.scrollIntoView({ block: "nearest" });
    box.classList.add("mf-flash");
    setTimeout(() => box.classList.remove("mf-flash"), FLASH_MS);
    root.focus({ preventScroll: true });
  }

  /** @param {boolean} [force] play (true), pause (false), or the other of what it does */
  function toggle(force) {
    const playing = force ?? !ui.timer;
    clearInterval(ui.timer ?? undefined);
    ui.timer = null;
    if (playing) {
      if (nextIn(ui.visible, ui.row, 1) === null) go(ui.visible[0] ?? ui.row);
      ui.timer = setInterval(() => (nextIn(ui.visible, ui.row, 1) === null ? toggle(false) : step(ui.visible, 1)), PLAY_MS);
    }
    playBtn.replaceChildren(icon(playing ? "pause" : "play"));
    const label = playing ? "pause (Space)" : "play (Space)";
    playBtn.setAttribute("aria-label", label);
    playBtn.title = label;
  }

  function paint() {
    slider.value = String(positionOf(ui.visible, ui.row));
    const labels = sides.map((sd) => {
      const step = sd.step(ui.row);
      return step ? `step ${step.step} of ${sd.traj.steps.length}` : "no call";
    });
    position.textContent = b ? `row ${ui.row + 1} of ${rows.length}: ${labels.map((l, i) => `${"AB"[i]} ${l}`).join(" \u00b7 ")}` : labels[0];
    for (const btn of /** @type {NodeListOf<HTMLButtonElement>} */ (root.querySelectorAll(".mf-toggle"))) btn.setAttribute("aria-pressed", String(btn.dataset.mode === ui.mode));
    sides.forEach((sd, i) => {
      columns[i].detail.replaceChildren(stepPanel(sd, ui.row, (st) => jump(i, st)));
      columns[i].diff.replaceChildren(diffPanel(sd, ui.row, ui, paint));
    });
    list.show(ui.row);
    find.at(ui.row, ui.kinds);
  }

  /** @type {Record<string, () => void>} */
  const moves = { ArrowRight: () => step(ui.visible, 1), ArrowLeft: () => step(ui.visible, -1), Home: () => go(ui.visible[0] ?? ui.row),
    End: () => go(ui.visible[ui.visible.length - 1] ?? ui.row), " ": () => toggle() };
  root.addEventListener("keydown", (event) => {
    const target = /** @type {Element} */ (event.target);
    if (event.ctrlKey || event.metaKey || event.altKey || target.closest("select, textarea, input:not([type=range])")) return;
    const jumpKey = JUMPS.find((j) => j.key === event.key.toLowerCase());
    const move = jumpKey ? () => jumpTo(jumpKey.kind, event.shiftKey ? -1 : 1) : moves[event.key];
    if (!move || target.closest("summary, .mf-link, .mf-steplink, .mf-toggle, .mf-btn, .mf-jump-btn") && event.key === " ") return;
    event.preventDefault();
    event.stopPropagation();
    move();
  });
  slider.addEventListener("input", () => go(ui.visible[Number(slider.value)] ?? ui.row));

  /** @param {number} i */
  const label = (i) => (b ? `${"AB"[i]}` : "");
  root.append(
    banner(a.banner),
    taskPanel(a),
    h("div", { class: "mf-heads" }, sides.map((sd, i) => headerPanel(sd.traj, label(i), (st) => jump(i, st), () => openAnswer(i)))),
    h("div", { class: "mf-controls" },
      button("first", "first step (Home)", () => moves.Home()), button("prev", "previous step (Left)", () => moves.ArrowLeft()), playBtn,
      button("next", "next step (Right)", () => moves.ArrowRight()), button("last", "last step (End)", () => moves.End()),
      slider, position),
    find.box,
    h("div", { class: "mf-main" },
      h("div", { class: "mf-list-col" }, h("h3", {}, b ? "Steps, aligned (A | B)" : "Steps"), list.box),
      sides.map((sd, i) => h("div", { class: "mf-col" },
        h("div", { class: "mf-pane" }, h("h3", {}, b ? `${label(i)} \u00b7 ${sd.traj.agent} trial ${sd.traj.trial}: the call` : "The call"), columns[i].detail),
        h("div", { class: "mf-pane" }, h("div", { class: "mf-pane-head" }, h("h3", {}, "Patient record"), modeToggles()), columns[i].diff)))),
    h("div", { class: "mf-bottom" }, sides.map((sd, i) => h("div", { class: "mf-outcome" },
      h("h3", {}, b ? `${label(i)} \u00b7 verdicts` : "Verdicts"), verdictsPanel(sd.traj, (s) => jump(i, s), () => openAnswer(i)),
      h("h3", {}, "Scores and why"), scoresPanel(sd.traj)))));
  el.replaceChildren(root);
  setFilter(NO_FILTER);
  return () => toggle(false);
}

export default {
  /** @param {{ model: PlayerModel, el: HTMLElement }} props */
  render({ model, el }) {
    let cleanup = mount(model, el);
    const again = () => { cleanup(); cleanup = mount(model, el); };
    const stop = listen(model, { "change:trajectory": again, "change:other": again });
    return () => {
      cleanup();
      stop();
    };
  },
};
