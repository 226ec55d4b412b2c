"""Agents by name: the reference agents, ``llm:PATH`` for a model named by a config file, or ``module:attribute``
for an agent of one's own."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from ..catalog import CATALOG
from ..spec import AgentError
from . import reference  # noqa: F401  (registers the reference agents)
from .base import Agent

AGENTS = CATALOG.section("agent")
"""Factories of the registered agents (the bundled ones, and any registered in this process); each trial gets a
fresh instance."""


def agent_factory(name: str) -> Callable[[], Agent]:
    """The factory for a bundled agent name, ``llm:PATH`` or an importable ``module:attribute``."""
    factory: Callable[[], Agent]
    if name in AGENTS:
        factory = AGENTS[name]
        return factory
    if name.startswith("llm:"):
        from .llm import llm_factory

        factory = llm_factory(name)
        return factory
    if ":" in name:
        module, _, attr = name.partition(":")
        try:
            factory = getattr(importlib.import_module(module), attr)
            return factory
        except (Exception, SystemExit) as exc:  # whatever the module does at import is the user's mistake
            raise AgentError("--agent", name, f"cannot import: {type(exc).__name__}: {exc}") from None
    raise AgentError(
        "--agent", name, f"unknown agent (known: {', '.join(sorted(AGENTS))}, llm:CONFIG, or module:attribute)"
    )
