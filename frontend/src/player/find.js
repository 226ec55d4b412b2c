// @ts-check
// The find bar under the controls: jump to the next or previous change, verdict, fault or write; show only the
// calls of one tool or the steps a verdict judged, with how many are shown and a way back to all; and the keys.

/** @import { Side } from "../logic/align.js" */
/** @import { Filter, JumpKind } from "../logic/navigate.js" */
import { h } from "../common.js";
import { filterChoices, filtering, JUMPS, NO_FILTER, nextIn, showing } from "../logic/navigate.js";

/** @param {string} key */
const upper = (key) => key.toUpperCase();

/** The player's keys, as its help lists them. */
const KEYS = [
  ["\u2190 \u2192", "previous / next step (of those shown)"],
  ["Home End", "first / last step"],
  ["Space", "play / pause"],
  ...JUMPS.map((j) => [`${upper(j.key)}  Shift+${upper(j.key)}`, `next / previous ${j.label}: ${j.title}`]),
];

/** The keys, folded: they work once the player has been clicked. */
const keysHelp = () => h("details", { class: "mf-keys" }, h("summary", { title: "keyboard shortcuts" }, "Keys"),
  h("div", { class: "mf-keys-body" }, h("p", { class: "mf-muted" }, "Click the player first; then:"),
    h("dl", {}, KEYS.map(([keys, what]) => [h("dt", {}, keys), h("dd", {}, what)]))));

/**
 * @param {readonly Side[]} sides
 * @param {(kind: JumpKind, dir: 1 | -1) => void} onJump
 * @param {(filter: Filter) => void} onFilter
 */
export function findBar(sides, onJump, onFilter) {
  /** @type {Map<string, HTMLButtonElement>} */
  const buttons = new Map(); // "kind dir" -> its button
  /** @type {Map<JumpKind, HTMLElement>} */
  const counts = new Map();
  const jumps = JUMPS.map(({ kind, key, label, title }) => {
    /** @param {1 | -1} dir */
    const btn = (dir) => {
      const [word, keys] = dir > 0 ? ["next", upper(key)] : ["previous", `Shift+${upper(key)}`];
      const b = /** @type {HTMLButtonElement} */ (h("button", { class: "mf-jump-btn", type: "button", "data-jump": kind, "data-dir": dir,
        "aria-label": `${word} ${label}`, title: `${word} ${label}: ${title} (${keys})`, onclick: () => onJump(kind, dir) },
      dir > 0 ? "\u25b6" : "\u25c0"));
      buttons.set(`${kind} ${dir}`, b);
      return b;
    };
    const n = h("span", { class: "mf-jump-count" });
    counts.set(kind, n);
    return h("span", { class: "mf-jump", "data-kind": kind }, btn(-1),
      h("span", { class: "mf-jump-label", title }, label, n), btn(1));
  });
  const { tools, verdicts } = filterChoices(sides);
  const toolPick = /** @type {HTMLSelectElement} */ (h("select", { class: "mf-filter-tool", "aria-label": "show only the calls of one tool" },
    h("option", { value: "" }, "every tool"), tools.map(([name, n]) => h("option", { value: name }, `${name} (${n})`))));
  const verdictPick = /** @type {HTMLSelectElement} */ (h("select", { class: "mf-filter-verdict", "aria-label": "show only the steps a verdict judged" },
    h("option", { value: "" }, "with or without a verdict"), h("option", { value: "any" }, "judged by a verdict"),
    h("option", { value: "failed" }, "judged by a failed verdict"),
    verdicts.map((v) => h("option", { value: `verdict:${v.id}` }, `judged by ${v.id}${v.passed ? "" : " (failed)"}`))));
  const shown = h("span", { class: "mf-showing", "aria-live": "polite" });
  const clear = h("button", { class: "mf-link mf-clear", type: "button", onclick: () => onFilter(NO_FILTER) }, "clear filter");
  const picked = () => onFilter({ tool: toolPick.value, verdict: verdictPick.value });
  toolPick.addEventListener("change", picked);
  verdictPick.addEventListener("change", picked);
  const box = h("div", { class: "mf-find" },
    h("div", { class: "mf-jumps", role: "group", "aria-label": "jump to" }, h("span", { class: "mf-find-label" }, "Jump to"), jumps),
    h("div", { class: "mf-filter", role: "group", "aria-label": "filter the steps" }, h("span", { class: "mf-find-label" }, "Show"),
      toolPick, verdictPick, shown, clear),
    keysHelp());
  return {
    box,
    /**
     * Show what the filter leaves: the rows shown of how many, the rows of each kind among them, and the filter.
     * @param {readonly number[]} visible
     * @param {number} total
     * @param {Record<JumpKind, number[]>} kinds
     * @param {Filter} filter
     */
    filtered(visible, total, kinds, filter) {
      for (const { kind } of JUMPS) counts.get(kind)?.replaceChildren(String(kinds[kind].length));
      toolPick.value = filter.tool;
      verdictPick.value = filter.verdict;
      shown.textContent = showing(visible.length, total, sides.length > 1);
      clear.hidden = !filtering(filter);
    },
    /**
     * Grey the jumps that have nowhere to go from `row`; only what changes is written (this runs at every step).
     * @param {number} row
     * @param {Record<JumpKind, number[]>} kinds
     */
    at(row, kinds) {
      for (const { kind } of JUMPS) {
        for (const dir of /** @type {const} */ ([1, -1])) {
          const b = /** @type {HTMLButtonElement} */ (buttons.get(`${kind} ${dir}`));
          const none = nextIn(kinds[kind], row, dir) === null;
          if (b.disabled !== none) b.disabled = none;
        }
      }
    },
  };
}
