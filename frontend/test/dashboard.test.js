// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";
import { checkClass, clicked, headline, passesText, selectionLine } from "../src/logic/dashboard.js";

test("the heading counts the run's tasks, agents and trials", () => {
  assert.equal(headline({ run_id: "r1", tasks: 82, agents: ["a", "b"], trials: 492, passed: 123 }),
    "run r1 \u00b7 82 tasks \u00b7 2 agents \u00b7 492 trials, 123 passed (25%)");
});

test("a click selects the agent of the mark, and on the pass-rate grid its dimension", () => {
  const item = { datum: { agent: "a", dimension: "d" } };
  assert.deepEqual(clicked("pass_rates", item), { agent: "a", dimension: "d" });
  assert.deepEqual(clicked("overall", item), { agent: "a", dimension: "" });
  assert.equal(clicked("pass_rates", { datum: { dimension: "d" } }), null); // an axis label, say
  assert.equal(clicked("pass_rates", null), null);
  assert.equal(clicked("pass_rates", {}), null);
});

test("the selection line names the agent and the dimension, or every dimension", () => {
  assert.equal(selectionLine({ agent: "a", dimension: "d" }), "Failure browser: a \u00d7 d ");
  assert.equal(selectionLine({ agent: "a", dimension: "" }), "Failure browser: a, every dimension ");
  assert.equal(selectionLine({}), null);
  assert.equal(selectionLine({ agent: "a", task: "T-1" }), "Failure browser: a on T-1 ");
});

test("a task cell says k of n passed, or a dash for a task the agent did not run", () => {
  assert.equal(passesText({ agent: "a", passed: 2, trials: 3, unstable: true }), "2 of 3");
  assert.equal(passesText(null), "\u2014");
});

test("a gate check's class follows its status", () => {
  assert.equal(checkClass("PASS"), "fd-pass");
  assert.equal(checkClass("NOT RUN"), "fd-not-run");
});
