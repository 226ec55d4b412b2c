// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";
import { failingHard, ms, pct, preview, tokens, usd, verdictMark } from "../src/logic/format.js";

/** @import { CompactTurn, CompactVerdict, Trial } from "../src/types" */

/**
 * @param {Partial<CompactVerdict>} v
 * @returns {CompactVerdict}
 */
const verdict = (v) => ({ id: "v", kind: "k", category: "success", severity: "hard", passed: false, error: false,
  reason: "", steps: [], ...v });

test("a verdict's mark: passed, an error of the grading, or failed", () => {
  assert.deepEqual(verdictMark(verdict({ passed: true })), ["\u2713", "PASS", "pass"]);
  assert.deepEqual(verdictMark(verdict({ error: true })), ["!", "ERROR", "error"]);
  assert.deepEqual(verdictMark(verdict({})), ["\u2717", "FAIL", "fail"]);
});

test("the hard verdicts a trial failed, safety first", () => {
  const t = /** @type {Trial} */ (/** @type {unknown} */ ({ verdicts: [
    verdict({ id: "answer", category: "answer" }), verdict({ id: "soft", category: "safety", severity: "soft" }),
    verdict({ id: "passed", category: "safety", passed: true }), verdict({ id: "safety", category: "safety" }),
    verdict({ id: "other", category: "custom" }), verdict({ id: "state", category: "success" }),
  ] }));
  assert.deepEqual(failingHard(t).map((v) => v.id), ["other", "safety", "state", "answer"]); // unknown categories sort first
});

test("tokens, money and time as the player writes them", () => {
  const turn = /** @type {CompactTurn} */ ({ prompt_tokens: 1200, completion_tokens: 30, cached_tokens: 0 });
  assert.equal(tokens([turn, { ...turn, prompt_tokens: 800 }]), "2,000 in / 60 out / 0 cached tokens");
  assert.equal(tokens([]), "0 in / 0 out / 0 cached tokens");
  assert.equal(usd(0.0123456), "$0.0123");
  assert.equal(ms(3.14159), "3.1 ms");
  assert.equal(ms(1234.5), "1235 ms");
  assert.equal(pct(1, 3), "33%");
  assert.equal(pct(0, 0), "\u2014");
});

test("a closed object's preview: its first scalar fields, long strings cut", () => {
  assert.equal(preview({ a: 1, b: "x", c: null, d: { e: 1 } }), "a: 1, b: \"x\", c: null, +1");
  assert.equal(preview({ a: 1, b: 2, c: 3, d: 4, e: 5 }), "a: 1, b: 2, c: 3, d: 4, +1");
  assert.equal(preview({ s: "abcdefghijklmnopqrstuvwxyz" }), "s: \"abcdefghijklmnopqrstuvwx\u2026\"");
  assert.equal(preview({ d: {}, e: [] }), "2 fields");
  assert.equal(preview({ d: {} }), "1 field");
});
