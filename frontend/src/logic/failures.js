// @ts-check
// The failure browser's filters, sort and count line. No DOM.

/** @import { SortDirection } from "../types" */

/**
 * The filters with `name` set to `value` (an empty value removes it).
 * @param {Record<string, string>} filters
 * @param {string} name
 * @param {string} value
 */
export function withFilter(filters, name, value) {
  const next = { ...filters };
  if (value) next[name] = value; else delete next[name];
  return next;
}

/**
 * The sort after a click on column `name`: ascending, or the other way round when it already sorts ascending.
 * @param {[string, SortDirection]} sort
 * @param {string} name
 * @returns {[string, SortDirection]}
 */
export const nextSort = ([column, direction], name) => [name, name === column && direction === "asc" ? "desc" : "asc"];

/**
 * A column header's aria-sort value and the arrow after its label.
 * @param {[string, SortDirection]} sort
 * @param {string} name
 * @returns {["ascending" | "descending" | "none", string]}
 */
export const sortMarks = ([column, direction], name) => (name !== column ? ["none", ""]
  : direction === "asc" ? ["ascending", " \u25b2"] : ["descending", " \u25bc"]);

/**
 * The header's count: how many failed trials match the filters, or how many failed.
 * @param {readonly [string, string][]} filters
 * @param {number} matching
 * @param {number} total
 */
export const countLine = (filters, matching, total) => (filters.length
  ? `${matching} of ${total} match ${filters.map(([k, v]) => `${k} = ${v}`).join(", ")}`
  : `${total} failed trial${total === 1 ? "" : "s"}`);
