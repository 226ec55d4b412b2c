"""Control tools: the agent's explicit end of a task."""

from __future__ import annotations

from pydantic import Field

from .base import Args, ToolContext, tool


class FinishArgs(Args):
    summary: str = Field("", description="A short summary of what was done.")


@tool("finish", kind="compute")
def finish(ctx: ToolContext, args: FinishArgs) -> dict:
    """Declare the task done; call it once, last."""
    return {"finished": True}
