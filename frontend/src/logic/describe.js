// @ts-check
// FHIR resources and read tools' items as one readable line each, as the replay player shows them. No DOM.
//
// The resources are as the EHR wrote them, of any shape (a FHIR resource type has many optional parts), so they are
// typed `Fhir` (any) and read defensively: a shape a describer does not expect falls back to a generic line.

/** @typedef {any} Fhir  A FHIR resource or a part of one, as the record holds it. */
/** @typedef {{ [k: string]: any }} Item  An item of a read tool's result list (id, type, name, value, status, ...). */

/**
 * A number rounded to three decimals, anything else as text.
 * @param {unknown} v
 */
export const num = (v) => (typeof v === "number" ? String(Math.round(v * 1000) / 1000) : String(v));

/**
 * A CodeableConcept (or a list of them, or a Coding) as its text, its first coding's display or code.
 * @param {Fhir} c
 * @returns {string}
 */
export function concept(c) {
  if (typeof c === "string") return c;
  if (Array.isArray(c)) return concept(c[0]);
  if (!c || typeof c !== "object") return "";
  if (c.text) return c.text;
  for (const coding of c.coding || []) if (coding.display || coding.code) return coding.display || coding.code;
  return c.display || "";
}

/** @param {Fhir} q */
export const quantity = (q) => (q && q.value !== undefined ? `${num(q.value)} ${q.unit || ""}`.trim() : "");
/** @param {unknown} t */
export const day = (t) => (typeof t === "string" ? t.slice(0, 10) : "");
/**
 * The parts that are not empty, joined.
 * @param {readonly unknown[]} parts
 * @param {string} [sep]
 */
export const join = (parts, sep = " ") => parts.filter((p) => p !== "" && p !== undefined && p !== null).join(sep);

/** @param {Fhir} r */
function obsValue(r) {
  if (r.valueQuantity) return quantity(r.valueQuantity);
  for (const k of ["valueString", "valueBoolean", "valueInteger"]) if (k in r) return String(r[k]);
  return concept(r.valueCodeableConcept);
}

/** @param {Fhir} d */
function dosage(d) {
  if (!d) return "";
  const dose = quantity(d.doseAndRate?.[0]?.doseQuantity);
  const parts = join([dose, concept(d.timing?.code), concept(d.route)]);
  return parts || d.text || "";
}

