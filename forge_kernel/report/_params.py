"""A release's parameters: ``parameterized_runs/<release>.yaml``, checked before anything runs.

Paths in the file are relative to the file's folder. ``baseline`` is an agent to run, or ``last-approved``
(the default): the candidate of the newest release in the same folder whose sign-off verifies.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..spec import SpecError, parse_model, read_yaml

LAST_APPROVED = "last-approved"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class ReleaseParameters(BaseModel):
    """What one release compares, on which suites and trials, under which gate, and who must approve it."""

    model_config = ConfigDict(extra="forbid", strict=True)
    """Strict: ``trials: true`` is not 1, nor ``release: 2024`` a name."""

    release: str
    """The release's name; its outputs go to ``<folder of the file>/<release>/``."""
    candidate: str
    """The agent to release (a bundled name or ``module:attribute``)."""
    baseline: str = LAST_APPROVED
    """An agent to run as the baseline, or ``last-approved``."""
    ablations: list[str] = Field(default_factory=list)
    """Variants of the candidate with one component removed, one ablation card each."""
    suites: list[str] = Field(min_length=1)
    trials: int = Field(ge=1, le=100)
    seed: int = 0
    gate: str | None = None
    """The gate policy (YAML); the bundled default when omitted. Declared before the candidate's run."""
    roles: list[str] = Field(default_factory=lambda: ["clinician", "engineer"])
    """Roles whose approval the release needs (``forge verify``)."""
    several_roles_per_reviewer: bool = False
    """Whether one reviewer may approve in more than one of ``roles``; by default each role needs another person (a
    name, and every key it signed with, is one reviewer)."""
    triage: str | None = None
    """Reviewers' triage decisions (YAML) applied to the failure ledger."""
    executor: Literal["local", "dask"] = "local"
    """Where the sides' trials run, as ``forge run --executor``: here, or on a Dask cluster (the same stores)."""
    scheduler: str | None = None
    """With ``executor: dask``: the cluster's scheduler address (``tcp://HOST:PORT``); none, a LocalCluster."""
    trusted_keys: str = "trusted"
    """Reviewers' public keys (a file or a folder of ``.pub``) that decide which earlier release is approved."""


def load_parameters(path: Path) -> tuple[ReleaseParameters, Path]:
    """The parameters in ``path`` and the folder its paths are relative to; every mistake is one SpecError."""
    path = Path(path)
    params = parse_model(ReleaseParameters, read_yaml(path), path)
    if not NAME.match(params.release):
        raise SpecError(path, "release", "letters, digits, '.', '_' or '-' only (it names a folder)")
    base = path.parent
    if (base / params.release).exists() and not (base / params.release).is_dir():
        raise SpecError(
            path,
            "release",
            f"{params.release}: a file of that name is beside the parameters; the "
            "release's outputs need a folder of that name",
        )
    for i, suite in enumerate(params.suites):
        if not (base / suite).is_dir():
            raise SpecError(path, f"suites.{i}", f"{suite}: no such folder (relative to {base})")
    if params.scheduler is not None and params.executor != "dask":
        raise SpecError(path, "scheduler", "only with executor: dask")
    for field in ("gate", "triage"):
        value = getattr(params, field)
        if value is not None and not (base / value).is_file():
            raise SpecError(path, field, f"{value}: no such file (relative to {base})")
    params = params.model_copy(
        update={
            "candidate": located(base, params.candidate),
            "ablations": [located(base, a) for a in params.ablations],
            "baseline": params.baseline if params.baseline == LAST_APPROVED else located(base, params.baseline),
        }
    )
    agents = [("candidate", params.candidate), *((f"ablations.{i}", a) for i, a in enumerate(params.ablations))]
    if params.baseline != LAST_APPROVED:
        agents.append(("baseline", params.baseline))
    for field, name in agents:
        check_agent(path, field, name)
    if len(set(params.ablations)) != len(params.ablations) or params.candidate in params.ablations:
        raise SpecError(path, "ablations", "each ablation once, and not the candidate itself")
    return params, base


def located(base: Path, agent: str) -> str:
    """An ``--agent`` value with an ``llm:`` config's path made absolute from the parameters' folder."""
    from ..agents import LLM_PREFIX

    if not agent.startswith(LLM_PREFIX):
        return agent
    return LLM_PREFIX + str((base / agent.removeprefix(LLM_PREFIX)).resolve())


def check_agent(path: Path, field: str, name: str) -> None:
    """A bundled agent name, an ``llm:`` config (read: a bad one is named) or a ``module:attribute`` entry, as
    ``forge run --agent`` takes."""
    from ..agents import AGENTS, LLM_PREFIX, model_needs

    if name.startswith(LLM_PREFIX):
        model_needs(name)
    elif name not in AGENTS and ":" not in name:
        raise SpecError(
            path, field, f"unknown agent {name!r} (known: {', '.join(sorted(AGENTS))}, llm:CONFIG, or module:attribute)"
        )
