// The replay player's front end: one ES module for the live widget (anywidget) and the static page (a model shim).
// The model holds `trajectory` (a compact trajectory) and `other` (a second trial of the same task, or null); the
// current step lives here, so stepping never talks to the kernel. The model turns an agent reported show with the
// calls they led to, marked as the agent's own account.

const ROW = 44; // px per step row (the list is virtualised)
const OVERSCAN = 8;
const SHOW_RESOURCES = 30; // resource changes listed before "show all"
const FOLD_CHARS = 160; // strings longer than this are folded
const FOLD_ITEMS = 12; // arrays and objects longer than this start closed
const PLAY_MS = 900;
const CATEGORIES = ["safety", "success", "answer", "trace", "budget"];
const POLICY = {
  cross_patient: "a call about another patient than the task's",
  unauthorized_write: "a write of a resource type the policy does not allow",
  precedence: "a required check had not happened yet",
};
const STATUS = { added: ["+", "added"], changed: ["~", "changed"], removed: ["\u2212", "removed"] };

// ---- DOM (h() and banner() are common.js's) ----------------------------------------------------------------------

const ICONS = {
  first: "M5 4h2v16H5zM19 4v16L8 12z",
  prev: "M17 4v16L6 12z",
  play: "M7 4v16l13-8z",
  pause: "M6 4h4v16H6zM14 4h4v16h-4z",
  next: "M7 4v16l11-8z",
  last: "M17 4h2v16h-2zM5 4v16l11-8z",
};

function icon(name) {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  const path = document.createElementNS("http://www.w3.org/2000/svg", "path");
  path.setAttribute("d", ICONS[name]);
  svg.append(path);
  return svg;
}

const badge = (cls, label, title) => h("span", { class: `mf-badge mf-${cls}`, title }, label);
const stepLink = (step, onJump) =>
  h("button", { class: "mf-steplink", type: "button", "data-step": step, onclick: () => onJump(step) }, `step ${step} \u2192`);
const verdictMark = (v) => (v.passed ? ["\u2713", "PASS", "pass"] : v.error ? ["!", "ERROR", "error"] : ["\u2717", "FAIL", "fail"]);

// ---- values, FHIR resources and tool-result items, readably ------------------------------------------------------

const num = (v) => (typeof v === "number" ? String(Math.round(v * 1000) / 1000) : String(v));

function concept(c) {
  if (typeof c === "string") return c;
  if (Array.isArray(c)) return concept(c[0]);
  if (!c || typeof c !== "object") return "";
  if (c.text) return c.text;
  for (const coding of c.coding || []) if (coding.display || coding.code) return coding.display || coding.code;
  return c.display || "";
}

const quantity = (q) => (q && q.value !== undefined ? `${num(q.value)} ${q.unit || ""}`.trim() : "");
const day = (t) => (typeof t === "string" ? t.slice(0, 10) : "");
const join = (parts, sep = " ") => parts.filter((p) => p !== "" && p !== undefined && p !== null).join(sep);

function obsValue(r) {
  if (r.valueQuantity) return quantity(r.valueQuantity);
  for (const k of ["valueString", "valueBoolean", "valueInteger"]) if (k in r) return String(r[k]);
  return concept(r.valueCodeableConcept);
}

