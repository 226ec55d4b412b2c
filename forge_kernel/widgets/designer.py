"""The TaskPackage designer: a form in JupyterLab that builds a package on a bundled synthetic patient through the
authoring API, from the task to the gold solution (real tool calls against the fixture EHR), counterexamples and
valid variants as edits, live validation, a dry run of the reference agents, selftest with mutants and saving."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import ipywidgets as w
import yaml
from pydantic import ValidationError

from ..agents.planner import PLANS
from ..authoring import (
    BUNDLED,
    Draft,
    DryRun,
    Fix,
    Recorder,
    SelftestResult,
    bundled_patients,
    declare_valid,
    dry_run,
    fix_for,
    new_draft,
    patient_from_bundle,
    problems,
    selftest,
)
from ..built_in import load
from ..catalog import model_of
from ..engine import PROBLEMS
from ..spec import (
    BudgetExceeded,
    Edit,
    EditError,
    ForgeError,
    SpecError,
    TaskPackage,
    answer_schema,
    apply_edits,
    call_labels,
    load_package,
)
from ..store import open_run
from . import _designer_views as views
from ._designer_forms import Hints, MapForm, SchemaForm, scalar
from ._designer_hints import designer_hints, record_hints
from ._frontend import widget_css
from .player import play

CSS = widget_css("designer.css")
NO_ANSWER = "<span class='mf-sub'>the task declares no structured answer (see 1 Patient &amp; task)</span>"
ANSWER_DEFS = TaskPackage.model_json_schema()["$defs"]
"""The public half's definitions: ``AnswerField`` among them (a field of the typed answer)."""


def category_help(category: str) -> str:
    """What the reference agents' plan for a category reads from the task's context (its docstring, up to the
    paragraph about the context), or that they have none."""
    fn = PLANS.get(category)
    if fn is None:
        return "The reference agents have no plan for this category: their dry run will not solve it."
    paragraphs = (sys.modules[fn.__module__].__doc__ or "").strip().split("\n\n")
    upto = next((i for i, p in enumerate(paragraphs) if "Context" in p), 0)
    shown = paragraphs[: upto + 1] + ([paragraphs[upto + 1]] if paragraphs[upto].rstrip().endswith(":") else [])
    return "\n\n".join(shown)


VERIFIER_CATEGORIES = ["success", "safety", "trace", "answer", "budget", "rubric"]
EDIT_OPS = [
    ("drop a call", "drop"),
    ("replace a call", "replace"),
    ("insert a call before", "insert"),
    ("change a value", "set"),
    ("add a value", "add"),
    ("delete a value", "delete"),
]


PLAIN_WORDS = {
    "too_short": "choose or give at least one",
    "string_pattern_mismatch": "letters, digits, '.', '_' and '-' only (no '/', no spaces)",
    "missing": "required",
}
"""Pydantic's messages that a person filling a form reads better in other words, by error type."""


def form_problem(path: Path, exc: ValidationError) -> str:
    """A validation error of the form as ``file: field: message``, in plain words where there are some."""
    err = exc.errors()[0]
    message = PLAIN_WORDS.get(err["type"])
    return (
        str(SpecError(path, ".".join(map(str, err["loc"])), message))
        if message
        else str(SpecError.from_error(path, err))
    )


def first_line(exc: Exception) -> str:
    """An error as one line: a pydantic error as ``field: message``."""
    if isinstance(exc, ValidationError):
        err = exc.errors()[0]
        return f"{'.'.join(map(str, err['loc'])) or 'value'}: {err['msg']}"
    return str(exc).split("\n")[0]


def section(title: str, *children: w.Widget, note: str = "") -> w.VBox:
    head = w.HTML(
        f"<div class='mf-h'>{title}</div>" + (f"<div class='mf-sub'>{views.escape(note)}</div>" if note else "")
    )
    box = w.VBox([head, *children])
    box.add_class("mf-section")
    return box


def labelled(label: str, widget: w.Widget, width: str = "11em") -> w.HBox:
    return w.HBox([w.HTML(f"<b>{label}</b>", layout=w.Layout(width=width)), widget], layout=w.Layout(width="100%"))


def button(text: str, style: str = "", handler=None) -> w.Button:
    b = w.Button(description=text, button_style=style, layout=w.Layout(width="auto"))
    if handler is not None:
        b.on_click(lambda _: handler())
    return b


