"""Write the bundled suites from the scenario modules in scripts/suites/ (each defines SCENARIOS, functions returning
an authoring Draft).

    .venv/bin/python scripts/build_suites.py                    # every module
    .venv/bin/python scripts/build_suites.py superclue_devices  # some modules
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from forge_kernel.authoring import Suite  # noqa: E402
from suites.common import HIDDEN_DEFAULTS, NOTE, ROOT, SUITE_DEFAULTS  # noqa: E402


def scenario_modules() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules([str(HERE / "suites")]) if m.name != "common")


def build(names: list[str], root: Path = ROOT) -> dict[str, int]:
    """Write the suite files, then every package of the named modules (all by default), under ``root``; returns how
    many packages each module wrote."""

    def where(suite: str) -> Suite:
        return Suite(root / "task_packages", root / "verifiers", suite)

    for suite, defaults in SUITE_DEFAULTS.items():
        where(suite).save(defaults, HIDDEN_DEFAULTS, NOTE)
    written = {}
    for name in names or scenario_modules():
        drafts = [make() for make in importlib.import_module(f"suites.{name}").SCENARIOS]
        for draft in drafts:
            dataclasses.replace(draft, suite=where(draft.suite.name)).save()
        written[name] = len(drafts)
    return written


if __name__ == "__main__":
    for module, count in build(sys.argv[1:]).items():
        print(f"{module}: wrote {count} package(s)")