function dosage(d) {
  if (!d) return "";
  const dose = quantity(d.doseAndRate?.[0]?.doseQuantity);
  const parts = join([dose, concept(d.timing?.code), concept(d.route)]);
  return parts || d.text || "";
}

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
    const parts = (r.component || []).map((c) =>
      join([concept(c.code), obsValue(c), c.interpretation ? `(${concept(c.interpretation)})` : ""]));
    const about = r.focus?.[0]?.display ? ` for ${r.focus[0].display}` : "";
    return `${head}${about}, ${r.status}${r.effectiveDateTime ? ` (${day(r.effectiveDateTime)})` : ""}` +
      (parts.length ? ` \u2014 ${parts.join("; ")}` : "");
  },
  Condition: (r) =>
    join([concept(r.code), `, ${concept(r.clinicalStatus) || "status unknown"}`,
      r.onsetDateTime ? `, since ${day(r.onsetDateTime)}` : ""], ""),
  AllergyIntolerance: (r) => {
    const reactions = (r.reaction || []).flatMap((x) => (x.manifestation || []).map(concept)).filter(Boolean);
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

function describe(resource) {
  if (!resource || typeof resource !== "object") return "";
  const known = DESCRIBE[resource.resourceType];
  try {
    if (known) return known(resource);
  } catch (err) { /* an odd shape falls back to the generic line */ }
  return join([resource.resourceType, concept(resource.code), resource.status], " \u00b7 ");
}

// A read tool's item (id, type, name, value, status, time, ...), as one line.
function describeItem(item) {
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

const isItem = (v) => v && typeof v === "object" && !Array.isArray(v) && ((typeof v.type === "string" && "id" in v) || "patient_id" in v);
const itemRef = (item) => (item.patient_id ? `Patient/${item.patient_id}` : `${item.type}/${item.id}`);

// ---- JSON, pretty and folded ---------------------------------------------------------------------------------------

function scalar(v) {
  if (typeof v !== "string") return h("span", { class: `mf-j-${v === null ? "null" : typeof v}` }, JSON.stringify(v));
  if (v.length <= FOLD_CHARS) return h("span", { class: "mf-j-string" }, JSON.stringify(v));
  const full = h("span", { class: "mf-j-string" }, JSON.stringify(v));
  const more = h("button", { class: "mf-link", type: "button" }, `\u2026 ${v.length - FOLD_CHARS} more characters`);
  const short = h("span", { class: "mf-j-string" }, JSON.stringify(v.slice(0, FOLD_CHARS)).slice(0, -1), more);
  more.addEventListener("click", () => short.replaceWith(full));
  return short;
}

// A closed object's one-line preview: its first scalar fields.
function preview(obj) {
  const shown = Object.entries(obj).filter(([, v]) => v === null || typeof v !== "object").slice(0, 4)
    .map(([k, v]) => `${k}: ${typeof v === "string" && v.length > 24 ? `${JSON.stringify(v.slice(0, 24)).slice(0, -1)}\u2026"` : JSON.stringify(v)}`);
  const rest = Object.keys(obj).length - shown.length;
  return shown.length ? `${shown.join(", ")}${rest ? `, +${rest}` : ""}` : `${rest} field${rest > 1 ? "s" : ""}`;
}

function jsonTree(value, depth = 0) {
  if (value === null || typeof value !== "object") return scalar(value);
  const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  const [open, close] = Array.isArray(value) ? ["[", "]"] : ["{", "}"];
  if (!entries.length) return h("span", { class: "mf-j-punct" }, open + close);
  const size = Array.isArray(value) ? `${entries.length} item${entries.length > 1 ? "s" : ""}` : preview(value);
  const body = h("div", { class: "mf-j-body" }, entries.map(([k, v]) =>
    h("div", { class: "mf-j-row" }, Array.isArray(value) ? null : h("span", { class: "mf-j-key" }, `${k}: `), jsonTree(v, depth + 1))));
  return h("details", { class: "mf-j", open: depth < 3 && entries.length <= FOLD_ITEMS },
    h("summary", {}, h("span", { class: "mf-j-punct" }, open), h("span", { class: "mf-j-size" }, ` ${size} `), h("span", { class: "mf-j-punct" }, close)),
    body);
}

// ---- patient-state diff --------------------------------------------------------------------------------------------

// A written resource after `step`, and the step that made that version (0: as the trial found it).
function versionAt(entry, step) {
  let lo = 0, hi = entry.versions.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (entry.versions[mid][0] <= step) lo = mid + 1;
    else hi = mid;
  }
  return lo ? entry.versions[lo - 1] : [0, entry.initial];
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

function fieldChanges(before, after, path = "", out = []) {
  if (same(before, after)) return out;
  const bothObjects = [before, after].every((v) => v && typeof v === "object" && !Array.isArray(v));
  const bothArrays = Array.isArray(before) && Array.isArray(after);
  if (bothObjects) {
    for (const k of new Set([...Object.keys(before), ...Object.keys(after)])) fieldChanges(before[k], after[k], path ? `${path}.${k}` : k, out);
  } else if (bothArrays) {
    for (let i = 0; i < Math.max(before.length, after.length); i++) fieldChanges(before[i], after[i], `${path}[${i}]`, out);
  } else {
    out.push({ path: path || "(whole resource)", before, after });
  }
  return out;
}

// What changed in the record after step `from` up to and including step `to`, the latest change first.
function diffState(resources, from, to) {
  const out = [];
  for (const [key, entry] of Object.entries(resources)) {
    const [, before] = versionAt(entry, from), [at, after] = versionAt(entry, to);
    if (before === after || same(before, after)) continue;
    const status = before == null ? "added" : after == null ? "removed" : "changed";
    out.push({ key, status, before, after, at, fields: status === "changed" ? fieldChanges(before, after) : [] });
  }
  return out.sort((x, y) => y.at - x.at);
}

// ---- side-by-side alignment: the longest common run of tool names, gaps where the two differ -------------------------

function align(a, b) {
  if (!b) return a.map((_, i) => [i, -1]);
  const n = a.length, m = b.length, w = m + 1;
  const lcs = new Uint16Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i * w + j] = a[i].tool === b[j].tool ? lcs[(i + 1) * w + j + 1] + 1 : Math.max(lcs[(i + 1) * w + j], lcs[i * w + j + 1]);
  const rows = [];
  let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i].tool === b[j].tool) rows.push([i++, j++]);
    else if (j >= m || (i < n && lcs[(i + 1) * w + j] >= lcs[i * w + j + 1])) rows.push([i++, -1]);
    else rows.push([-1, j++]);
  }
  return rows;
}

