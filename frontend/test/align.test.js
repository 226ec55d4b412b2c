// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";
import { align, side } from "../src/logic/align.js";

/** @import { Trial } from "../src/types" */

/** @param {string} names one letter a tool */
const calls = (names) => [...names].map((tool) => ({ tool }));

test("one trial alone is its own rows", () => {
  assert.deepEqual(align(calls("abc"), null), [[0, -1], [1, -1], [2, -1]]);
  assert.deepEqual(align([], undefined), []);
});

test("two trials align on their longest common run of tools, gaps where they differ", () => {
  assert.deepEqual(align(calls("abc"), calls("abc")), [[0, 0], [1, 1], [2, 2]]);
  assert.deepEqual(align(calls("abc"), calls("ac")), [[0, 0], [1, -1], [2, 1]]);
  assert.deepEqual(align(calls("ac"), calls("abc")), [[0, 0], [-1, 1], [1, 2]]);
  assert.deepEqual(align(calls("xy"), calls("zw")), [[0, -1], [1, -1], [-1, 0], [-1, 1]]); // A's before B's
  assert.deepEqual(align(calls(""), calls("ab")), [[-1, 0], [-1, 1]]);
  const rows = align(calls("rrwfr"), calls("rwwfx"));
  const matched = rows.filter(([i, j]) => i >= 0 && j >= 0);
  assert.equal(matched.length, 3); // r, w, f
  for (const [i, j] of matched) assert.equal("rrwfr"[i], "rwwfx"[j]);
  for (const which of [0, 1]) { // each side's steps in order, each once
    const idx = rows.map((r) => r[which]).filter((i) => i >= 0);
    assert.deepEqual(idx, [...idx.keys()]);
  }
});

/**
 * A trial with calls at steps 1..n (tools from `names`), and the verdicts and model turns given.
 * @param {string} names
 * @param {Partial<Trial>} more
 * @returns {Trial}
 */
const trial = (names, more = {}) => /** @type {Trial} */ (/** @type {unknown} */ ({
  steps: [...names].map((tool, i) => ({ step: i + 1, tool })), verdicts: [], turns: [], ...more }));

test("a side knows its step at each row, the last step reached, and the verdicts and turns by step", () => {
  const a = trial("abc", {
    verdicts: /** @type {Trial["verdicts"]} */ ([{ id: "v1", steps: [1, 3] }, { id: "v2", steps: [3] }]),
    turns: /** @type {Trial["turns"]} */ ([{ turn: 1, after_step: 0 }, { turn: 2, after_step: 2 }, { turn: 3, after_step: 3 }]),
  });
  const rows = align(a.steps, calls("xac"));
  const sd = side(a, rows, 0);
  assert.deepEqual(rows, [[-1, 0], [0, 1], [1, -1], [2, 2]]);
  assert.deepEqual(sd.idx, [-1, 0, 1, 2]);
  assert.deepEqual(sd.reached, [0, 1, 2, 3]); // none yet at B's first call
  assert.equal(sd.step(0), null);
  assert.equal(sd.step(1)?.tool, "a");
  assert.deepEqual(side(trial("xac"), rows, 1).idx, [0, 1, -1, 2]);
  assert.deepEqual([...sd.marks].map(([step, vs]) => [step, vs.map((v) => v.id)]), [[1, ["v1"]], [3, ["v1", "v2"]]]);
  // before step 1; before step 3; after the last step, shown with it
  assert.deepEqual([...sd.spoke].map(([step, ts]) => [step, ts.map((t) => t.turn)]), [[1, [1]], [3, [2, 3]]]);
  const none = side(trial("", { turns: /** @type {Trial["turns"]} */ ([{ turn: 1, after_step: 0 }]) }), [], 0);
  assert.deepEqual([...none.spoke.keys()], [0]); // a trial without a call: its turns at step 0
});
