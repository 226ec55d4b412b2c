// @ts-check
// The step list, virtualised: a row per aligned step (a cell per trial), only those in view (and a few more) drawn.

/** @import { Side } from "../logic/align.js" */
import { h } from "../common.js";
import { verdictMark } from "../logic/format.js";
import { positionOf } from "../logic/navigate.js";
import { ROW, rowsInView, scrollFor } from "../logic/viewport.js";
import { ACCOUNT } from "./marks.js";

/**
 * One trial's cell of a row: its step's number, tool and chips (model turn, kind, write, denied, error, fault,
 * findings, verdicts), or a dash at a gap.
 * @param {Side} sd
 * @param {number} row
 */
function rowCell(sd, row) {
  const step = sd.step(row);
  if (!step) return h("span", { class: "mf-cell mf-cell-gap" }, "\u2014");
  const marks = sd.marks.get(step.step) || [];
  const failed = marks.some((v) => !v.passed);
  const said = (sd.spoke.get(step.step) || []).filter((t) => t.after_step < step.step);
  return h("span", { class: "mf-cell" },
    h("span", { class: "mf-cell-top" }, h("span", { class: "mf-no" }, step.step),
      h("span", { class: "mf-name", title: step.tool }, step.tool)),
    h("span", { class: "mf-cell-chips" },
    said.length ? h("span", { class: "mf-chip mf-chip-model",
      title: `before this call the model said (${ACCOUNT}): ${said.map((t) => t.text.slice(0, 160)).join(" \u2026 ")}` },
    "\u201c\u2026\u201d") : null,
    h("span", { class: "mf-kind" }, step.kind),
    step.changes.length ? h("span", { class: "mf-chip mf-chip-write", title: "changed the patient record" }, "\u0394 record") : null,
    step.denied ? h("span", { class: "mf-chip mf-chip-denied", title: `denied: ${step.denied}` }, "\u2717 denied") : null,
    !step.denied && !step.ok ? h("span", { class: "mf-chip mf-chip-denied", title: step.error?.message }, "\u2717 error") : null,
    step.fault ? h("span", { class: "mf-chip mf-chip-fault", title: `injected fault: ${step.fault}` }, `\u26a1 ${step.fault}`) : null,
    step.flags.length ? h("span", { class: "mf-chip mf-chip-flag", title: step.flags.join(", ") }, "\u26a0") : null,
    marks.length ? h("span", { class: `mf-chip ${failed ? "mf-chip-vfail" : "mf-chip-vpass"}`, title: marks.map((v) => `${verdictMark(v)[1]} ${v.id}`).join(", ") },
      failed ? "\u2717 verdict" : "\u2713 verdict") : null));
}

/**
 * The list of the rows shown (ascending; all of them unless a filter hides some); `show(row)` marks a row current and
 * scrolls it into view, `setRows(rows)` shows other rows. Only the rows in view (and a few more) exist; the scroll
 * offset and height are kept, never read while painting.
 * @param {Side[]} sides
 * @param {readonly number[]} rows
 * @param {(row: number) => void} onPick
 */
export function stepList(sides, rows, onPick) {
  const box = h("div", { class: "mf-steps", role: "listbox", "aria-label": "steps" });
  const spacer = h("div", { class: "mf-spacer" });
  const empty = h("p", { class: "mf-steps-empty mf-muted" }, "No step matches the filter.");
  box.append(spacer, empty);
  let current = 0, top = 0, height = 480;
  /** @type {Map<number, HTMLElement>} */
  const shown = new Map(); // position in the list -> its node
  /** @param {number} at a position in the list */
  const rowNode = (at) => {
    const row = rows[at];
    const gap = sides.length > 1 && sides.some((sd) => sd.idx[row] < 0);
    return h("div", { class: `mf-row${gap ? " mf-row-gap" : ""}`, role: "option", "data-row": row,
      style: `top:${at * ROW}px;height:${ROW}px`, onclick: () => onPick(row) }, sides.map((sd) => rowCell(sd, row)));
  };
  function draw() {
    const [first, last] = rowsInView(top, height, rows.length);
    for (const [at, node] of shown) if (at < first || at >= last) { node.remove(); shown.delete(at); }
    for (let at = first; at < last; at++) {
      if (shown.has(at)) continue;
      const node = rowNode(at);
      shown.set(at, node);
      spacer.append(node);
    }
    for (const [at, node] of shown) {
      node.classList.toggle("mf-current", rows[at] === current);
      node.setAttribute("aria-selected", String(rows[at] === current));
    }
  }
  /** @param {readonly number[]} next */
  function setRows(next) {
    rows = next;
    top = 0;
    box.scrollTop = 0;
    for (const node of shown.values()) node.remove();
    shown.clear();
    spacer.style.height = `${rows.length * ROW}px`;
    empty.hidden = rows.length > 0;
  }
  box.addEventListener("scroll", () => { top = box.scrollTop; draw(); }, { passive: true });
  new ResizeObserver(() => { height = box.clientHeight || height; draw(); }).observe(box);
  setRows(rows);
  return {
    box,
    setRows,
    /** @param {number} row */
    show(row) {
      current = row;
      const want = scrollFor(Math.min(positionOf(rows, row), Math.max(0, rows.length - 1)), top, height);
      if (want !== top) {
        top = want;
        requestAnimationFrame(() => { box.scrollTop = top; }); // written once a frame: no forced layout per step
      }
      draw();
    },
  };
}
