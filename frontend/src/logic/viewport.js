// @ts-check
// The player's step list is virtualised: only the rows in view (and a few more) exist. Which rows those are, and
// where to scroll to show a row, from the scroll offset and the list's height. No DOM.

/** Pixels per step row. */
export const ROW = 44;
/** Rows kept beyond each edge of the view. */
export const OVERSCAN = 8;

/**
 * The rows to draw, [first, last), for a list of `count` rows scrolled to `top` in a box `height` pixels high.
 * @param {number} top
 * @param {number} height
 * @param {number} count
 * @returns {[number, number]}
 */
export const rowsInView = (top, height, count) =>
  [Math.max(0, Math.floor(top / ROW) - OVERSCAN), Math.min(count, Math.ceil((top + height) / ROW) + OVERSCAN)];

/**
 * The scroll offset that shows `row` whole, moving as little as possible from `top`.
 * @param {number} row
 * @param {number} top
 * @param {number} height
 */
export const scrollFor = (row, top, height) =>
  (row * ROW < top ? row * ROW : row * ROW + ROW > top + height ? row * ROW + ROW - height : top);