class Designer(w.VBox):
    """Design a TaskPackage: ``Designer(target=".")`` picks patients from the bundled packages and saves to ``target/task_packages/<suite>/<id>/`` and ``target/verifiers/<suite>/<id>.yaml``."""

    def __init__(self, bundled: str | Path = BUNDLED, target: str | Path = ".", suite: str = "custom"):
        catalog = load()
        self.tool_entries = {e.name: e for e in catalog.of("tool")}
        self.kind_entries = {e.name: e for e in catalog.of("verifier kind")}
        self.patients = bundled_patients(bundled)
        self.tool_args = sorted({a for e in self.tool_entries.values() for a in model_of(e).model_fields})
        self.written_types = sorted({e.value.writes for e in self.tool_entries.values() if e.value.writes})
        self.recorder: Recorder | None = None
        self.pending: list[Edit] = []
        self.draft: Draft | None = None
        self.record: tuple[list[str], list[str], list[str]] = ([], [], [])
        self.hints = Hints()
        self.answer_declared: dict = {}
        self.status = w.HTML()
        self.status.add_class("mf-status")
        tabs = w.Tab(
            children=[
                self._patient_tab(suite),
                self._tools_tab(),
                self._verifiers_tab(),
                self._gold_tab(),
                self._cases_tab(),
                self._check_tab(target),
            ],
            titles=[
                "1 Patient & task",
                "2 Tools & policy",
                "3 Verifiers",
                "4 Gold solution",
                "5 Counterexamples",
                "6 Check & save",
            ],
        )
        self.tabs = tabs
        head = w.HTML(f"<style>{CSS}</style>{views.banner()}<div class='mf-title'>TaskPackage designer</div>")
        super().__init__([head, self.status, tabs])
        self.add_class("mf-designer")
        for name, value in list(vars(self).items()):  # a page (and a browser test) finds each part by its class
            if isinstance(value, w.Widget) and not name.startswith("_"):
                value.add_class(f"mf-in-{name}")
        for name, box in self.tool_boxes.items():
            box.add_class(f"mf-tool-{name}")
        self._pick_patient()

    # --- 1 patient & task ---------------------------------------------------------------------------------------

    def _patient_tab(self, suite: str) -> w.Widget:
        self.patient = w.Dropdown(
            options=[(p.label, i) for i, p in enumerate(self.patients)], value=0, layout=w.Layout(width="100%")
        )
        self.patient_info = w.HTML()
        self.bundle_path = w.Text(placeholder="a FHIR R4 Bundle file, e.g. synthea/output/fhir/patient.json")
        self.bundle_upload = w.FileUpload(accept=".json", multiple=False, description="Upload a Bundle")
        self.import_message = w.HTML()
        self.bundle_upload.observe(lambda _: self._upload(), names="value")
        self.package_id = w.Text(value="CU-NEW-1")
        self.title = w.Text(value="", placeholder="a short title, e.g. 奥美拉唑处方")
        self.suite = w.Text(value=suite)
        self.category = w.Dropdown(options=[*sorted(PLANS), "custom"], value="medication_management")
        self.category_help = w.HTML()
        self.risk = w.Dropdown(options=["low", "medium", "high", "critical"], value="medium")
        self.instruction_zh = w.Textarea(
            placeholder="给智能体的指令（中文）", layout=w.Layout(width="100%", height="5em")
        )
        self.instruction_en = w.Textarea(
            placeholder="The instruction in English", layout=w.Layout(width="100%", height="5em")
        )
        self.language = w.ToggleButtons(options=[("中文", "zh"), ("English", "en")], value="zh")
        self.context = MapForm("context", on_change=self._sync, hints=self.hints)
        self.slices = MapForm("slices", on_change=self._sync)
        self.answer_fields = MapForm(
            "answer", on_change=self._sync, item={"$ref": "#/$defs/AnswerField"}, defs=ANSWER_DEFS
        )
        self.patient.observe(lambda _: self._pick_patient(), names="value")
        self.category.observe(lambda _: self._show_category(), names="value")
        self._show_category()
        for field in (
            self.package_id,
            self.title,
            self.suite,
            self.category,
            self.risk,
            self.instruction_zh,
            self.instruction_en,
            self.language,
        ):
            field.observe(lambda _: self._sync(), names="value")
        return w.VBox(
            [
                section(
                    "Patient (synthetic)",
                    self.patient,
                    self.patient_info,
                    note="The whole fixture is copied, other patients included, so that patient scope matters.",
                ),
                section(
                    "Or import a patient from a FHIR Bundle",
                    w.HBox([self.bundle_path, button("Import", "", self.import_path), self.bundle_upload]),
                    self.import_message,
                    note="A FHIR R4 Bundle (e.g. from Synthea; synthetic records only), checked as a package's "
                    "fixture is: FHIR R4, every record typed and identified once, references resolved.",
                ),
                section(
                    "Package",
                    labelled("id", self.package_id),
                    labelled("title", self.title),
                    labelled("suite", self.suite),
                    labelled("category", self.category),
                    self.category_help,
                    labelled("risk", self.risk),
                ),
                section(
                    "Instruction",
                    labelled("中文", self.instruction_zh),
                    labelled("English", self.instruction_en),
                    labelled("the agent reads", self.language),
                    labelled("context", self.context),
                    labelled("slices", self.slices),
                    note="Context: the structured facts an agent needs (always the MRN); never the answer. "
                    "Slices: labels to group results by (e.g. outcome: act).",
                ),
                section(
                    "The answer the agent returns",
                    self.answer_fields,
                    note="Each field of the structured answer, typed: a quantity with its unit, a date, a concept "
                    "from a terminology, one of a few options, a list... The agent is told this shape; "
                    "the answer check compares the values by type.",
                ),
            ]
        )

    def import_path(self) -> None:
        """Import the patient of the Bundle file named in the path field."""
        self.import_bundle(Path(self.bundle_path.value.strip()).expanduser())

    def _upload(self) -> None:
        """Keep an uploaded Bundle in the target's ``imported/`` folder, then import its patient."""
        if not self.bundle_upload.value:
            return
        upload = self.bundle_upload.value[0]
        path = Path(self.target.value) / "imported" / Path(upload["name"]).name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(bytes(upload["content"]))
        self.import_bundle(path)

    def import_bundle(self, path: Path) -> None:
        """Add the patient of a Bundle file to the patients and pick it; a bad file is one line naming the file
        and the field."""
        try:
            patient = patient_from_bundle(path)
        except ForgeError as exc:
            self.import_message.value = views.problems_view([str(exc).split("\n")[0]])
            return
        self.patients.append(patient)
        self.patient.options = [(p.label, i) for i, p in enumerate(self.patients)]
        self.patient.value = len(self.patients) - 1
        self.import_message.value = f"<div class='mf-ok'>✓ imported {views.escape(patient.label)}</div>"

    def _show_category(self) -> None:
        text = views.escape(category_help(self.category.value).replace("``", ""))
        self.category_help.value = f"<div class='mf-help mf-plan'>{text}</div>"

    # --- 2 tools, policy, budget, faults ------------------------------------------------------------------------

    def _tools_tab(self) -> w.Widget:
        self.tool_boxes = {
            name: w.Checkbox(
                value=False,
                description=name,
                indent=False,
                tooltip=(e.value.description or "").split("\n")[0],
                layout=w.Layout(width="16em"),
            )
            for name, e in self.tool_entries.items()
        }
        groups = []
        for kind, title in (("read", "read the chart"), ("compute", "compute / look up"), ("write", "write")):
            boxes = [b for n, b in self.tool_boxes.items() if self.tool_entries[n].value.kind == kind]
            groups.append(
                w.VBox(
                    [
                        w.HTML(f"<div class='mf-sub'>{title}</div>"),
                        w.GridBox(boxes, layout=w.Layout(grid_template_columns="repeat(4, 16em)")),
                    ]
                )
            )
        write_types = sorted({e.value.writes for e in self.tool_entries.values() if e.value.writes})
        write_tools = [n for n, e in self.tool_entries.items() if e.value.writes]
        self.writable = w.TagsInput(
            value=[], allowed_tags=write_types, allow_duplicates=False, placeholder="e.g. MedicationRequest, then Tab"
        )
        self.precedence_action = w.Dropdown(options=[("—", "")] + [(n, n) for n in write_tools], value="")
        self.precedence_requires = w.TagsInput(
            value=[],
            allowed_tags=list(self.tool_entries),
            allow_duplicates=False,
            placeholder="e.g. patient_history, then Tab",
        )
        self.precedence_enforce = w.Checkbox(
            value=False, description="deny the action (else only record it)", indent=False
        )
        self.max_calls = w.BoundedIntText(value=20, min=1, max=500)
        self.max_seconds = w.BoundedFloatText(value=30, min=0.1, max=3600)
        self.max_cost = w.BoundedFloatText(value=0.5, min=0, max=100)
        self.faults: list[dict] = []
        self.fault_tool = w.Dropdown(options=list(self.tool_entries))
        self.fault_call = w.BoundedIntText(value=1, min=1, max=100, layout=w.Layout(width="6em"))
        self.fault_kind = w.Dropdown(options=["timeout", "error"], layout=w.Layout(width="8em"))
        self.fault_list = w.HTML()
        for field in (
            *self.tool_boxes.values(),
            self.writable,
            self.precedence_action,
            self.precedence_requires,
            self.precedence_enforce,
            self.max_calls,
            self.max_seconds,
            self.max_cost,
        ):
            field.observe(lambda _: self._sync(), names="value")
        return w.VBox(
            [
                section("Tool manifest", *groups, note="The only tools that exist for this task."),
                section(
                    "Policy",
                    labelled("may write", self.writable),
                    labelled("before", self.precedence_action),
                    labelled("requires", self.precedence_requires),
                    labelled("", self.precedence_enforce),
                    note="Resource types the task's role may write; checks that must succeed before an action.",
                ),
                section(
                    "Budget",
                    labelled("max calls", self.max_calls),
                    labelled("max seconds", self.max_seconds),
                    labelled("max cost (USD)", self.max_cost),
                ),
                section(
                    "Injected faults",
                    w.HBox(
                        [
                            self.fault_tool,
                            w.HTML("&nbsp;on call&nbsp;"),
                            self.fault_call,
                            self.fault_kind,
                            button("Add fault", "", self._add_fault),
                            button("Remove last", "", self._remove_fault),
                        ]
                    ),
                    self.fault_list,
                ),
            ]
        )

    def _add_fault(self) -> None:
        self.faults.append(
            {"tool": self.fault_tool.value, "on_call": self.fault_call.value, "kind": self.fault_kind.value}
        )
        self._sync()

    def _remove_fault(self) -> None:
        self.faults = self.faults[:-1]
        self._sync()

    # --- 3 verifiers --------------------------------------------------------------------------------------------

    def _verifiers_tab(self) -> w.Widget:
        self.kind = w.Dropdown(
            options=[(f"{n} — {(e.value.description or '').split('.')[0]}", n) for n, e in self.kind_entries.items()],
            layout=w.Layout(width="100%"),
        )
        self.kind_help = w.HTML()
        self.verifier_id = w.Text(placeholder="a short id, e.g. omeprazole-ordered")
        self.verifier_category = w.Dropdown(options=VERIFIER_CATEGORIES)
        self.severity = w.ToggleButtons(options=["hard", "soft"], value="hard")
        self.params_box = w.VBox()
        self.verifier_message = w.HTML()
        self.verifier_list = w.HTML()
        self.remove_verifier = w.Dropdown(options=[])
        self.kind.observe(lambda _: self._pick_kind(), names="value")
        self._pick_kind()
        return w.VBox(
            [
                section(
                    "Add a verifier from the catalog",
                    labelled("kind", self.kind),
                    self.kind_help,
                    labelled("id", self.verifier_id),
                    labelled("category", self.verifier_category),
                    labelled("severity", self.severity),
                    w.HTML("<div class='mf-sub'>parameters</div>"),
                    self.params_box,
                    w.HBox([button("Add verifier", "primary", self._add_verifier)]),
                    self.verifier_message,
                ),
                section(
                    "Verifiers of this package",
                    self.verifier_list,
                    w.HBox([self.remove_verifier, button("Remove", "", self._remove_verifier)]),
                ),
            ]
        )

    def _pick_kind(self, values: dict | None = None) -> None:
        """The params form of the chosen kind (holding ``values``)."""
        entry = self.kind_entries[self.kind.value]
        self.kind_help.value = f"<div class='mf-help'>{views.escape(entry.value.description or '')}</div>"
        self.params_form = SchemaForm(model_of(entry).model_json_schema(), values, hints=self.hints)
        self.params_form.add_class(f"mf-params-{entry.name.replace('.', '-')}")
        self.params_box.children = [self.params_form]

    def _add_verifier(self) -> None:
        try:
            params = self.params_form.values()
            if not self.verifier_id.value.strip():
                raise ValueError("id: give the verifier an id")
            self._current.add_verifier(
                self.verifier_id.value.strip(),
                self.kind.value,
                self.verifier_category.value,
                self.severity.value,
                **params,
            )
        except (ValueError, ValidationError) as exc:
            self.verifier_message.value = views.problems_view([first_line(exc)])
            return
        self.verifier_message.value = f"<div class='mf-ok'>✓ added {views.escape(self.verifier_id.value)}</div>"
        self._sync()

    def _remove_verifier(self) -> None:
        self._current.verifiers = [v for v in self._current.verifiers if v.id != self.remove_verifier.value]
        self._sync()

    # --- 4 gold solution ----------------------------------------------------------------------------------------

    def _gold_tab(self) -> w.Widget:
        self.call_tool = w.Dropdown(options=[])
        self.args_box = w.VBox()
        self.last_call = w.HTML()
        self.call_list = w.HTML()
        self.answer = w.Textarea(
            placeholder="The final answer, as the agent should give it", layout=w.Layout(width="100%", height="4em")
        )
        self.output_box = w.VBox([w.HTML(NO_ANSWER)])
        self.output_form = SchemaForm({"type": "object", "properties": {}})
        self.gold_status = w.HTML()
        self.call_tool.observe(lambda _: self._pick_tool(), names="value")
        return w.VBox(
            [
                section(
                    "Call a tool against the fixture EHR",
                    labelled("tool", self.call_tool),
                    self.args_box,
                    w.HBox([button("Call tool", "primary", self._call), button("Undo last call", "", self._undo)]),
                    self.last_call,
                    note="Each call runs for real, under the policy, faults and budget above, and shows its result "
                    "and what it changed in the patient's record.",
                ),
                section("Calls so far", self.call_list),
                section(
                    "Finish",
                    labelled("answer", self.answer),
                    labelled("structured answer", self.output_box),
                    w.HBox([button("Use these calls as the gold solution", "success", self._use_as_gold)]),
                    self.gold_status,
                ),
            ]
        )

    def args_form_of(self, tool: str, box: w.VBox, css: str) -> SchemaForm:
        """A form of ``tool``'s arguments (the current patient filled in), shown in ``box``."""
        schema = model_of(self.tool_entries[tool]).model_json_schema() if tool else {"properties": {}}
        prefill = {"patient_id": self.current.patient_id} if "patient_id" in schema.get("properties", {}) else {}
        form = SchemaForm(schema, prefill, hints=self.hints)
        form.add_class(f"{css}-{tool}")
        box.children = [form] if tool else []
        return form

    def _pick_tool(self) -> None:
        self.args_form = self.args_form_of(self.call_tool.value, self.args_box, "mf-args")

    def _call(self) -> None:
        try:
            args = self.args_form.values()
        except ValueError as exc:
            self.last_call.value = views.problems_view([str(exc)])
            return
        if self.recorder is None:
            self.recorder = Recorder(self._current)
        elif self.recorder.session.package != self._current.public:
            self.recorder.rerun()
        try:
            recorded = self.recorder.call(self.call_tool.value, **args)
        except ForgeError as exc:
            self.last_call.value = views.problems_view([str(exc)])
            return
        except BudgetExceeded as exc:  # it would end a trial; here it only refuses the call
            self.last_call.value = views.problems_view([f"over the budget: {exc}"])
            return
        self.last_call.value = views.call_view(recorded)
        self.call_list.value = views.calls_view(self.recorder.calls)

    def _undo(self) -> None:
        if self.recorder and self.recorder.calls:
            self.recorder.undo()
            self.last_call.value = ""
            self.call_list.value = views.calls_view(self.recorder.calls)

    def _use_as_gold(self) -> None:
        if self.recorder is None or not self.recorder.calls:
            self.gold_status.value = views.problems_view(["call the tools of the gold solution first"])
            return
        try:
            output = self.output_form.values()
            self.recorder.finish(self.answer.value, output)
        except (ValueError, ValidationError) as exc:
            self.gold_status.value = views.problems_view([first_line(exc)])
            return
        gold = self._current.gold
        assert gold is not None  # just recorded
        self.gold_status.value = f"<div class='mf-ok'>✓ gold solution: {len(gold.calls)} calls</div>"
        self._refresh_cases()
        self._sync()

    # --- 5 counterexamples and valid variants -------------------------------------------------------------------

    def _cases_tab(self) -> w.Widget:
        self.gold_calls = w.HTML()
        self.case_kind = w.ToggleButtons(options=["counterexample", "valid variant"], value="counterexample")
        self.case_name = w.Text(placeholder="e.g. no-interaction-check")
        self.must_fail = w.TagsInput(
            value=[], allowed_tags=[], allow_duplicates=False, placeholder="a verifier id, then Tab"
        )
        self.reason = w.Text(placeholder="why this is as good as the gold")
        self.edit_op = w.Dropdown(options=EDIT_OPS, value="drop")
        self.edit_at = w.Dropdown(options=[])
        self.edit_path = w.Text(placeholder="medication_request_create#1.dose, answer, output.x")
        self.edit_value = w.Text(placeholder="the new value: a word, a number, true or false")
        self.edit_tool = w.Dropdown(options=[])
        self.edit_args = w.VBox()
        self.edit_args_form = SchemaForm({"type": "object", "properties": {}})
        self.edit_tool.observe(lambda _: self._pick_edit_tool(), names="value")
        self.edits_view = w.HTML()
        self.case_message = w.HTML()
        self.case_list = w.HTML()
        self.remove_case = w.Dropdown(options=[])
        self.edit_rows = {
            "at": labelled("call", self.edit_at),
            "path": labelled("path", self.edit_path),
            "value": labelled("value", self.edit_value),
            "tool": labelled("new call: tool", self.edit_tool),
            "args": labelled("new call: args", self.edit_args),
        }
        self.edit_op.observe(lambda _: self._show_edit_rows(), names="value")
        self._show_edit_rows()
        return w.VBox(
            [
                section(
                    "The gold solution's calls",
                    self.gold_calls,
                    note="An edit names a call as tool#n (the n-th call of that tool); each refers to the gold as it "
                    "is, so the order of the edits does not matter.",
                ),
                section(
                    "Edits of the gold",
                    labelled("edit", self.edit_op),
                    *self.edit_rows.values(),
                    w.HBox([button("Add edit", "", self._add_edit), button("Clear edits", "", self._clear_edits)]),
                    self.edits_view,
                ),
                section(
                    "The case",
                    labelled("kind", self.case_kind),
                    labelled("name", self.case_name),
                    labelled("must fail", self.must_fail),
                    labelled("reason (variant)", self.reason),
                    w.HBox([button("Add case", "primary", self._add_case)]),
                    self.case_message,
                ),
                section(
                    "Cases of this package",
                    self.case_list,
                    w.HBox([self.remove_case, button("Remove", "", self._remove_case)]),
                ),
            ]
        )

    def _pick_edit_tool(self) -> None:
        """The arguments form of the tool a replacing or inserted call calls."""
        self.edit_args_form = self.args_form_of(self.edit_tool.value, self.edit_args, "mf-edit-args")

    def _show_edit_rows(self) -> None:
        """Only the fields the chosen kind of edit takes."""
        op = self.edit_op.value
        shown = {
            "drop": {"at"},
            "replace": {"at", "tool", "args"},
            "insert": {"at", "tool", "args"},
            "set": {"path", "value"},
            "add": {"path", "value"},
            "delete": {"path"},
        }[op]
        for name, row in self.edit_rows.items():
            row.layout.display = "" if name in shown else "none"

    def edit_from_form(self) -> Edit:
        """The edit the form describes (a ValueError or ValidationError when it cannot be one)."""
        op = self.edit_op.value
        data: dict[str, Any] = {"op": op}
        if op in ("drop", "replace") or (op == "insert" and self.edit_at.value != ""):
            data["at"] = self.edit_at.value
        if op in ("replace", "insert"):
            data["call"] = {"tool": self.edit_tool.value, "args": self.edit_args_form.values()}
        if op in ("set", "add", "delete"):
            data["path"] = self.edit_path.value.strip()
        if op in ("set", "add"):
            data["value"] = scalar(self.edit_value.value) if self.edit_value.value.strip() else None
        return Edit.model_validate(data)

    def _add_edit(self) -> None:
        """Add the form's edit to the case being written, if it fits the gold."""
        gold = self._current.gold
        problem = "record the gold solution first" if gold is None else None
        if gold is not None:
            try:
                edit = self.edit_from_form()
                apply_edits(gold, [*self.pending, edit])
                self.pending.append(edit)
            except EditError as exc:
                problem = f"edits.{exc.field}: {exc.message}"
            except (ValueError, ValidationError) as exc:
                problem = first_line(exc)
        self.edits_view.value = self._pending_view() + (views.problems_view([problem]) if problem else "")

    def _clear_edits(self) -> None:
        self.pending = []
        self.edits_view.value = self._pending_view()

    def _pending_view(self) -> str:
        rows = [[str(i), views.escape(views.edit_text(e))] for i, e in enumerate(self.pending, 1)]
        return views.table(["#", "edit"], rows) if rows else "<span class='mf-sub'>no edits yet</span>"

    def _add_case(self) -> None:
        name = self.case_name.value.strip()
        try:
            if not name or not self.pending:
                raise ValueError("name the case and add at least one edit")
            if self.case_kind.value == "counterexample":
                self._current.add_counterexample(name, list(self.pending), list(self.must_fail.value))
            else:
                self._current.add_variant(name, list(self.pending), self.reason.value.strip())
        except (ValueError, ValidationError) as exc:
            self.case_message.value = views.problems_view([first_line(exc)])
            return
        self.case_message.value = (
            f"<div class='mf-ok'>✓ added {views.escape(self.case_kind.value)} {views.escape(name)}</div>"
        )
        self.pending = []
        self.edits_view.value = self._pending_view()
        self._sync()

    def _remove_case(self) -> None:
        name = self.remove_case.value
        self._current.counterexamples = [c for c in self._current.counterexamples if c.name != name]
        self._current.valid_variants = [v for v in self._current.valid_variants if v.name != name]
        self._sync()

    def _refresh_cases(self) -> None:
        gold = self._current.gold
        self.gold_calls.value = views.calls_view(gold.calls) if gold else views.calls_view([])
        labels = call_labels(gold.calls) if gold else []
        self.edit_at.options = [(f"step {i} · {label}", label) for i, label in enumerate(labels, 1)] + [
            ("(at the end)", "")
        ]

        def edits(case) -> str:
            return "<br>".join(views.escape(views.edit_text(e)) for e in case.edits or []) or "(a full trajectory)"

        rows = [
            ["counterexample", views.escape(c.name), "must fail " + views.escape(", ".join(c.must_fail)), edits(c)]
            for c in self._current.counterexamples
        ]
        rows += [
            ["valid variant", views.escape(v.name), views.escape(v.reason), edits(v)]
            for v in self._current.valid_variants
        ]
        self.case_list.value = (
            views.table(["kind", "name", "must fail / why valid", "edits of the gold"], rows)
            if rows
            else "<span class='mf-sub'>no cases yet</span>"
        )
        self.remove_case.options = [c.name for c in self._current.counterexamples + self._current.valid_variants]

    # --- 6 check and save ---------------------------------------------------------------------------------------

    def _check_tab(self, target: str | Path) -> w.Widget:
        self.target = w.Text(value=str(target), layout=w.Layout(width="100%"))
        self.check_output = w.HTML()
        self.dry_output = w.HTML()
        self.dry_rows = w.HBox(layout=w.Layout(flex_flow="row wrap", align_items="center"))
        self.player_box = w.VBox()
        self.selftest_output = w.HTML()
        self.fixes = w.VBox()
        self.save_output = w.HTML()
        self.saved: Path | None = None
        self.saved_as: str | None = None
        """The draft's fingerprint when it was saved: the saved files are the draft's while it is the same."""
        self.results: dict[str, tuple[str, bool, str]] = {}
        """Check name -> (the draft's fingerprint when it ran, passed, what it said): the status line and the
        sections read them both."""
        self.target.observe(lambda _: self._sync(), names="value")
        return w.VBox(
            [
                section("Validate", w.HBox([button("Validate (FHIR R4 too)", "", self.validate)]), self.check_output),
                section(
                    "Dry run of the reference agents",
                    w.HBox([button("Dry run", "", self.run_agents)]),
                    self.dry_output,
                    self.dry_rows,
                    self.player_box,
                    note="One trial of each reference agent, graded by this package's verifiers; open a trial to "
                    "step through it.",
                ),
                section(
                    "Save both halves",
                    labelled("target folder", self.target),
                    w.HBox([button("Save", "success", self.save)]),
                    self.save_output,
                    note="Writes task_packages/<suite>/<id>/ and verifiers/<suite>/<id>.yaml under the target.",
                ),
                section(
                    "Selftest with mutants",
                    w.HBox([button("forge selftest --mutants", "warning", self.run_selftest)]),
                    self.selftest_output,
                    self.fixes,
                    note="On the saved package while it is as saved, else on the draft as it would be saved. A "
                    "spoiled copy of the gold that no check rejects offers the check that would.",
                ),
            ]
        )

    def fingerprint(self) -> str:
        """The draft as it would be saved (its public and hidden halves), to tell whether a result is still its."""
        draft = self._current
        hidden = draft.hidden_data() if draft.gold is not None else {}
        return json.dumps([draft.public.model_dump(mode="json"), hidden], ensure_ascii=False, sort_keys=True)

    def _record(self, check: str, passed: bool, said: str) -> None:
        self.results[check] = (self.fingerprint(), passed, said)
        self._sync()

    def validate(self) -> list[str]:
        found = problems(self._current, fhir=True)
        self.check_output.value = views.problems_view(found)
        self._record("validation", not found, found[0] if found else "")
        return found

    def run_agents(self) -> None:
        self.dry_output.value = "<span class='mf-sub'>running…</span>"
        self.dry_rows.children, self.player_box.children = [], []
        try:
            self.last_dry_run = dry_run(self._current)
        except ForgeError as exc:
            self.dry_output.value = views.problems_view([str(exc)])
            return
        self.dry_output.value = views.dry_run_view(self.last_dry_run)
        self.dry_rows.children = [w.HTML("<span class='mf-sub'>open a trial in the player:</span>")] + [
            button(f"▶ {r.agent}", "", lambda r=r: self.open_trial(r)) for r in self.last_dry_run
        ]

    def open_trial(self, run: DryRun) -> None:
        """Play a dry run's trial below its table."""
        head = w.HTML(f"<div class='mf-sub'>{views.escape(run.agent)}'s trial, step by step</div>")
        with open_run(run.run) as stored:  # opened here: a notebook may call each button in a thread of its own
            self.player_box.children = [head, play(stored.trial(run.task, run.agent, 0))]

    def run_selftest(self) -> None:
        self.selftest_output.value = "<span class='mf-sub'>running…</span>"
        self.fixes.children = []
        try:
            same = self.saved is not None and self.saved_as == self.fingerprint()
            source = load_package(self.saved) if same and self.saved else self._current
            self.last_selftest = selftest(source, mutants=True)
        except ForgeError as exc:
            self.selftest_output.value = views.problems_view([str(exc)])
            self._record("selftest", False, str(exc))
            return
        self.selftest_output.value = views.selftest_view(self.last_selftest)
        self.fixes.children = self._fix_rows(self.last_selftest)
        failed = [c.case for c in self.last_selftest.cases if not c.ok]
        mutants = self.last_selftest.mutants
        survivors = [r for r in mutants.results if r.status in PROBLEMS] if mutants else []
        said = f"{', '.join(failed)} did not come out as declared" if failed else f"{len(survivors)} mutant(s) survived"
        self._record("selftest", self.last_selftest.ok, "" if self.last_selftest.ok else said)

    def _fix_rows(self, result: SelftestResult) -> list[w.Widget]:
        """A row per surviving mutant: what it is, the fix that kills it (one click applies it and runs the
        selftest again), or declaring it valid."""
        rows: list[w.Widget] = []
        for r in result.mutants.results if result.mutants else []:
            if r.status != "survived":
                continue
            fix = fix_for(self._current, r.mutant)
            what = w.HTML(
                f"<div class='mf-problem'>survived: {views.escape(r.mutant.operator)} "
                f"{views.escape(r.mutant.target)} — {views.escape(r.mutant.note)}</div>"
            )
            parts: list[w.Widget] = [what]
            if fix is not None:
                parts.append(button(f"Fix: {fix.label}", "primary", lambda fix=fix: self.apply_fix(fix)))
            else:
                parts.append(w.HTML("<span class='mf-sub'>no one check tells it apart: add one by hand</span>"))
            parts.append(button("It is as good as the gold", "", lambda m=r.mutant: self.declare(m)))
            row = w.HBox(parts)
            row.add_class("mf-fix")
            rows.append(row)
        return rows

    def apply_fix(self, fix: Fix) -> None:
        """Apply ``fix`` to the draft (saving again if it was saved) and run the selftest again."""
        fix.apply(self._current)
        self._resave()
        self.run_selftest()

    def declare(self, mutant) -> None:
        declare_valid(self._current, mutant, "declared in the designer: as good as the gold")
        self._resave()
        self.run_selftest()

    def _resave(self) -> None:
        self._sync()
        if self.saved is not None:
            self.save()

    def save(self) -> None:
        found = problems(self._current)
        if found:
            self.save_output.value = views.problems_view(found)
            return
        folder, hidden = self._current.save()
        self.saved, self.saved_as = folder, self.fingerprint()
        self.save_output.value = (
            f"<div class='mf-ok'>✓ saved</div><div><code>{views.escape(str(folder))}</code>"
            f"</div><div><code>{views.escape(str(hidden))}</code></div>"
        )

    # --- shared -------------------------------------------------------------------------------------------------

    @property
    def current(self):
        return self.patients[self.patient.value]

    def _pick_patient(self) -> None:
        """A new patient starts a new draft: the gold and cases belong to the patient they were recorded on."""
        patient = self.current
        self.draft, self.recorder, self.pending = None, None, []
        self.patient_info.value = views.patient_view(patient)
        self.last_call.value = self.call_list.value = self.gold_status.value = ""
        self.record = record_hints(patient.bundle(), patient.patient_id)
        self._refresh_hints()
        if self.context.values() != {"mrn": patient.mrn}:
            self.context.set({"mrn": patient.mrn})  # which syncs
        else:
            self._sync()

    def public_fields(self) -> dict:
        """The public half as the form gives it (ValueError where a field cannot be read)."""
        rule = (
            [
                {
                    "action": self.precedence_action.value,
                    "requires": list(self.precedence_requires.value),
                    "enforce": self.precedence_enforce.value,
                }
            ]
            if self.precedence_action.value
            else []
        )
        return {
            "risk": self.risk.value,
            "slices": self.slices.values(),
            "policy": {"writable_types": list(self.writable.value), "precedence": rule},
            "budget": {
                "max_calls": self.max_calls.value,
                "max_seconds": self.max_seconds.value,
                "max_cost": self.max_cost.value,
            },
            "faults": list(self.faults),
        }

    @property
    def _current(self) -> Draft:
        """The draft: picking a patient makes it, and the steps that use it come after."""
        assert self.draft is not None
        return self.draft

    def _sync(self) -> None:
        """Rebuild the draft's public half from the form and show what is wrong, as the user types."""
        target = Path(self.target.value)
        tools = [n for n, b in self.tool_boxes.items() if b.value]
        try:
            fresh = new_draft(
                self.current,
                self.package_id.value.strip(),
                self.title.value.strip(),
                {"zh": self.instruction_zh.value.strip(), "en": self.instruction_en.value.strip()},
                tools,
                target / "task_packages",
                target / "verifiers",
                suite=self.suite.value.strip(),
                category=self.category.value,
                language=self.language.value,
                context=self.context.values(),
                answer=self.answer_fields.values(),
                **self.public_fields(),
            )
        except ValidationError as exc:
            where = target / "task_packages" / self.suite.value.strip() / self.package_id.value.strip()
            self._show([form_problem(where / "package.yaml", exc)])
            return
        except (ValueError, ForgeError) as exc:
            self._show([str(exc)])
            return
        if self.draft is None:
            self.draft = fresh
        else:
            self.draft.public, self.draft.fixtures, self.draft.suite = fresh.public, fresh.fixtures, fresh.suite
        self._refresh_hints()
        self._refresh_answer()
        self._refresh_lists(tools)
        manifest = self.draft.folder / "package.yaml"
        hints = [
            f"{manifest}: {field}: {text}"
            for field, text, empty in [
                ("title", "give the package a title", not self.title.value.strip()),
                ("task.instruction.zh", "write the instruction in 中文", not self.instruction_zh.value.strip()),
                ("task.instruction.en", "write the instruction in English", not self.instruction_en.value.strip()),
            ]
            if empty
        ]
        self._show(hints + problems(self.draft))

    def _refresh_hints(self) -> None:
        """The names and codes the forms offer: the manifest's tools (the catalog's while none is ticked), the
        patient's record, the typed answer. Forms made from now on use them."""
        tools = [n for n, b in self.tool_boxes.items() if b.value] or list(self.tool_entries)
        answer = self.draft.public.task.answer if self.draft else {}
        fresh = designer_hints(tools, self.tool_args, self.written_types, self.record, answer)
        for part in ("choices", "suggestions", "keys", "schemas"):
            getattr(self.hints, part).clear()
            getattr(self.hints, part).update(getattr(fresh, part))

    def _refresh_answer(self) -> None:
        """The gold's structured answer as a form of the typed answer's fields, made again when they change."""
        answer = self._current.public.task.answer
        if answer == self.answer_declared:
            return
        self.answer_declared = answer
        kept = self.output_form.values() if answer else {}
        self.output_form = SchemaForm(answer_schema(answer), kept, hints=self.hints)
        self.output_box.children = [self.output_form] if answer else [w.HTML(NO_ANSWER)]

    def _refresh_lists(self, tools: list[str]) -> None:
        if list(self.call_tool.options) != tools:
            self.call_tool.options = tools
            self.edit_tool.options = tools
        ids = [v.id for v in self._current.verifiers]
        self.must_fail.allowed_tags = ids
        self.remove_verifier.options = ids
        rows = [
            [
                views.escape(v.id),
                views.escape(v.kind),
                views.escape(v.category),
                views.escape(v.severity),
                f"<code>{views.escape(yaml.safe_dump(v.params, allow_unicode=True, default_flow_style=True).strip())}"
                f"</code>",
            ]
            for v in self._current.verifiers
        ]
        self.verifier_list.value = (
            views.table(["id", "kind", "category", "severity", "params"], rows)
            if rows
            else "<span class='mf-sub'>no verifiers yet</span>"
        )
        self.fault_list.value = (
            views.table(["tool", "on call", "kind"], [[f["tool"], f["on_call"], f["kind"]] for f in self.faults])
            if self.faults
            else ""
        )
        self._refresh_cases()

    def _show(self, found: list[str]) -> None:
        """The one status line: the form's problems, else the checks that ran on the draft as it is (a result of
        an earlier draft is dropped, and its section says to run it again)."""
        now = self.fingerprint() if not found else None
        for check, (when, _, _) in list(self.results.items()):
            if when != now:
                del self.results[check]
                self._outdated(check)
        self.status.value = views.status_view(found, {k: (ok, said) for k, (_, ok, said) in self.results.items()})

    def _outdated(self, check: str) -> None:
        note = "<div class='mf-sub'>the package changed since: run it again</div>"
        if check == "selftest":
            self.selftest_output.value, self.fixes.children = note, []
        elif check == "validation":
            self.check_output.value = note
