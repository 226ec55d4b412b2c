# The face's names for editors and type checkers, written from _HOMES by scripts/face_stubs.py: do not edit.
from .attempt import (
    AGENT_ERROR as AGENT_ERROR,
    BUDGET_EXCEEDED as BUDGET_EXCEEDED,
    COMPLETED as COMPLETED,
    TIMEOUT as TIMEOUT,
    AgentOutcome as AgentOutcome,
    InProcess as InProcess,
    Runner as Runner,
    describe as describe,
)
from .client import LocalToolClient as LocalToolClient, RemoteToolClient as RemoteToolClient
from .fhir_rest import FhirTrial as FhirTrial
from .mcp import McpAgent as McpAgent, TrialServer as TrialServer, streams as streams
from .pool import IsolatedAgent as IsolatedAgent
from .sandbox import (
    MCP_PREFIX as MCP_PREFIX,
    MEMORY_MB as MEMORY_MB,
    MODES as MODES,
    PROCESSES as PROCESSES,
    Sandbox as Sandbox,
    bwrap_problem as bwrap_problem,
    choose as choose,
)
from .wire import Frames as Frames, frame as frame
