"""Agents: the protocol, AgentTask, the reference agents (registered in the catalog on import), the ``llm`` agent
and the replay agent. The names below are imported on first use."""

from .. import _lazy
from . import registry  # noqa: F401  (registers the reference agents)

_HOMES = {
    "base": ("Agent", "AgentTask", "ToolClient"),
    "llm": ("LLMAgent", "LLM_PREFIX", "model_needs", "prompt"),
    "planner": ("Features", "Planner"),
    "reference": ("REFERENCE_SET",),
    "registry": ("AGENTS", "agent_factory"),
    "replay": ("ReplayAgent",),
}

__all__ = [
    "AGENTS",
    "Agent",
    "AgentTask",
    "Features",
    "LLMAgent",
    "LLM_PREFIX",
    "Planner",
    "REFERENCE_SET",
    "ReplayAgent",
    "ToolClient",
    "agent_factory",
    "model_needs",
    "prompt",
]
__getattr__, __dir__ = _lazy(__name__, _HOMES, __all__)
