"""The Agent protocol and AgentTask: the public half of a package, and nothing else."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from ..spec import AgentResult, Budget, TaskPackage, answer_schema


class AgentTask(BaseModel):
    """What an agent is given. Built from the public half only: no verifier, gold or counterexample."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    version: str
    title: str
    category: str
    language: str
    instruction: str
    """The instruction in the task's language."""
    instructions: dict[str, str]
    """The instruction in every language the package has."""
    context: dict[str, Any]
    now: datetime
    tool_names: list[str]
    """The task's tool manifest: the only tools that exist for this task."""
    tool_definitions: str = Field(repr=False)
    """The same tools as OpenAI function definitions, in JSON text (``tools`` parses it)."""
    budget: Budget
    seed: int
    """The trial's seed, for agents that sample."""
    answer_schema: dict[str, Any] | None = None
    """The JSON Schema of the structured output the task asks for (its typed answer), or None where it declares
    none."""

    @property
    def answer_schema_text(self) -> str:
        """``answer_schema`` as compact JSON, as a prompt gives it (no spaces: a small model reads each token); empty
        where the task declares none."""
        return json.dumps(self.answer_schema, ensure_ascii=False, separators=(",", ":")) if self.answer_schema else ""

    @property
    def tools(self) -> list[dict[str, Any]]:
        """OpenAI function definitions of the task's tool manifest; a fresh copy on every access."""
        tools: list[dict[str, Any]] = json.loads(self.tool_definitions)
        return tools

    @classmethod
    def from_package(cls, package: TaskPackage, seed: int) -> AgentTask:
        from ..tools import TOOLS  # here, so that an agent's worker starts without the tool catalog

        tools = [TOOLS[name].openai_function() for name in package.tools if name in TOOLS]
        return cls(
            task_id=package.id,
            version=package.version,
            title=package.title,
            category=package.category,
            language=package.task.language,
            instruction=package.task.instruction[package.task.language],
            instructions=dict(package.task.instruction),
            context=package.task.context,
            now=package.environment.now,
            budget=package.budget,
            seed=seed,
            tool_names=[t["function"]["name"] for t in tools],
            tool_definitions=json.dumps(tools, ensure_ascii=False, separators=(",", ":")),
            answer_schema=answer_schema(package.task.answer) if package.task.answer else None,
        )

    def for_trial(self, seed: int) -> AgentTask:
        """A copy for one trial: its own seed, and its own containers (the strings are immutable and shared)."""
        return self.model_copy(
            update={
                "seed": seed,
                "instructions": dict(self.instructions),
                "tool_names": list(self.tool_names),
                "context": json.loads(json.dumps(self.context, default=str)),
                "budget": self.budget.model_copy(),
                "answer_schema": json.loads(json.dumps(self.answer_schema)),
            }
        )


class ToolClient(Protocol):
    """What an agent gets to act with: tool calls and a meter for what it spends. Nothing of the harness."""

    async def call(self, tool: str, /, **args: Any) -> dict[str, Any]:
        """``{"ok": True, "result": ...}`` or ``{"ok": False, "error": {"code", "message"}}``; raises
        BudgetExceeded once the trial's call budget is used up."""

    def charge(self, usd: float) -> None:
        """Report money spent (e.g. model tokens); past the cost budget the trial ends."""

    def model_turn(self, **turn: Any) -> None:
        """Report a model turn (``text``, ``tool_calls``, ``finish_reason``, tokens, ``cost``, ``latency_ms``,
        ``retries``, ``error``): kept beside the calls as the agent's own account, its cost charged."""


@runtime_checkable
class Agent(Protocol):
    """Anything that acts on a task through a tool client and says what it concluded."""

    name: str
    version: str

    async def run(self, task: AgentTask, session: ToolClient) -> AgentResult: ...
