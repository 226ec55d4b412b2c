// @ts-check
// What every widget's module shares: player.js, failures.js and dashboard.js import these helpers from here.

/** @import { Model } from "./types" */
/** @import { Attrs, Kid, Leaf, Listener } from "./dom" */

/**
 * An element with its attributes and children (dom.d.ts says what each may be).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs | null} [attrs]
 * @param {...Kid} kids
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs, ...kids) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = /** @type {string} */ (v);
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), /** @type {Listener} */ (v));
    else node.setAttribute(k, v === true ? "" : /** @type {string} */ (v));
  }
  for (const kid of /** @type {Leaf[]} */ (/** @type {unknown[]} */ (kids).flat(Infinity))) {
    if (kid === undefined || kid === null || kid === false) continue;
    node.append(kid instanceof Node ? kid : String(kid));
  }
  return node;
}

/**
 * The synthetic-data banner a widget opens with (common.css shows one per output when widgets are stacked).
 * @param {string} text
 */
export const banner = (text) => h("div", { class: "mf-banner", role: "note" }, text);

/**
 * Set a synced value and send it to the kernel.
 * @template S
 * @template {keyof S & string} K
 * @param {Model<S>} model
 * @param {K} key
 * @param {S[K]} value
 */
export function sync(model, key, value) {
  model.set(key, value);
  model.save_changes();
}

/**
 * Call each handler on its model event ({"change:rows": paint, ...}) until the function returned is called.
 * @template S
 * @param {Model<S>} model
 * @param {Record<string, () => void>} handlers
 * @returns {() => void}
 */
export function listen(model, handlers) {
  for (const [event, handler] of Object.entries(handlers)) model.on(event, handler);
  return () => { for (const [event, handler] of Object.entries(handlers)) model.off(event, handler); };
}
