// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";
import { OVERSCAN, ROW, rowsInView, scrollFor } from "../src/logic/viewport.js";

test("the rows drawn are those in view and a few beyond each edge, within the list", () => {
  assert.deepEqual(rowsInView(0, 10 * ROW, 1000), [0, 10 + OVERSCAN]);
  assert.deepEqual(rowsInView(100 * ROW, 10 * ROW, 1000), [100 - OVERSCAN, 110 + OVERSCAN]);
  assert.deepEqual(rowsInView(100 * ROW + 1, 10 * ROW, 1000), [100 - OVERSCAN, 111 + OVERSCAN]); // a row cut in half
  assert.deepEqual(rowsInView(995 * ROW, 10 * ROW, 1000), [995 - OVERSCAN, 1000]);
  assert.deepEqual(rowsInView(0, 480, 3), [0, 3]);
  assert.deepEqual(rowsInView(0, 480, 0), [0, 0]);
});

test("showing a row scrolls as little as it must", () => {
  const height = 10 * ROW;
  assert.equal(scrollFor(5, 0, height), 0); // in view: stays
  assert.equal(scrollFor(9, 0, height), 0); // the last whole row
  assert.equal(scrollFor(10, 0, height), ROW); // one below: by one row, to the bottom edge
  assert.equal(scrollFor(50, 0, height), 41 * ROW);
  assert.equal(scrollFor(3, 20 * ROW, height), 3 * ROW); // above: to the top edge
  assert.equal(scrollFor(0, 20 * ROW, height), 0);
});