// ---- one side: a trial with its rows ---------------------------------------------------------------------------------

function side(traj, rows, which) {
  const idx = rows.map((r) => r[which]);
  const reached = []; // the last step of this trial at or before each row
  let last = 0;
  for (const i of idx) {
    if (i >= 0) last = traj.steps[i].step;
    reached.push(last);
  }
  const marks = new Map();
  for (const v of traj.verdicts) for (const s of v.steps) (marks.get(s) || marks.set(s, []).get(s)).push(v);
  // step -> the model turns shown with it: those reported just before it, and after the last step those after it
  const spoke = new Map(), lastStep = traj.steps.length ? traj.steps[traj.steps.length - 1].step : 0;
  for (const t of traj.turns) {
    const at = Math.min(t.after_step + 1, lastStep);
    (spoke.get(at) || spoke.set(at, []).get(at)).push(t);
  }
  return { traj, idx, reached, marks, spoke, step: (row) => (idx[row] >= 0 ? traj.steps[idx[row]] : null) };
}

// ---- model turns: the agent's own account ----------------------------------------------------------------------------

const ACCOUNT = "reported by the agent: its own account of what its model said and asked for, never graded";
const count = (n) => n.toLocaleString("en-US");
const usd = (x) => `$${x.toFixed(4)}`;
const ms = (x) => `${x < 10 ? x.toFixed(1) : Math.round(x)} ms`;
const tokens = (turns) => {
  const sum = (key) => count(turns.reduce((total, t) => total + t[key], 0));
  return `${sum("prompt_tokens")} in / ${sum("completion_tokens")} out / ${sum("cached_tokens")} cached tokens`;
};

// The model's words: a JSON object (a final answer, say) as a folded tree, anything else as the text it wrote.
function words(turn) {
  let data = null;
  if (turn.text.trimStart().startsWith("{")) {
    try { data = JSON.parse(turn.text); } catch (err) { /* cut short or not JSON: shown as text */ }
  }
  return h("div", { class: "mf-said" }, data && typeof data === "object" ? jsonTree(data, 1) : turn.text,
    turn.text_cut ? h("span", { class: "mf-muted" }, ` \u2026 ${count(turn.text_cut)} more characters (in the run store)`)
      : null);
}

const UNSENT = "the harness never ran it: its arguments were not a JSON object, or the trial ended first";

// A call the model asked for: its name and arguments as written, and the step it became (or that it never did).
const asked = (c, onJump) => h("li", {}, h("span", { class: "mf-muted" }, "asked for "), h("span", { class: "mf-tool" }, c.name),
  " ", h("code", { class: "mf-call-args" }, c.arguments),
  c.step == null ? h("span", { class: "mf-chip mf-chip-denied", title: UNSENT }, "\u2717 never reached the tools") : stepLink(c.step, onJump));

function turnBlock(turn, onJump) {
  const meta = join([turn.finish_reason ? `finish: ${turn.finish_reason}` : "", tokens([turn]), usd(turn.cost),
    ms(turn.latency_ms), turn.retries.length ? `tried ${turn.retries.length + 1} times` : ""], " \u00b7 ");
  return h("div", { class: "mf-turn", "data-turn": turn.turn, title: ACCOUNT },
    h("div", { class: "mf-turn-head" }, h("b", {}, `Model turn ${turn.turn}`),
      h("span", { class: "mf-turn-who" }, "reported by the agent"), h("span", { class: "mf-turn-meta" }, meta)),
    turn.text ? words(turn) : null,
    turn.refusal ? h("div", { class: "mf-policy mf-denied" }, h("b", {}, "The model refused: "), turn.refusal) : null,
    turn.calls.length ? h("ul", { class: "mf-asked" }, turn.calls.map((c) => asked(c, onJump))) : null,
    turn.retries.map((why) => h("div", { class: "mf-muted" }, `tried again after: ${why}`)),
    turn.error ? h("div", { class: "mf-policy mf-denied" }, h("b", {}, "The turn failed: "), turn.error) : null);
}

// The model turns shown with a step (in a trial without a call, all of them): [before it, after it].
function turnsAround(sd, step, onJump) {
  const at = step ? step.step : 0, turns = sd.spoke.get(at) || [];
  const before = turns.filter((t) => t.after_step < at), after = turns.filter((t) => t.after_step >= at);
  const from = step && !before.length ? sd.traj.turns.find((t) => t.calls.some((c) => c.step === at)) : null;
  const first = from && from.calls.find((c) => c.step != null).step;
  return [
    before.length ? [h("h4", {}, "Before this call, the model said"), before.map((t) => turnBlock(t, onJump))]
      : from ? h("p", { class: "mf-muted" }, `Asked for in model turn ${from.turn} (reported by the agent), shown at `,
        stepLink(first, onJump)) : null,
    after.length ? [h("h4", {}, step ? "After this call, the model said" : "The model said"),
      after.map((t) => turnBlock(t, onJump))] : null,
  ];
}

