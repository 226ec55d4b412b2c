// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";
import { diffState, fieldChanges, versionAt } from "../src/logic/state.js";

/** @import { CompactResource } from "../src/types" */

/** @type {CompactResource} */
const order = {
  initial: null,
  versions: [[2, { status: "draft", dose: { value: 5 } }], [5, { status: "active", dose: { value: 10 } }], [7, null]],
};

test("a resource's version after a step is the latest at or before it", () => {
  assert.deepEqual(versionAt(order, 0), [0, null]);
  assert.deepEqual(versionAt(order, 1), [0, null]);
  assert.deepEqual(versionAt(order, 2), [2, { status: "draft", dose: { value: 5 } }]);
  assert.deepEqual(versionAt(order, 4), [2, { status: "draft", dose: { value: 5 } }]);
  assert.deepEqual(versionAt(order, 6)[0], 5);
  assert.deepEqual(versionAt(order, 99), [7, null]);
  assert.deepEqual(versionAt({ initial: { a: 1 }, versions: [] }, 3), [0, { a: 1 }]);
});

test("field changes name each path, nested objects and arrays field by field", () => {
  const before = { status: "active", code: { coding: [{ code: "a" }, { code: "b" }] }, note: "x" };
  const after = { status: "stopped", code: { coding: [{ code: "a" }] }, extra: [1] };
  assert.deepEqual(fieldChanges(before, after), [
    { path: "status", before: "active", after: "stopped" },
    { path: "code.coding[1]", before: { code: "b" }, after: undefined },
    { path: "note", before: "x", after: undefined },
    { path: "extra", before: undefined, after: [1] },
  ]);
  assert.deepEqual(fieldChanges({ a: 1 }, { a: 1 }), []);
  assert.deepEqual(fieldChanges(1, "1"), [{ path: "(whole resource)", before: 1, after: "1" }]);
  assert.deepEqual(fieldChanges([1], { 0: 1 }), [{ path: "(whole resource)", before: [1], after: { 0: 1 } }]);
});

test("the state diff lists what changed between two steps, the latest change first", () => {
  /** @type {Record<string, CompactResource>} */
  const resources = {
    "MedicationRequest/m1": order,
    "Condition/c1": { initial: { code: "x" }, versions: [[3, { code: "y" }]] },
    "Observation/o1": { initial: { v: 1 }, versions: [[4, { v: 1 }]] }, // written again, unchanged
  };
  const sinceStart = diffState(resources, 0, 5);
  assert.deepEqual(sinceStart.map((d) => [d.key, d.status, d.at]), [
    ["MedicationRequest/m1", "added", 5], ["Condition/c1", "changed", 3]]);
  assert.deepEqual(sinceStart[1].fields, [{ path: "code", before: "x", after: "y" }]);
  assert.deepEqual(sinceStart[0].fields, []); // added: no field list
  const atStep5 = diffState(resources, 4, 5);
  assert.deepEqual(atStep5.map((d) => [d.key, d.status]), [["MedicationRequest/m1", "changed"]]);
  assert.deepEqual(atStep5[0].fields.map((f) => f.path), ["status", "dose.value"]);
  assert.deepEqual(diffState(resources, 6, 7).map((d) => [d.key, d.status, d.after]), [["MedicationRequest/m1", "removed", null]]);
  assert.deepEqual(diffState(resources, 7, 7), []);
});
