// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";
import { countLine, nextSort, sortMarks, withFilter } from "../src/logic/failures.js";

test("a filter is set, changed or removed, the filters given left as they were", () => {
  const filters = { agent: "a" };
  assert.deepEqual(withFilter(filters, "suite", "s"), { agent: "a", suite: "s" });
  assert.deepEqual(withFilter(filters, "agent", "b"), { agent: "b" });
  assert.deepEqual(withFilter(filters, "agent", ""), {});
  assert.deepEqual(filters, { agent: "a" });
});

test("a click on a column sorts by it ascending, a second click descending, a third ascending again", () => {
  assert.deepEqual(nextSort(["critical", "desc"], "agent"), ["agent", "asc"]);
  assert.deepEqual(nextSort(["agent", "asc"], "agent"), ["agent", "desc"]);
  assert.deepEqual(nextSort(["agent", "desc"], "agent"), ["agent", "asc"]);
  assert.deepEqual(sortMarks(["agent", "asc"], "agent"), ["ascending", " \u25b2"]);
  assert.deepEqual(sortMarks(["agent", "desc"], "agent"), ["descending", " \u25bc"]);
  assert.deepEqual(sortMarks(["agent", "desc"], "suite"), ["none", ""]);
});

test("the count line says what the filters match, or how many trials failed", () => {
  assert.equal(countLine([["agent", "a"], ["dimension", "d"]], 3, 40), "3 of 40 match agent = a, dimension = d");
  assert.equal(countLine([], 40, 40), "40 failed trials");
  assert.equal(countLine([], 1, 1), "1 failed trial");
});
