# The face's names for editors and type checkers, written from _HOMES by scripts/face_stubs.py: do not edit.
from .base import Agent as Agent, AgentTask as AgentTask, ToolClient as ToolClient
from .llm import LLM_PREFIX as LLM_PREFIX, LLMAgent as LLMAgent, model_needs as model_needs, prompt as prompt
from .planner import Features as Features, Planner as Planner
from .reference import REFERENCE_SET as REFERENCE_SET
from .registry import AGENTS as AGENTS, agent_factory as agent_factory
from .replay import ReplayAgent as ReplayAgent