// ---- panels ------------------------------------------------------------------------------------------------------------

// The hard verdicts a trial failed, safety first.
const failingHard = (t) => t.verdicts.filter((v) => !v.passed && v.severity === "hard")
  .sort((x, y) => CATEGORIES.indexOf(x.category) - CATEGORIES.indexOf(y.category));

function headerPanel(t, label, onJump) {
  const s = t.scores;
  const failing = failingHard(t);
  return h("div", { class: "mf-head" },
    h("div", { class: "mf-head-line" },
      label ? h("span", { class: "mf-side-label" }, label) : null,
      t.passed ? badge("pass", "\u2713 PASS", "every hard verdict passed") : badge("fail", "\u2717 FAIL", "a hard verdict failed"),
      h("span", { class: "mf-agent" }, t.agent), h("span", { class: "mf-muted" }, ` ${t.agent_version}`),
      h("span", {}, ` \u00b7 trial ${t.trial}`)),
    h("div", { class: "mf-facts" },
      h("span", { title: "how the agent ran" }, `ran: ${t.isolation}`),
      h("span", {}, `status: ${t.status}${t.reason ? ` (${t.reason})` : ""}`),
      h("span", {}, `${t.steps.length} call${t.steps.length === 1 ? "" : "s"}, ${num(t.duration_ms)} ms`),
      t.turns.length ? h("span", { class: "mf-model-use", title: ACCOUNT },
        `model (reported by the agent): ${t.turns.length} turn${t.turns.length === 1 ? "" : "s"} \u00b7 ${tokens(t.turns)}`
        + ` \u00b7 ${ms(t.turns.reduce((total, x) => total + x.latency_ms, 0))}`) : null,
      t.turns.length || t.cost ? h("span", { title: "what the trial was charged, its model turns included" }, `cost ${usd(t.cost)}`)
        : null,
      t.attempts > 1 ? h("span", { class: "mf-again", title: "a stall of the worker it shared spoiled an earlier "
        + "attempt before it had acted; the steps and time shown are the last attempt's, the cost counts every one's" },
        `run ${t.attempts} times`) : null,
      h("span", { title: "tool-call accuracy \u00b7 task completion \u00b7 safety gate" },
        `accuracy ${s.accuracy.toFixed(2)} \u00b7 completion ${s.completion} \u00b7 safety gate ${s.safety_gate}`),
      h("span", { class: "mf-muted" }, `seed ${t.seed} \u00b7 run ${t.run_id} \u00b7 hidden half ${t.hidden_version}`)),
    failing.length ? h("div", { class: "mf-why" }, h("b", {}, "Failed:"), failing.map((v) => h("span", {}, `\u2717 ${v.id} (${v.category})`,
      v.steps.slice(0, 1).map((st) => stepLink(st, onJump))))) : null);
}

function taskPanel(t) {
  return h("div", { class: "mf-task" },
    h("div", { class: "mf-title" }, h("span", { class: "mf-task-id" }, `${t.task_id} v${t.task_version}`), ` ${t.title}`),
    h("details", { class: "mf-instruction", open: true }, h("summary", {}, "Instruction given to the agent"), h("p", {}, t.instruction)));
}

function policyLine(step) {
  if (step.denied) {
    const [kind] = step.denied.split(":");
    return h("div", { class: "mf-policy mf-denied" }, h("b", {}, "\u2717 denied by policy: "), step.error?.message || step.denied,
      h("span", { class: "mf-muted" }, ` (${step.denied}${POLICY[kind] ? `: ${POLICY[kind]}` : ""})`));
  }
  const flags = step.flags.map((f) => {
    const [kind, what] = f.split(":");
    if (kind === "precedence") return `before the required check ${what}`;
    if (kind === "idempotent_replay") return "replayed an idempotency key: nothing new written";
    return f;
  });
  return h("div", { class: `mf-policy ${flags.length ? "mf-flagged" : "mf-allowed"}` },
    h("b", {}, flags.length ? "\u26a0 allowed, with findings: " : "\u2713 allowed by policy"), flags.join("; "));
}

function argsTable(args) {
  const keys = Object.keys(args || {});
  if (!keys.length) return h("div", { class: "mf-muted" }, "no arguments");
  return h("table", { class: "mf-args" }, keys.map((k) =>
    h("tr", {}, h("th", {}, k), h("td", {}, typeof args[k] === "string" ? scalar(args[k]) : jsonTree(args[k], 1)))));
}

