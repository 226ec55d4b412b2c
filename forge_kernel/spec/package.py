"""The public half of a TaskPackage: everything an agent may see."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator, model_validator

Language = Literal["zh", "en"]
PLAIN_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
"""A plain file or folder name: a letter or digit, then letters, digits, ``.``, ``_`` or ``-`` (no ``/``, no ``..``)."""
SUITE_NAME = "suite"
"""What a suite's defaults are called (``suite.yaml`` beside its packages and its hidden halves): no package's id."""


class Strict(BaseModel):
    """Base for everything read from disk: unknown fields are errors."""

    model_config = ConfigDict(extra="forbid")


class Environment(Strict):
    """The EHR the task runs against."""

    ehr_image: str = Field(description="Name of the EHR image (synthetic).")
    ehr_version: str
    fixtures: list[str] = Field(
        description="FHIR R4 Bundle files, paths inside the package folder: the EHR, or an overlay on the shared "
        "image ehr_images/<ehr_image>/<ehr_version>/ above the package (then it may be empty)."
    )
    now: AwareDatetime = Field(description="The frozen clock of the EHR, with a time zone.")
    patient_id: str = Field(description="The current patient: the only one the agent may read.")


AnswerType = Literal["quantity", "number", "date", "interval", "concept", "status", "boolean", "text", "list", "record"]


class AnswerField(Strict):
    """One field of the typed answer."""

    type: AnswerType
    description: str = Field("", description="What the field holds, in words the agent is shown.")
    unit: str | None = Field(None, description="quantity: the unit it is compared in; any unit of its dimension.")
    options: list[str] | None = Field(None, min_length=2, description="status: the closed set of values.")
    terms: Literal["drugs", "orders", "labs", "diagnoses", "nursing_items"] | None = Field(
        None, description="concept: the terminology its names (zh or en) or codes come from."
    )
    items: AnswerField | None = Field(None, description="list: the type of every item.")
    fields: dict[str, AnswerField] | None = Field(None, description="record: its fields, each typed (an object).")
    optional: bool = Field(False, description="The agent may leave it out (e.g. null when nothing applies).")

    @model_validator(mode="after")
    def _shape(self) -> AnswerField:
        needs = {"quantity": "unit", "status": "options", "concept": "terms", "list": "items", "record": "fields"}
        for kind, key in needs.items():
            if (self.type == kind) != (getattr(self, key) is not None):
                raise ValueError(f"{key} is given with type {kind} and only then")
        if self.items is not None and self.items.type == "list":
            raise ValueError("a list of lists is not an answer field")
        if self.fields == {}:
            raise ValueError("a record has at least one field")
        return self


class TaskText(Strict):
    """What the agent is asked, in both languages, plus structured context."""

    instruction: dict[Language, str]
    language: Language = "zh"
    context: dict[str, Any] = Field(default_factory=dict)
    answer: dict[str, AnswerField] = Field(
        default_factory=dict,
        description="The typed answer: the fields of the structured output the agent returns, given to it as a JSON "
        "Schema; the hidden half's answer.typed compares them by type.",
    )


class Precedence(Strict):
    """Tools in ``requires`` must have succeeded before ``action`` is called."""

    action: str
    requires: list[str] = Field(min_length=1)
    enforce: bool = Field(False, description="Deny the action (true) or only record the breach (false).")


class Policy(Strict):
    """What the agent may touch."""

    patient_scope: Literal["current_patient"] = "current_patient"
    writable_types: list[str] = Field(
        default_factory=list, description="FHIR resource types the task may create or change."
    )
    readable_types: list[str] | None = Field(
        None,
        exclude_if=lambda types: types is None,
        description="FHIR resource types the generic FHIR tools (fhir_search, fhir_read) may read; unset: every type.",
    )
    precedence: list[Precedence] = Field(default_factory=list)


class Fault(Strict):
    """An injected failure on the n-th call (1-based) of a tool."""

    tool: str
    on_call: int = Field(1, ge=1)
    kind: Literal["timeout", "error"]
    message: str = "injected fault"


class Budget(Strict):
    """Hard limits for one trial."""

    max_calls: int = Field(20, ge=1)
    max_seconds: float = Field(60.0, gt=0)
    max_cost: float = Field(1.0, ge=0, description="US dollars the agent may report spending.")


class TaskPackage(Strict):
    """Public half of a TaskPackage (``package.yaml``)."""

    id: str = Field(pattern=PLAIN_NAME)
    version: str
    title: str
    suite: str = Field(pattern=PLAIN_NAME, description="The suite: names the folder of the hidden halves.")
    category: str
    purpose: Literal["capability", "regression"] = "capability"
    risk: Literal["low", "medium", "high", "critical"] = "low"
    slices: dict[str, str] = Field(
        default_factory=dict,
        description="Values a comparison reports every figure by (dimension, language, ...). `site` (the EHR image the "
        "data come from; default: environment.ehr_image) and `period` (e.g. 2024-H1; default: the month of "
        "environment.now) give out-of-site and out-of-time slices: synthetic, they prove test coverage, not fairness.",
    )
    covers: list[str] = Field(
        default_factory=list,
        exclude_if=lambda ids: not ids,
        description="Ids of the requirements the package tests (task_packages/requirements.yaml); `forge trace` "
        "checks each names one. Never given to the agent.",
    )
    environment: Environment
    task: TaskText
    tools: list[str] = Field(min_length=1, description="The tool manifest: the only tools that exist for this task.")
    policy: Policy = Field(default_factory=Policy)
    faults: list[Fault] = Field(default_factory=list)
    budget: Budget = Field(default_factory=Budget)

    @field_validator("id")
    @classmethod
    def _not_the_suite_file(cls, value: str) -> str:
        if value.lower() == SUITE_NAME:
            raise ValueError(
                f"{value!r} is taken: verifiers/<suite>/{SUITE_NAME}.yaml holds the suite's hidden defaults"
            )
        return value
