"""Write the bundled suites from the scenario modules in scripts/suites/ (each defines SCENARIOS).

    .venv/bin/python scripts/build_suites.py                    # every module
    .venv/bin/python scripts/build_suites.py superclue_devices  # some modules
"""
from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def scenario_modules() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules([str(HERE / "suites")]) if m.name != "common")


def main(names: list[str]) -> None:
    for name in names or scenario_modules():
        module = importlib.import_module(f"suites.{name}")
        for make in module.SCENARIOS:
            make().write()
        print(f"{name}: wrote {len(module.SCENARIOS)} package(s)")


if __name__ == "__main__":
    main(sys.argv[1:])