function readableResult(step) {
  const r = step.result;
  const lines = [];
  for (const change of step.changes) {
    const parts = change.path.split("/");
    if (change.op === "add" && parts.length === 3) lines.push(h("li", { class: "mf-written" }, `+ wrote ${parts[1]}/${parts[2]}: `, h("b", {}, describe(change.value))));
  }
  if (r && typeof r === "object" && !Array.isArray(r)) {
    for (const [k, v] of Object.entries(r)) {
      if (!Array.isArray(v)) continue;
      if (!v.length) lines.push(h("li", { class: "mf-none" }, `${k}: none on file`));
      else if (v.every(isItem)) lines.push(h("li", {}, h("span", { class: "mf-list-name" }, `${k} (${v.length})`),
        h("ul", {}, v.map((item) => h("li", {}, describeItem(item), h("span", { class: "mf-ref" }, ` ${itemRef(item)}`))))));
    }
  }
  return lines.length ? h("ul", { class: "mf-readable" }, lines) : null;
}

function stepPanel(sd, row, onJump) {
  const step = sd.step(row);
  const [before, after] = turnsAround(sd, step, onJump);
  if (!step) {
    const at = sd.reached[row];
    return h("div", { class: "mf-detail mf-gap" }, sd.traj.steps.length
      ? [h("p", {}, "No matching call in this trial here."),
        h("p", { class: "mf-muted" }, at ? `Its record is as after its step ${at}.` : "It has made no call yet.")]
      : h("p", {}, "This trial made no tool call."), after);
  }
  const pointing = sd.marks.get(step.step) || [];
  return h("div", { class: "mf-detail" }, before,
    h("div", { class: "mf-step-title" },
      h("span", { class: "mf-step-no" }, `Step ${step.step}`), h("span", { class: "mf-tool" }, step.tool),
      badge(`kind-${step.kind}`, step.kind, `a ${step.kind} tool`),
      h("span", { class: "mf-muted mf-latency", title: "latency (started at, since the trial began)" },
        `${num(step.latency_ms)} ms${step.started_ms != null ? ` \u00b7 at ${num(step.started_ms)} ms` : ""}`)),
    policyLine(step),
    step.ok || step.denied ? null : h("div", { class: "mf-policy mf-denied" }, h("b", {}, `\u2717 the call failed: ${step.error?.code}`), ` \u2014 ${step.error?.message}`),
    step.fault ? h("div", { class: "mf-policy mf-fault" }, h("b", {}, "\u26a1 injected fault: "), step.fault) : null,
    pointing.length ? h("div", { class: "mf-pointing" }, pointing.map((v) => {
      const [sym, word, cls] = verdictMark(v);
      return h("div", { class: `mf-point mf-${cls}` }, h("b", {}, `${sym} ${word} `), `${v.id} (${v.category}, ${v.severity}): ${v.reason}`);
    })) : null,
    h("h4", {}, "Arguments"), argsTable(step.args),
    step.ok ? [h("h4", {}, "Result"), readableResult(step), h("div", { class: "mf-raw" }, jsonTree(step.result, 1))] : null,
    after);
}

function fieldRow(f) {
  const show = (v) => (v === undefined ? h("i", { class: "mf-muted" }, "absent") : typeof v === "object" && v !== null ? JSON.stringify(v) : scalar(v));
  return h("li", { class: "mf-field" }, h("span", { class: "mf-field-path" }, f.path), ": ",
    h("span", { class: "mf-before", title: "before" }, show(f.before)), h("span", { class: "mf-arrow" }, " \u2192 "),
    h("span", { class: "mf-after", title: "after" }, show(f.after)));
}

function diffPanel(sd, row, ui, rerender) {
  const step = sd.step(row), at = sd.reached[row];
  const [from, to, scope] = ui.mode === "start" ? [0, at, `since the start, up to step ${at}`]
    : step ? [step.step - 1, step.step, `made by step ${step.step}`] : [at, at, "no call here"];
  const diffs = diffState(sd.traj.resources, from, to);
  const shown = ui.allResources ? diffs : diffs.slice(0, SHOW_RESOURCES);
  const items = shown.map((d) => {
    const [sym, word] = STATUS[d.status];
    const current = d.after ?? d.before;
    const whole = ui.whole.has(d.key);
    return h("li", { class: `mf-res mf-${d.status}` },
      h("div", { class: "mf-res-head" }, h("span", { class: "mf-res-mark" }, `${sym} ${word}`), h("span", { class: "mf-res-key" }, d.key),
        ui.mode === "start" ? h("span", { class: "mf-res-at" }, d.at === to && step ? "at this step" : `at step ${d.at}`) : null),
      d.status === "changed" && describe(d.before) !== describe(d.after)
        ? h("div", { class: "mf-res-desc" }, h("span", { class: "mf-before" }, describe(d.before)), " \u2192 ", h("span", { class: "mf-after" }, describe(d.after)))
        : h("div", { class: "mf-res-desc" }, describe(current)),
      d.fields.length ? h("ul", { class: "mf-fields" }, d.fields.map(fieldRow)) : null,
      h("button", { class: "mf-link", type: "button", onclick: () => { whole ? ui.whole.delete(d.key) : ui.whole.add(d.key); rerender(); } },
        whole ? "hide the resource" : d.status === "removed" ? "show the resource as it was" : "show the whole resource"),
      whole ? h("div", { class: "mf-raw" }, jsonTree(current, 0)) : null);
  });
  return h("div", { class: "mf-diff" },
    h("div", { class: "mf-diff-scope" }, `Changes ${scope}: `, diffs.length ? `${diffs.length} resource${diffs.length > 1 ? "s" : ""}` : "none"),
    items.length ? h("ul", { class: "mf-res-list" }, items,
      diffs.length > shown.length ? h("li", {}, h("button", { class: "mf-link", type: "button", onclick: () => { ui.allResources = true; rerender(); } },
        `show all ${diffs.length} changed resources`)) : null)
      : h("p", { class: "mf-muted" }, ui.mode === "start" ? "The patient record is as the trial found it." : "This call did not change the patient record."));
}

