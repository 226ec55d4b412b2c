"""Dependencies point one way (design/architecture.md): every import inside forge_kernel goes to a lower layer.

The layers are read from the source with ``ast``, so a new upward import fails here before it reaches main. An
import made inside a function (run only when called) may go up only where ``LAZY_UP`` names it, with its reason.
"""
from __future__ import annotations

import ast
from pathlib import Path

KERNEL = Path(__file__).resolve().parents[1] / "forge_kernel"

LAYERS = {
    "_lazy": 0,
    "spec": 1, "ehr": 1,
    "catalog": 2,
    "tools": 3,
    "agents": 4, "verify": 4,
    "workers": 5, "store": 5,
    "engine": 6,
    "analysis": 7, "authoring": 7,
    "widgets": 8,
    "report": 9,
    "release_cli": 10,
    "cli": 11,
    "__init__": 12,
}
"""Each room of forge_kernel and its floor: a room may import from a lower floor (or its own room) only."""

LAZY_UP = {
    ("spec/gate_policy.py", "catalog"): "a policy names gate checks, which register above; read when checked",
    ("store/run.py", "widgets"): "Trial.player() and Run.failures(): the widgets opened from a Run handle",
}
"""Upward imports made inside a function, each with why it is there."""


def room(parts: tuple[str, ...]) -> str:
    return parts[0].removesuffix(".py")


def sources() -> dict[str, str]:
    """Every module of forge_kernel: its path inside the package -> its text."""
    return {p.relative_to(KERNEL).as_posix(): p.read_text(encoding="utf-8") for p in sorted(KERNEL.rglob("*.py"))}


def imports(here: str, text: str):
    """(room imported, line, inside a function?) for every relative import of one module."""
    parts = tuple(here.split("/"))
    tree = ast.parse(text)
    nested = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
              for n in ast.walk(f)}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            package = list(parts[:-1])[: len(parts) - node.level]
            target = package + (node.module.split(".") if node.module else [node.names[0].name])
            yield room(tuple(target)), node.lineno, id(node) in nested


def upward_imports(modules: dict[str, str]) -> list[str]:
    found = []
    for here, text in modules.items():
        source = room(tuple(here.split("/")))
        for target, line, lazy in imports(here, text):
            if target == source or LAYERS[target] < LAYERS[source]:
                continue
            if lazy and (here, target) in LAZY_UP:
                continue
            found.append(f"{here}:{line} imports {target} (floor {LAYERS[target]} >= {LAYERS[source]})")
    return found


def test_every_room_has_a_floor():
    rooms = {room(tuple(here.split("/"))) for here in sources()}
    assert rooms <= set(LAYERS), rooms - set(LAYERS)


def test_no_import_runs_upward():
    assert upward_imports(sources()) == []


def test_each_declared_exception_is_still_there():
    seen = {(here, target) for here, text in sources().items() for target, _, lazy in imports(here, text) if lazy}
    assert set(LAZY_UP) <= seen, set(LAZY_UP) - seen


def test_an_upward_import_is_caught():
    probe = {"ehr/probe.py": "from ..analysis import compare\n", "ehr/lazy.py": "def f():\n    from ..store import Run\n"}
    assert upward_imports(probe) == ["ehr/probe.py:1 imports analysis (floor 7 >= 1)",
                                     "ehr/lazy.py:2 imports store (floor 5 >= 1)"]


def test_a_lazy_upward_import_needs_its_reason(monkeypatch):
    monkeypatch.delitem(LAZY_UP, ("store/run.py", "widgets"))
    assert any(line.startswith("store/run.py") for line in upward_imports(sources()))
