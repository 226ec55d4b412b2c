"""Tool base: a function with a pydantic argument model and a kind, registered by name in the catalog."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, TypeVar, get_type_hints

from pydantic import BaseModel, ConfigDict
from pydantic.json_schema import GenerateJsonSchema

from ..catalog import CATALOG
from ..ehr import EHRView

Kind = Literal["read", "write", "compute"]


@dataclass(frozen=True)
class Refers:
    """Marks an argument that names records of the EHR (``Annotated[str, Refers("Device")]``): ids of ``rtype``, or,
    with no type, "Type/id" references. The policy engine resolves each and keeps the call to the current patient."""

    rtype: str | None = None


ID_MAX = 64
"""The longest id an argument may give: a FHIR id's length (a patient's, a device's, an MRN, an idempotency key).
In the JSON Schema a model is given too, where it bounds a constrained generation that would otherwise run on to
the model's context (a small local model's first tool call, under llama-cpp-python's grammar)."""


ANY_TYPE = "Resource"
"""``Tool.writes`` of a tool whose arguments choose the type it writes (``Args.resource_type``), as FHIR names the
base of every resource."""


class Args(BaseModel):
    """Base of tool argument models: unknown arguments are errors."""

    model_config = ConfigDict(extra="forbid")

    def resource_type(self) -> str | None:
        """The FHIR resource type the call reads or writes when its arguments choose it (the generic FHIR tools):
        the policy checks it. None: the tool's own."""
        return None

    def records(self) -> Iterator[tuple[str, str]]:
        """(type, id) of records the arguments name apart from ``Refers`` marks (a type and an id given in two
        fields): the policy keeps them to the current patient too."""
        return iter(())


class ToolError(Exception):
    """A failure returned to the agent as ``{"code", "message"}``; never crashes a trial."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class ToolContext:
    """What a tool implementation sees: the trial's EHR view and the current patient."""

    view: EHRView
    patient_id: str


@dataclass(frozen=True)
class Tool:
    """A registered tool."""

    name: str
    kind: Kind
    description: str
    args_model: type[Args]
    run: Callable[[ToolContext, Any], Any]
    writes: str | None = None
    """FHIR resource type the tool creates or changes (write tools)."""

    def written_type(self, args: dict[str, Any]) -> str | None:
        """The resource type a call with these (raw) arguments writes: the tool's own, or, for a tool that writes
        ``ANY_TYPE``, the ``resourceType`` of the resource it is given."""
        resource = args.get("resource")
        if self.writes != ANY_TYPE:
            return self.writes
        return resource.get("resourceType") if isinstance(resource, dict) else None

    def json_schema(self) -> dict[str, Any]:
        """The argument model's JSON Schema: generated once per model, a fresh copy on every call."""
        schema: dict[str, Any] = json.loads(schema_text(self.args_model))
        return schema

    def openai_function(self) -> dict[str, Any]:
        """The tool as an OpenAI function-calling definition."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.json_schema()},
        }


class UntitledSchema(GenerateJsonSchema):
    """JSON Schema without the titles pydantic derives from names ("Patient Id" for ``patient_id``): they say nothing
    the name does not, and a model reads every tool's schema in its prompt, where each costs tokens."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def generate(self, schema: Any, mode: Any = "validation") -> dict[str, Any]:
        found = super().generate(schema, mode)
        found.pop("title", None)
        return found


@cache
def schema_text(model: type[Args]) -> str:
    """JSON text of a model's JSON Schema. Generating it costs ~0.2 ms per model and every trial's AgentTask needs it."""
    return json.dumps(model.model_json_schema(schema_generator=UntitledSchema))


F = TypeVar("F", bound=Callable[..., Any])

TOOLS = CATALOG.section("tool")
"""Every registered tool, by name."""


def tool(name: str, kind: Kind, writes: str | None = None) -> Callable[[F], F]:
    """Register a function ``fn(ctx, args)`` as a tool; its docstring is the description. A name is taken once."""

    def register(fn: F) -> F:
        params = list(inspect.signature(fn).parameters)
        model = get_type_hints(fn)[params[1]]
        CATALOG.add(
            "tool",
            name,
            Tool(name, kind, inspect.cleandoc(fn.__doc__ or ""), model, fn, writes),
            args={"kind": kind, "writes": writes},
            where=fn.__module__,
        )
        return fn

    return register