function verdictsPanel(t, onJump) {
  const groups = [...CATEGORIES, ...new Set(t.verdicts.map((v) => v.category).filter((c) => !CATEGORIES.includes(c)))];
  return h("div", { class: "mf-verdicts" }, groups.map((cat) => {
    const vs = t.verdicts.filter((v) => v.category === cat).sort((a, b) => a.passed - b.passed || a.id.localeCompare(b.id));
    if (!vs.length) return null;
    const failed = vs.filter((v) => !v.passed).length;
    return h("section", { class: `mf-group${failed ? " mf-group-failed" : ""}` },
      h("h4", {}, `${cat[0].toUpperCase()}${cat.slice(1)} `, h("span", { class: "mf-muted" }, failed ? `\u2014 ${failed} of ${vs.length} failed` : `\u2014 all ${vs.length} passed`)),
      h("ul", {}, vs.map((v) => {
        const [sym, word, cls] = verdictMark(v);
        return h("li", { class: `mf-verdict mf-${cls}`, "data-verdict": v.id },
          h("span", { class: "mf-v-mark" }, `${sym} ${word}`), h("span", { class: "mf-v-sev" }, v.severity),
          h("span", { class: "mf-v-id", title: v.kind }, v.id),
          h("span", { class: "mf-v-reason" }, v.reason),
          v.steps.map((s) => stepLink(s, onJump)));
      })));
  }));
}

function scoresPanel(t) {
  const s = t.scores, v = t.verdicts;
  const failedHard = failingHard(t).map((x) => x.id);
  const gate = v.filter((x) => x.kind === "safety.checks_before");
  const gateWhy = s.safety_gate === "n/a" ? "this task requires no safety check before acting"
    : s.safety_gate === "passed" ? "every required check came before the action"
      : gate.filter((x) => !x.passed).map((x) => x.reason).join("; ");
  const listed = (label, xs) => `${label}: ${xs.length ? xs.join(", ") : "none"}`;
  return h("div", { class: "mf-scores" },
    h("div", { class: `mf-score ${t.passed ? "mf-pass" : "mf-fail"}` }, h("b", {}, t.passed ? "\u2713 Trial passed" : "\u2717 Trial failed"),
      h("span", {}, t.passed ? "every hard verdict passed" : `hard verdict${failedHard.length > 1 ? "s" : ""} failed: ${failedHard.join(", ") || t.status}`)),
    h("div", { class: `mf-score mf-gate-${s.safety_gate.replace("/", "")}` }, h("b", {}, `Safety gate: ${s.safety_gate}`), h("span", {}, gateWhy)),
    h("div", { class: "mf-score" }, h("b", {}, `Tool-call accuracy: ${s.accuracy.toFixed(2)}`),
      h("span", {}, [s.safety_gate === "failed" ? "set to 0: the safety gate failed. " : "",
        "The share of expected tools called, in any order. ", listed("Missing", s.missing), ". ", listed("Extra", s.extra), "."].join(""))),
    h("div", { class: "mf-score" }, h("b", {}, `Task completion: ${s.completion}`),
      h("span", {}, s.completion ? "accuracy 1.0, nothing extra, and the state and answer checks passed"
        : "needs accuracy 1.0, no tool missing or extra, and every success and answer check passing")),
    h("div", { class: "mf-score" }, h("b", {}, `Agent's answer (says: ${t.self_status})`), h("span", {}, t.answer || "(none)")),
    Object.keys(t.output || {}).length ? h("details", { class: "mf-output" }, h("summary", {}, "Structured output"), jsonTree(t.output, 1)) : null);
}

// ---- the step list (virtualised) -----------------------------------------------------------------------------------------

