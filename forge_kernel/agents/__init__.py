"""Agents: the protocol, AgentTask / AgentResult, reference agents and the replay agent."""
from ..spec import AgentResult
from .base import Agent, AgentTask, ToolClient
from .planner import Features, Planner
from .registry import AGENTS, agent_factory
from .replay import ReplayAgent

__all__ = ["AGENTS", "Agent", "AgentResult", "AgentTask", "Features", "Planner", "ReplayAgent", "ToolClient", "agent_factory"]
