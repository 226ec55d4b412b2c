// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";
import { align, side } from "../src/logic/align.js";
import {
  filterChoices, filterRows, finishStep, judgedSteps, judgesAnswer, jumpRows, NO_FILTER, nextIn, positionOf, settle, showing,
} from "../src/logic/navigate.js";

/** @import { CompactVerdict, Step, Trial } from "../src/types" */

/**
 * A call: a read by default, ok, changing nothing.
 * @param {number} step
 * @param {string} tool
 * @param {Partial<Step>} more
 * @returns {Step}
 */
const call = (step, tool, more = {}) => /** @type {Step} */ (/** @type {unknown} */ ({
  step, tool, kind: "read", ok: true, changes: [], flags: [], fault: null, denied: null, ...more }));

/**
 * @param {string} id
 * @param {Partial<CompactVerdict>} more
 * @returns {CompactVerdict}
 */
const verdict = (id, more = {}) => ({ id, kind: "k", category: "safety", severity: "hard", passed: true, error: false, reason: "", steps: [], ...more });

/**
 * @param {Step[]} steps
 * @param {CompactVerdict[]} verdicts
 * @returns {Trial}
 */
const trial = (steps, verdicts = []) => /** @type {Trial} */ (/** @type {unknown} */ ({ steps, verdicts, turns: [] }));

const WRITE = { kind: "write", changes: [{ op: "add", path: "/MedicationRequest/1", value: {} }] };

/** A long trial: 100 calls; every 10th writes, the 25th fails, the 75th meets an injected fault, the 40th is refused, the last finishes. */
function long() {
  const steps = [];
  for (let i = 1; i <= 99; i++) {
    const more = i % 10 === 0 ? WRITE : i === 25 ? { ok: false } : i === 75 ? { fault: "timeout" } : {};
    steps.push(call(i, i % 10 === 0 ? "medication_request_create" : "lab_search", more));
  }
  steps[39] = call(40, "medication_request_create", { kind: "write", ok: false, denied: "unauthorized_write" });
  steps.push(call(100, "finish", { kind: "compute" }));
  return trial(steps, [
    verdict("checks-first", { passed: false, steps: [30] }),
    verdict("writes", { steps: [10, 20] }),
    verdict("typed", { category: "answer", passed: false }),
    verdict("budget", { category: "budget" }),
  ]);
}

/** @param {Trial} t */
const alone = (t) => [side(t, align(t.steps, null), 0)];

test("an answer verdict pointing at no step judged the finish call; other verdicts keep their own steps", () => {
  const t = long();
  assert.equal(finishStep(t), 100);
  assert.equal(finishStep(trial([call(1, "lab_search")])), null);
  const [checks, , typed, budget] = t.verdicts;
  assert.deepEqual(judgedSteps(typed, 100), [100]);
  assert.deepEqual(judgedSteps(typed, null), []); // no finish call: nothing to point at
  assert.deepEqual(judgedSteps(checks, 100), [30]);
  assert.deepEqual(judgedSteps(budget, 100), []); // the whole trial, not the answer
  assert.deepEqual(judgedSteps(verdict("grounded", { category: "answer", steps: [4] }), 100), [4]);
  assert.equal(judgesAnswer(typed), true);
  assert.equal(judgesAnswer(checks), false);
  assert.deepEqual(alone(t)[0].marks.get(100)?.map((v) => v.id), ["typed"]);
});

test("the rows of each kind: changes, verdicts, faults and writes", () => {
  const sides = alone(long());
  const all = [...Array(100).keys()];
  const kinds = jumpRows(sides, all);
  assert.deepEqual(kinds.change, [9, 19, 29, 49, 59, 69, 79, 89]); // the refused write at step 40 changed nothing
  assert.deepEqual(kinds.write, [9, 19, 29, 39, 49, 59, 69, 79, 89]);
  assert.deepEqual(kinds.fault, [24, 39, 74]); // an error, a refusal, an injected fault
  assert.deepEqual(kinds.verdict, [9, 19, 29, 99]); // the answer verdict at the finish call
  assert.deepEqual(jumpRows(sides, [39, 49, 50]).change, [49]); // only among the rows shown
});

test("next and previous from a row, whether or not the row is one of them", () => {
  const rows = [9, 19, 29, 99];
  assert.equal(nextIn(rows, 0, 1), 9);
  assert.equal(nextIn(rows, 9, 1), 19);
  assert.equal(nextIn(rows, 10, 1), 19);
  assert.equal(nextIn(rows, 99, 1), null);
  assert.equal(nextIn(rows, 99, -1), 29);
  assert.equal(nextIn(rows, 20, -1), 19);
  assert.equal(nextIn(rows, 9, -1), null);
  assert.equal(nextIn([], 3, 1), null);
  assert.equal(positionOf(rows, 19), 1);
  assert.equal(positionOf(rows, 20), 2);
  assert.equal(positionOf(rows, 500), 4);
});

test("a filter by tool or by verdict keeps the rows it asks for, and stepping stays within them", () => {
  const sides = alone(long());
  assert.equal(filterRows(sides, 100, NO_FILTER).length, 100);
  const writes = filterRows(sides, 100, { tool: "medication_request_create", verdict: "" });
  assert.deepEqual(writes, [9, 19, 29, 39, 49, 59, 69, 79, 89]);
  assert.deepEqual(filterRows(sides, 100, { tool: "", verdict: "failed" }), [29, 99]);
  assert.deepEqual(filterRows(sides, 100, { tool: "", verdict: "any" }), [9, 19, 29, 99]);
  assert.deepEqual(filterRows(sides, 100, { tool: "", verdict: "verdict:writes" }), [9, 19]);
  assert.deepEqual(filterRows(sides, 100, { tool: "medication_request_create", verdict: "failed" }), [29]);
  assert.deepEqual(filterRows(sides, 100, { tool: "nothing_called", verdict: "" }), []);
  assert.equal(nextIn(writes, 19, 1), 29); // the Right key on a filtered list
  assert.equal(settle(writes, 25), 29); // a row the filter hides: on to the next shown
  assert.equal(settle(writes, 95), 89); // none after: the last shown
  assert.equal(settle(writes, 19), 19);
  assert.equal(settle([], 7), 7);
  assert.equal(showing(12, 350, false), "showing 12 of 350 steps");
  assert.equal(showing(350, 350, false), "showing all 350 steps");
  assert.equal(showing(1, 9, true), "showing 1 of 9 rows");
});

test("the filter offers each tool called with its count, and the verdicts that judged a step, failed first", () => {
  const { tools, verdicts } = filterChoices(alone(long()));
  assert.deepEqual(tools, [["finish", 1], ["lab_search", 90], ["medication_request_create", 9]]);
  assert.deepEqual(verdicts.map((v) => v.id), ["checks-first", "typed", "writes"]); // budget judged no step
});

test("side by side, a row counts when either trial's step there does", () => {
  const a = trial([call(1, "lab_search"), call(2, "finish")]);
  const b = trial([call(1, "lab_search"), call(2, "medication_request_create", WRITE), call(3, "finish")],
    [verdict("writes", { passed: false, steps: [2] })]);
  const rows = align(a.steps, b.steps);
  const sides = [side(a, rows, 0), side(b, rows, 1)];
  assert.deepEqual(rows, [[0, 0], [-1, 1], [1, 2]]);
  assert.deepEqual(jumpRows(sides, [0, 1, 2]).change, [1]);
  assert.deepEqual(filterRows(sides, 3, { tool: "", verdict: "failed" }), [1]);
  assert.deepEqual(filterRows(sides, 3, { tool: "finish", verdict: "" }), [2]);
});
