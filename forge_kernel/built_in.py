"""The catalog with everything the kernel registers itself: the tools, the verifier kinds, the reference agents and
the gate checks. Each registers when its package is imported (its face imports the modules that register); the
imports below are the whole list, so ``load()`` gives the full catalog wherever it is needed (``forge catalog``, the
JSON Schemas, the designer), and the four sections come with their built-in entries."""

from __future__ import annotations

from .agents import AGENTS
from .analysis import GATE_CHECKS
from .catalog import CATALOG, Catalog
from .tools import TOOLS
from .verify import VERIFIERS

__all__ = ["AGENTS", "GATE_CHECKS", "TOOLS", "VERIFIERS", "load"]


def load() -> Catalog:
    """The catalog with every built-in entry registered (and whatever else this process registered)."""
    return CATALOG
