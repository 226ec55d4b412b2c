// @ts-check
// The patient-state diff: what a trial's calls changed in the record, from the versions of each resource it wrote
// (the compact trajectory's `resources`). No DOM.

/** @import { CompactResource } from "../types" */

/** @typedef {{ [k: string]: unknown } | null} Version  A resource as it was (null: absent). */
/** @typedef {{ path: string, before: unknown, after: unknown }} FieldChange */
/**
 * A resource changed between two steps; `at`: the step that made its later version (0: as the trial found it).
 * @typedef {{ key: string, status: "added" | "changed" | "removed", before: Version, after: Version, at: number,
 *   fields: FieldChange[] }} ResourceChange
 */

/**
 * A written resource after `step`, and the step that made that version (0: as the trial found it).
 * @param {CompactResource} entry
 * @param {number} step
 * @returns {[number, Version]}
 */
export function versionAt(entry, step) {
  let lo = 0, hi = entry.versions.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (entry.versions[mid][0] <= step) lo = mid + 1;
    else hi = mid;
  }
  return lo ? entry.versions[lo - 1] : [0, entry.initial];
}

/**
 * Whether two JSON values are the same.
 * @param {unknown} a
 * @param {unknown} b
 */
export const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/**
 * @param {unknown} v
 * @returns {v is { [k: string]: unknown }}
 */
const isObject = (v) => !!v && typeof v === "object" && !Array.isArray(v);

/**
 * The fields that differ between two versions of a value, each with its path (`a.b[0].c`) and both values
 * (undefined: absent); objects and arrays are compared field by field, anything else whole.
 * @param {unknown} before
 * @param {unknown} after
 * @param {string} [path]
 * @param {FieldChange[]} [out]
 * @returns {FieldChange[]}
 */
export function fieldChanges(before, after, path = "", out = []) {
  if (same(before, after)) return out;
  if (isObject(before) && isObject(after)) {
    for (const k of new Set([...Object.keys(before), ...Object.keys(after)])) fieldChanges(before[k], after[k], path ? `${path}.${k}` : k, out);
  } else if (Array.isArray(before) && Array.isArray(after)) {
    for (let i = 0; i < Math.max(before.length, after.length); i++) fieldChanges(before[i], after[i], `${path}[${i}]`, out);
  } else {
    out.push({ path: path || "(whole resource)", before, after });
  }
  return out;
}

/**
 * What changed in the record after step `from` up to and including step `to`, the latest change first.
 * @param {{ [key: string]: CompactResource }} resources
 * @param {number} from
 * @param {number} to
 * @returns {ResourceChange[]}
 */
export function diffState(resources, from, to) {
  /** @type {ResourceChange[]} */
  const out = [];
  for (const [key, entry] of Object.entries(resources)) {
    const [, before] = versionAt(entry, from), [at, after] = versionAt(entry, to);
    if (before === after || same(before, after)) continue;
    const status = before == null ? "added" : after == null ? "removed" : "changed";
    out.push({ key, status, before, after, at, fields: status === "changed" ? fieldChanges(before, after) : [] });
  }
  return out.sort((x, y) => y.at - x.at);
}
