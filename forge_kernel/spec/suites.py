"""Suite defaults: ``task_packages/<suite>/suite.yaml`` (public) and ``verifiers/<suite>/suite.yaml`` (hidden).

A package's own fields are merged over its suite's defaults: mappings key by key, anything else (a list, a value)
replaced whole; the hidden defaults' ``verifiers`` come before the package's own, and a package verifier with the
same id takes the suite's place. A loaded package is the merged content, and its hashes cover it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, create_model

from .hidden import VerifierUse
from .package import SUITE_NAME, Environment, Strict, TaskPackage

SUITE_FILE = f"{SUITE_NAME}.yaml"


def partial(model: type[BaseModel], name: str, doc: str, drop: tuple[str, ...] = (), **types: Any) -> type[BaseModel]:
    """A model with ``model``'s fields but ``drop``, every one optional (``types`` overrides some fields' type)."""
    fields: dict[str, Any] = {}
    for key, info in model.model_fields.items():
        if key not in drop:
            annotation: Any = types.get(key, info.annotation)
            fields[key] = (annotation | None, Field(None, description=info.description))
    return create_model(name, __base__=Strict, __doc__=doc, **fields)


EnvironmentDefaults = partial(
    Environment, "EnvironmentDefaults", "The EHR settings a suite's packages share.", drop=("fixtures", "patient_id")
)
SuiteDefaults = partial(
    TaskPackage,
    "SuiteDefaults",
    "Public defaults of a suite (``task_packages/<suite>/suite.yaml``): "
    "what its packages share (tool manifest, policy, budget, faults, clock and EHR, slices).",
    drop=("id", "version", "title", "suite", "task", "covers"),
    environment=EnvironmentDefaults,
)


class HiddenDefaults(Strict):
    """Hidden defaults of a suite (``verifiers/<suite>/suite.yaml``): the base verifiers of every package."""

    verifiers: list[VerifierUse] = Field(
        default_factory=list,
        description=(
            "Verifiers every package of the suite carries, before its own; a package verifier with the same id replaces "
            "one of these."
        ),
    )


def merged(defaults: dict, own: dict) -> dict:
    """``own`` over ``defaults``: mappings merged key by key, anything else replaced whole."""
    out = dict(defaults)
    for key, value in own.items():
        out[key] = merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def with_hidden_defaults(defaults: dict, own: dict) -> dict:
    """A hidden half's content over its suite's hidden defaults: the base verifiers first, each replaced by the
    package's own verifier of the same id where it has one."""
    base, mine = defaults.get("verifiers", []), own.get("verifiers", [])
    if not isinstance(mine, list):  # the hidden half's own model names the problem
        return own
    by_id = {v["id"]: v for v in mine if isinstance(v, dict) and "id" in v}
    base_ids = {b["id"] for b in base}
    rest = [v for v in mine if not (isinstance(v, dict) and v.get("id") in base_ids)]
    return {**own, "verifiers": [by_id.get(b["id"], b) for b in base] + rest}
