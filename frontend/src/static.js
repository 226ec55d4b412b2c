// @ts-check
// Mounts the player module in a static page: no kernel, no widget manager. MF_ID names the page's element (page.py
// defines it before this script); its JSON sibling holds the state and the module's source, or, on a page of many
// players, the page's one #mf-player-module element holds the source. It is imported from a blob: URL.

/** @import { PlayerState } from "./types" */

const box = /** @type {HTMLElement} */ (document.getElementById(MF_ID));
/** @param {string} id */
const json = (id) => JSON.parse(/** @type {string} */ (/** @type {HTMLElement} */ (document.getElementById(id)).textContent));
/** @type {{ state: PlayerState, esm?: string }} */
const { state, esm = json("mf-player-module") } = json(`${MF_ID}-data`);
// A static page's state never changes: the model only answers get, and nothing is ever announced to on().
const model = { get: (/** @type {keyof PlayerState} */ key) => state[key], on: () => {}, off: () => {} };
const url = URL.createObjectURL(new Blob([esm], { type: "text/javascript" }));
try {
  (await import(url)).default.render({ model, el: box });
} finally {
  URL.revokeObjectURL(url);
}
