// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";
import { concept, describe, describeItem, isItem, itemRef, join, num } from "../src/logic/describe.js";

test("a concept is its text, else its first coding's display or code", () => {
  assert.equal(concept({ text: "Omeprazole", coding: [{ display: "x" }] }), "Omeprazole");
  assert.equal(concept({ coding: [{ system: "s" }, { code: "K25" }, { display: "y" }] }), "K25");
  assert.equal(concept([{ coding: [{ display: "oral" }] }, { text: "second" }]), "oral");
  assert.equal(concept({ display: "a Coding" }), "a Coding");
  assert.equal(concept("plain"), "plain");
  assert.equal(concept(undefined), "");
  assert.equal(concept(7), "");
});

test("numbers keep three decimals; empty parts are left out of a join", () => {
  assert.equal(num(1.23456), "1.235");
  assert.equal(num(2), "2");
  assert.equal(num("12"), "12");
  assert.equal(join(["a", "", null, undefined, 0, "b"]), "a 0 b");
  assert.equal(join(["a", "b"], ", "), "a, b");
});

test("resources read as one line by their type", () => {
  assert.equal(describe({
    resourceType: "MedicationRequest", status: "active", medicationCodeableConcept: { text: "omeprazole" },
    dosageInstruction: [{ doseAndRate: [{ doseQuantity: { value: 20, unit: "mg" } }], route: { text: "oral" },
      timing: { code: { text: "daily" } } }],
  }), "omeprazole 20 mg daily oral, active");
  assert.equal(describe({
    resourceType: "Observation", status: "final", code: { text: "Hb" }, valueQuantity: { value: 9.1, unit: "g/dL" },
    interpretation: [{ coding: [{ code: "L", display: "low" }] }], focus: [{ display: "the transfusion" }],
  }), "Hb: 9.1 g/dL (low) for the transfusion, final");
  assert.equal(describe({ // a panel: no value of its own (the line keeps its colon), its components after a dash
    resourceType: "Observation", status: "final", code: { text: "Blood pressure" }, effectiveDateTime: "2025-03-01T08:00:00Z",
    component: [{ code: { text: "systolic" }, valueQuantity: { value: 150, unit: "mmHg" }, interpretation: [{ text: "high" }] },
      { code: { text: "diastolic" }, valueQuantity: { value: 90.25, unit: "mmHg" } }],
  }), "Blood pressure:, final (2025-03-01) \u2014 systolic 150 mmHg (high); diastolic 90.25 mmHg");
  assert.equal(describe({ resourceType: "Condition", code: { text: "gastric ulcer" }, onsetDateTime: "2024-12-30" }),
    "gastric ulcer, status unknown, since 2024-12-30");
  assert.equal(describe({
    resourceType: "AllergyIntolerance", code: { text: "penicillin" }, criticality: "high",
    reaction: [{ manifestation: [{ text: "rash" }, { text: "hives" }] }],
  }), "allergy to penicillin (reaction: rash, hives), criticality high");
  assert.equal(describe({ resourceType: "Patient", name: [{ given: ["Wei"], family: "Zhang" }], gender: "male", birthDate: "1960-01-02" }),
    "Wei Zhang, male, born 1960-01-02");
});

test("an unknown type, or a shape a describer does not expect, reads as its type, code and status", () => {
  assert.equal(describe({ resourceType: "Flag", code: { text: "fall risk" }, status: "active" }), "Flag \u00b7 fall risk \u00b7 active");
  assert.equal(describe({ resourceType: "Patient", name: [{ given: 5 }] }), "Patient"); // given is not a list: it throws
  assert.equal(describe(null), "");
  assert.equal(describe("text"), "");
});

test("a read tool's items read as one line, with their reference", () => {
  const patient = { patient_id: "p1", name: "Zhang Wei", mrn: "M1", gender: "male", birth_date: "1960-01-02" };
  assert.ok(isItem(patient));
  assert.equal(describeItem(patient), "Zhang Wei \u00b7 MRN M1 \u00b7 male \u00b7 born 1960-01-02");
  assert.equal(itemRef(patient), "Patient/p1");
  const lab = { id: "o1", type: "Observation", name: "Hb", value: { value: 9.1, unit: "g/dL" }, interpretation: "low",
    status: "final", time: "2025-03-01T08:00:00Z" };
  assert.ok(isItem(lab));
  assert.equal(describeItem(lab), "Hb 9.1 g/dL (low) \u00b7 final \u00b7 2025-03-01");
  assert.equal(itemRef(lab), "Observation/o1");
  assert.equal(describeItem({ id: "a", type: "AllergyIntolerance", name: "penicillin", reaction: ["rash"], end: "2025-01-01" }),
    "penicillin \u2014 rash to 2025-01-01");
  assert.ok(!isItem({ id: "x" }) && !isItem([patient]) && !isItem(null) && !isItem("Patient/p1"));
});
