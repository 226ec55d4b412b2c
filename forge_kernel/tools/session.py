"""A tool session: one trial's gateway from an agent to the tools, recording every call as an event."""

from __future__ import annotations

import json
from time import perf_counter
from typing import Any, NoReturn

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..ehr import EHRView
from ..spec import BudgetExceeded as BudgetExceeded, Event, ModelTurn, TaskPackage, compact_json
from ._faults import FaultPlan
from ._paging import fitted, take_cursor
from ._policy import decide
from .base import TOOLS, Tool, ToolContext, ToolError

TEXT = 64 * 1024
"""The longest text of a reported model turn that the record keeps."""


class ReportedTurn(BaseModel):
    """What an agent may report of a model turn: checked, sizes capped; the harness numbers and places it."""

    model_config = ConfigDict(extra="forbid", strict=True)

    text: str = Field("", max_length=TEXT)
    tool_calls: list[dict[str, str]] = Field(default_factory=list, max_length=128)
    finish_reason: str = Field("", max_length=64)
    refusal: str | None = Field(None, max_length=TEXT)
    prompt_tokens: int = Field(0, ge=0)
    completion_tokens: int = Field(0, ge=0)
    cached_tokens: int = Field(0, ge=0)
    cost: float = Field(0.0, ge=0, allow_inf_nan=False)
    latency_ms: float = Field(0.0, ge=0, allow_inf_nan=False)
    retries: list[str] = Field(default_factory=list, max_length=32)
    error: str | None = Field(None, max_length=2000)


class ToolSession:
    """Runs calls for one trial: manifest, argument validation, policy, faults, idempotency, then the tool."""

    def __init__(self, package: TaskPackage, view: EHRView, earlier: ToolSession | None = None):
        self.package = package
        self.view = view
        self.events: list[Event] = []
        self.turns: list[ModelTurn] = []
        """The model turns the agent reported (its own account: never read by a verifier)."""
        self.cost: float = earlier.cost if earlier else 0.0
        self.calls_before: int = earlier.calls_before + len(earlier.events) if earlier else 0
        """Calls of the trial's ``earlier`` attempts, run again (a stall spoiled them): they count against the
        call budget, as their cost against the cost budget."""
        self.exceeded: str | None = None
        """Which budget ran out, once one has (kept even if the agent swallows BudgetExceeded)."""
        self.opened = perf_counter()
        """When the trial's session began: calls are timed from here."""
        self._faults = FaultPlan(package.faults)
        self._done_keys: dict[tuple[str, str], Any] = {}
        self._ctx = ToolContext(view, package.environment.patient_id)

    def tools(self) -> list[Tool]:
        """The tools of this task's manifest."""
        return [TOOLS[name] for name in self.package.tools if name in TOOLS]

    def charge(self, usd: float) -> None:
        """Add what the agent spent (e.g. model tokens); past the budget the trial ends."""
        self.cost += usd
        if self.cost > self.package.budget.max_cost:
            self.exceed(f"cost {self.cost:.4f} > {self.package.budget.max_cost}")

    def model_turn(self, reported: dict[str, Any]) -> None:
        """Keep a model turn the agent reported, after the calls recorded so far, and charge its cost; ValueError
        when it is not a turn (``ReportedTurn``)."""
        try:
            turn = ReportedTurn.model_validate(reported)
        except ValidationError as exc:
            err = exc.errors()[0]
            raise ValueError(f"a model turn's {'.'.join(map(str, err['loc'])) or 'fields'}: {err['msg']}") from None
        self.turns.append(ModelTurn(turn=len(self.turns) + 1, after_step=len(self.events), **turn.model_dump()))
        self.charge(turn.cost)

    def exceed(self, why: str) -> NoReturn:
        """Record that a budget ran out, and end the trial."""
        self.exceeded = why
        raise BudgetExceeded(why)

    async def call(self, tool: str, /, **args: Any) -> dict[str, Any]:
        """Run one call; returns ``{"ok": True, "result": ...}`` or ``{"ok": False, "error": {code, message}}``,
        a copy of what the record holds."""
        reply: dict[str, Any] = json.loads(self.reply(tool, args))
        return reply

    def reply(self, tool: str, args: dict[str, Any], refused: str | None = None) -> str:
        """Run one call and record it; the reply as JSON text, which is what reaches an agent (in process or
        not). ``refused``: why the arguments cannot be taken (an ``invalid_args`` error; the tool is not run).
        Past the call budget, BudgetExceeded."""
        if self.calls_before + len(self.events) >= self.package.budget.max_calls:
            earlier = f" ({self.calls_before} of them in an attempt run again)" if self.calls_before else ""
            self.exceed(f"calls > {self.package.budget.max_calls}{earlier}")
        started = perf_counter()
        step = len(self.events) + 1
        self.view.step = step
        first_change = len(self.view.changes)
        facts: dict[str, Any] = {"flags": []}
        """What policy and faults said of the call, filled in by ``_run``."""
        result, error = None, None
        try:
            result = self._run(tool, args, facts, refused)
        except ToolError as exc:
            error = {"code": exc.code, "message": exc.message}
        except Exception as exc:  # a tool's own bug: recorded against the tool, never crashing the trial
            error = {"code": "tool_crash", "message": type(exc).__name__}
        text: str = compact_json({"ok": True, "result": result} if error is None else {"ok": False, "error": error})
        spec = TOOLS.get(tool)
        self.events.append(
            Event(
                step=step,
                tool=tool,
                args=args,
                kind=spec.kind if spec else "unknown",
                ok=error is None,
                result=result,
                error=error,
                denied=facts.get("denied"),
                flags=facts["flags"],
                fault=facts.get("fault"),
                changes=[op for _, op in self.view.changes[first_change:]],
                latency_ms=(perf_counter() - started) * 1000,
                started_ms=(started - self.opened) * 1000,
            )
        )
        return text

    def _run(self, tool: str, raw_args: dict[str, Any], facts: dict[str, Any], refused: str | None) -> Any:
        spec = TOOLS.get(tool)
        if spec is None or tool not in self.package.tools:
            raise ToolError("unknown_tool", f"no tool {tool!r} in this task")
        if refused is not None:
            raise ToolError("invalid_args", refused)
        raw_args, cursor = take_cursor(spec, raw_args)
        try:
            args = spec.args_model.model_validate(raw_args)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"]) or "args"
            raise ToolError("invalid_args", f"{where}: {err['msg']}") from None
        decision = decide(self.package.policy, self._ctx.patient_id, self.view, spec, args, self.events)
        facts["flags"] = decision.flags
        if decision.denied:
            facts["denied"] = decision.denied
            raise ToolError("denied", decision.message)
        key = vars(args).get("idempotency_key")
        if key is not None and (tool, key) in self._done_keys:
            facts["flags"].append("idempotent_replay")
            return fitted(spec, self._done_keys[(tool, key)], cursor)
        fault = self._faults.next(tool)
        if fault:
            facts["fault"] = fault.kind
            raise ToolError(fault.kind, fault.message)
        result = spec.run(self._ctx, args)
        if key is not None:
            self._done_keys[(tool, key)] = result
        return fitted(spec, result, cursor)