/** @type {Record<string, (r: Fhir) => string>} */
const DESCRIBE = {
  MedicationRequest: (r) =>
    `${join([concept(r.medicationCodeableConcept) || r.medicationReference?.display, dosage(r.dosageInstruction?.[0])])}, ${r.status}`,
  MedicationStatement: (r) =>
    `${join([concept(r.medicationCodeableConcept), dosage(r.dosage?.[0])])}, ${r.status}${r.effectiveDateTime ? ` since ${day(r.effectiveDateTime)}` : ""}`,
  ServiceRequest: (r) =>
    join([concept(r.code), r.category ? `(${concept(r.category)})` : "",
      `, ${join([r.priority, r.status], ", ")}`, r.reasonCode ? `, for ${concept(r.reasonCode)}` : "",
      r.supportingInfo?.[0]?.reference ? `, about ${r.supportingInfo[0].reference}` : ""]).replace(/ ,/g, ","),
  Observation: (r) => {
    const head = join([`${concept(r.code)}:`, obsValue(r), r.interpretation ? `(${concept(r.interpretation)})` : ""]);
    const parts = (r.component || []).map((/** @type {Fhir} */ c) =>
      join([concept(c.code), obsValue(c), c.interpretation ? `(${concept(c.interpretation)})` : ""]));
    const about = r.focus?.[0]?.display ? ` for ${r.focus[0].display}` : "";
    return `${head}${about}, ${r.status}${r.effectiveDateTime ? ` (${day(r.effectiveDateTime)})` : ""}` +
      (parts.length ? ` \u2014 ${parts.join("; ")}` : "");
  },
  Condition: (r) =>
    join([concept(r.code), `, ${concept(r.clinicalStatus) || "status unknown"}`,
      r.onsetDateTime ? `, since ${day(r.onsetDateTime)}` : ""], ""),
  AllergyIntolerance: (r) => {
    const reactions = (r.reaction || []).flatMap((/** @type {Fhir} */ x) => (x.manifestation || []).map(concept)).filter(Boolean);
    return join([`allergy to ${concept(r.code)}`, reactions.length ? `(reaction: ${reactions.join(", ")})` : "",
      r.criticality ? `, criticality ${r.criticality}` : "", r.clinicalStatus ? `, ${concept(r.clinicalStatus)}` : ""])
      .replace(/ ,/g, ",");
  },
  Device: (r) => join([concept(r.type) || r.deviceName?.[0]?.name || "device", `, ${r.status || "status unknown"}`], ""),
  DeviceUseStatement: (r) => join([`device ${r.device?.reference || ""} in use`, `, ${r.status}`,
    r.timingDateTime ? ` since ${day(r.timingDateTime)}` : ""], ""),
  Task: (r) => join([`${concept(r.code) || "task"}:`, r.description, `(${join([r.status, r.priority], ", ")})`]),
  Patient: (r) => join([r.name?.[0]?.text || join([...(r.name?.[0]?.given || []), r.name?.[0]?.family]), r.gender,
    r.birthDate ? `born ${r.birthDate}` : ""], ", "),
  Encounter: (r) => join([concept(r.class) || r.class?.code, `, ${r.status}`, r.period?.start ? `, from ${day(r.period.start)}` : ""], ""),
  Procedure: (r) => join([concept(r.code), `, ${r.status}`, r.performedDateTime ? `, ${day(r.performedDateTime)}` : ""], ""),
  DiagnosticReport: (r) => join([`${concept(r.code)}:`, r.conclusion, `(${r.status})`]),
  DocumentReference: (r) => join([r.description || concept(r.type), `(${r.status})`, day(r.date)]),
};

/**
 * A resource as one line: by its type where known, else its type, code and status.
 * @param {Fhir} resource
 * @returns {string}
 */
export function describe(resource) {
  if (!resource || typeof resource !== "object") return "";
  const known = DESCRIBE[resource.resourceType];
  try {
    if (known) return known(resource);
  } catch (err) { /* an odd shape falls back to the generic line */ }
  return join([resource.resourceType, concept(resource.code), resource.status], " \u00b7 ");
}

/**
 * A read tool's item (id, type, name, value, status, time, ...), as one line.
 * @param {Item} item
 */
export function describeItem(item) {
  if (item.patient_id) return join([item.name, item.mrn ? `MRN ${item.mrn}` : "", item.gender, item.birth_date ? `born ${item.birth_date}` : ""], " \u00b7 ");
  const value = item.value && typeof item.value === "object" ? quantity(item.value) : item.value;
  const extra = ["interpretation", "criticality", "class", "relationship"].map((k) => item[k]).filter(Boolean);
  const lists = ["reaction", "conditions", "dosage"].flatMap((k) => item[k] || []).filter(Boolean);
  return join([
    item.name || item.type, value !== undefined ? String(value) : "", extra.length ? `(${extra.join(", ")})` : "",
    lists.length ? `\u2014 ${lists.join(", ")}` : "", item.status ? `\u00b7 ${item.status}` : "",
    item.time ? `\u00b7 ${day(item.time)}` : "", item.end ? `to ${day(item.end)}` : "",
  ]);
}

/**
 * Whether a value is an item of a read tool's list (a typed record with an id, or a patient).
 * @param {unknown} v
 * @returns {v is Item}
 */
export const isItem = (v) => !!v && typeof v === "object" && !Array.isArray(v)
  && ((typeof (/** @type {Item} */ (v)).type === "string" && "id" in v) || "patient_id" in v);
/**
 * An item's reference (`Type/id`).
 * @param {Item} item
 */
export const itemRef = (item) => (item.patient_id ? `Patient/${item.patient_id}` : `${item.type}/${item.id}`);