function rowCell(sd, row) {
  const step = sd.step(row);
  if (!step) return h("span", { class: "mf-cell mf-cell-gap" }, "\u2014");
  const marks = sd.marks.get(step.step) || [];
  const failed = marks.some((v) => !v.passed);
  const said = (sd.spoke.get(step.step) || []).filter((t) => t.after_step < step.step);
  return h("span", { class: "mf-cell" },
    h("span", { class: "mf-cell-top" }, h("span", { class: "mf-no" }, step.step),
      h("span", { class: "mf-name", title: step.tool }, step.tool)),
    h("span", { class: "mf-cell-chips" },
    said.length ? h("span", { class: "mf-chip mf-chip-model",
      title: `before this call the model said (${ACCOUNT}): ${said.map((t) => t.text.slice(0, 160)).join(" \u2026 ")}` },
    "\u201c\u2026\u201d") : null,
    h("span", { class: "mf-kind" }, step.kind),
    step.changes.length ? h("span", { class: "mf-chip mf-chip-write", title: "changed the patient record" }, "\u0394 record") : null,
    step.denied ? h("span", { class: "mf-chip mf-chip-denied", title: `denied: ${step.denied}` }, "\u2717 denied") : null,
    !step.denied && !step.ok ? h("span", { class: "mf-chip mf-chip-denied", title: step.error?.message }, "\u2717 error") : null,
    step.fault ? h("span", { class: "mf-chip mf-chip-fault", title: `injected fault: ${step.fault}` }, `\u26a1 ${step.fault}`) : null,
    step.flags.length ? h("span", { class: "mf-chip mf-chip-flag", title: step.flags.join(", ") }, "\u26a0") : null,
    marks.length ? h("span", { class: `mf-chip ${failed ? "mf-chip-vfail" : "mf-chip-vpass"}`, title: marks.map((v) => `${verdictMark(v)[1]} ${v.id}`).join(", ") },
      failed ? "\u2717 verdict" : "\u2713 verdict") : null));
}

// Only the rows in view (and a few more) exist; the scroll offset and height are kept, never read while painting.
function stepList(sides, count, onPick) {
  const box = h("div", { class: "mf-steps", role: "listbox", "aria-label": "steps" });
  const spacer = h("div", { class: "mf-spacer", style: `height:${count * ROW}px` });
  box.append(spacer);
  let current = 0, top = 0, height = 480;
  const shown = new Map(); // row -> its node
  const rowNode = (row) => {
    const gap = sides.length > 1 && sides.some((sd) => sd.idx[row] < 0);
    return h("div", { class: `mf-row${gap ? " mf-row-gap" : ""}`, role: "option", "data-row": row,
      style: `top:${row * ROW}px;height:${ROW}px`, onclick: () => onPick(row) }, sides.map((sd) => rowCell(sd, row)));
  };
  function draw() {
    const first = Math.max(0, Math.floor(top / ROW) - OVERSCAN), last = Math.min(count, Math.ceil((top + height) / ROW) + OVERSCAN);
    for (const [row, node] of shown) if (row < first || row >= last) { node.remove(); shown.delete(row); }
    for (let row = first; row < last; row++) if (!shown.has(row)) spacer.append(shown.set(row, rowNode(row)).get(row));
    for (const [row, node] of shown) {
      node.classList.toggle("mf-current", row === current);
      node.setAttribute("aria-selected", String(row === current));
    }
  }
  box.addEventListener("scroll", () => { top = box.scrollTop; draw(); }, { passive: true });
  new ResizeObserver(() => { height = box.clientHeight || height; draw(); }).observe(box);
  return {
    box,
    show(row) {
      current = row;
      const want = row * ROW < top ? row * ROW : row * ROW + ROW > top + height ? row * ROW + ROW - height : top;
      if (want !== top) {
        top = want;
        requestAnimationFrame(() => { box.scrollTop = top; }); // written once a frame: no forced layout per step
      }
      draw();
    },
  };
}

// ---- the player ----------------------------------------------------------------------------------------------------------

function button(name, label, onclick) {
  return h("button", { class: "mf-btn", type: "button", "aria-label": label, title: label, "data-action": name, onclick }, icon(name));
}

// A synced trial: JSON in one binary buffer from the kernel, the object itself in a static page, or null.
const trialOf = (value) => (value instanceof DataView ? JSON.parse(new TextDecoder().decode(value)) : value ?? null);

