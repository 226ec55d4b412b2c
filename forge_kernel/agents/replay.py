"""The replay agent: re-issues the calls of a recorded trajectory and returns its recorded result."""

from __future__ import annotations

from ..spec import AgentResult, TrajectoryFile
from .base import AgentTask, ToolClient


class ReplayAgent:
    """Plays back a TrajectoryFile against a fresh session, call for call."""

    name = "replay"
    version = "1"

    def __init__(self, trajectory: TrajectoryFile):
        self.trajectory = trajectory

    async def run(self, task: AgentTask, session: ToolClient) -> AgentResult:
        for call in self.trajectory.calls:
            await session.call(call.tool, **call.args)
        return self.trajectory.result()
