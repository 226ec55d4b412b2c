// @ts-check
// JSON, pretty and folded: long strings cut with a link to the rest, large or deep objects and arrays closed.

import { h } from "../common.js";
import { preview } from "../logic/format.js";

const FOLD_CHARS = 160; // strings longer than this are folded
const FOLD_ITEMS = 12; // arrays and objects longer than this start closed

/**
 * A JSON scalar, coloured by its type; a long string folded.
 * @param {unknown} v
 */
export function scalar(v) {
  if (typeof v !== "string") return h("span", { class: `mf-j-${v === null ? "null" : typeof v}` }, JSON.stringify(v));
  if (v.length <= FOLD_CHARS) return h("span", { class: "mf-j-string" }, JSON.stringify(v));
  const full = h("span", { class: "mf-j-string" }, JSON.stringify(v));
  const more = h("button", { class: "mf-link", type: "button" }, `\u2026 ${v.length - FOLD_CHARS} more characters`);
  const short = h("span", { class: "mf-j-string" }, JSON.stringify(v.slice(0, FOLD_CHARS)).slice(0, -1), more);
  more.addEventListener("click", () => short.replaceWith(full));
  return short;
}

/**
 * A JSON value as a tree of <details>, open to depth 3 where not too long.
 * @param {unknown} value
 * @param {number} [depth]
 * @returns {HTMLElement}
 */
export function jsonTree(value, depth = 0) {
  if (value === null || typeof value !== "object") return scalar(value);
  /** @type {[string | number, unknown][]} */
  const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  const [open, close] = Array.isArray(value) ? ["[", "]"] : ["{", "}"];
  if (!entries.length) return h("span", { class: "mf-j-punct" }, open + close);
  const size = Array.isArray(value) ? `${entries.length} item${entries.length > 1 ? "s" : ""}` : preview(value);
  const body = h("div", { class: "mf-j-body" }, entries.map(([k, v]) =>
    h("div", { class: "mf-j-row" }, Array.isArray(value) ? null : h("span", { class: "mf-j-key" }, `${k}: `), jsonTree(v, depth + 1))));
  return h("details", { class: "mf-j", open: depth < 3 && entries.length <= FOLD_ITEMS },
    h("summary", {}, h("span", { class: "mf-j-punct" }, open), h("span", { class: "mf-j-size" }, ` ${size} `), h("span", { class: "mf-j-punct" }, close)),
    body);
}