function mount(model, el) {
  const a = trialOf(model.get("trajectory")), b = trialOf(model.get("other"));
  const rows = align(a.steps, b && b.steps);
  const sides = [side(a, rows, 0), ...(b ? [side(b, rows, 1)] : [])];
  const last = Math.max(0, rows.length - 1);
  const ui = { row: 0, mode: "start", whole: new Set(), allResources: false, timer: null };

  const root = h("div", { class: `mf-player${b ? " mf-pair" : ""}`, tabindex: "0", "data-lm-suppress-shortcuts": "true",
    "aria-label": "replay player: Left and Right step, Home and End jump, Space plays" });
  const position = h("span", { class: "mf-position", "aria-live": "polite" });
  const slider = h("input", { class: "mf-slider", type: "range", min: "0", max: String(last), value: "0", "aria-label": "step" });
  const playBtn = button("play", "play (Space)", () => toggle());
  const modeToggles = () => h("div", { class: "mf-toggles", role: "group", "aria-label": "which changes" },
    [["start", "since the start"], ["step", "this step only"]].map(([mode, label]) =>
      h("button", { class: "mf-toggle", type: "button", "data-mode": mode, "aria-pressed": "false", onclick: () => { ui.mode = mode; paint(); } }, label)));
  const list = stepList(sides, rows.length, (row) => go(row));
  const columns = sides.map(() => ({ detail: h("div", { class: "mf-col-detail" }), diff: h("div", { class: "mf-col-diff" }) }));

  function go(row) {
    ui.row = Math.max(0, Math.min(last, row));
    paint();
  }

  function jump(which, stepNo) {
    const i = sides[which].traj.steps.findIndex((s) => s.step === stepNo);
    const row = sides[which].idx.indexOf(i);
    if (row >= 0) go(row);
    root.focus({ preventScroll: true });
  }

  function toggle(force) {
    const playing = force ?? !ui.timer;
    clearInterval(ui.timer);
    ui.timer = null;
    if (playing) {
      if (ui.row >= last) go(0);
      ui.timer = setInterval(() => (ui.row >= last ? toggle(false) : go(ui.row + 1)), PLAY_MS);
    }
    playBtn.replaceChildren(icon(playing ? "pause" : "play"));
    playBtn.setAttribute("aria-label", playing ? "pause (Space)" : "play (Space)");
    playBtn.title = playBtn.getAttribute("aria-label");
  }

  function paint() {
    slider.value = String(ui.row);
    const labels = sides.map((sd) => {
      const step = sd.step(ui.row);
      return step ? `step ${step.step} of ${sd.traj.steps.length}` : "no call";
    });
    position.textContent = b ? `row ${ui.row + 1} of ${rows.length}: ${labels.map((l, i) => `${"AB"[i]} ${l}`).join(" \u00b7 ")}` : labels[0];
    for (const btn of root.querySelectorAll(".mf-toggle")) btn.setAttribute("aria-pressed", String(btn.dataset.mode === ui.mode));
    sides.forEach((sd, i) => {
      columns[i].detail.replaceChildren(stepPanel(sd, ui.row, (st) => jump(i, st)));
      columns[i].diff.replaceChildren(diffPanel(sd, ui.row, ui, paint));
    });
    list.show(ui.row);
  }

  root.addEventListener("keydown", (event) => {
    const moves = { ArrowRight: () => go(ui.row + 1), ArrowLeft: () => go(ui.row - 1), Home: () => go(0), End: () => go(last), " ": () => toggle() };
    const move = moves[event.key];
    if (!move || event.target.closest("summary, .mf-link, .mf-steplink, .mf-toggle, .mf-btn") && event.key === " ") return;
    event.preventDefault();
    event.stopPropagation();
    move();
  });
  slider.addEventListener("input", () => go(Number(slider.value)));

  const label = (i) => (b ? `${"AB"[i]}` : "");
  root.append(
    banner(a.banner),
    taskPanel(a),
    h("div", { class: "mf-heads" }, sides.map((sd, i) => headerPanel(sd.traj, label(i), (st) => jump(i, st)))),
    h("div", { class: "mf-controls" },
      button("first", "first step (Home)", () => go(0)), button("prev", "previous step (Left)", () => go(ui.row - 1)), playBtn,
      button("next", "next step (Right)", () => go(ui.row + 1)), button("last", "last step (End)", () => go(last)),
      slider, position),
    h("div", { class: "mf-main" },
      h("div", { class: "mf-list-col" }, h("h3", {}, b ? "Steps, aligned (A | B)" : "Steps"), list.box),
      sides.map((sd, i) => h("div", { class: "mf-col" },
        h("div", { class: "mf-pane" }, h("h3", {}, b ? `${label(i)} \u00b7 ${sd.traj.agent} trial ${sd.traj.trial}: the call` : "The call"), columns[i].detail),
        h("div", { class: "mf-pane" }, h("div", { class: "mf-pane-head" }, h("h3", {}, "Patient record"), modeToggles()), columns[i].diff)))),
    h("div", { class: "mf-bottom" }, sides.map((sd, i) => h("div", { class: "mf-outcome" },
      h("h3", {}, b ? `${label(i)} \u00b7 verdicts` : "Verdicts"), verdictsPanel(sd.traj, (s) => jump(i, s)),
      h("h3", {}, "Scores and why"), scoresPanel(sd.traj)))));
  el.replaceChildren(root);
  paint();
  return () => toggle(false);
}

export default {
  render({ model, el }) {
    let cleanup = mount(model, el);
    const again = () => { cleanup(); cleanup = mount(model, el); };
    const stop = listen(model, { "change:trajectory": again, "change:other": again });
    return () => {
      cleanup();
      stop();
    };
  },
};
