"""The top-level API: a sorted ``__all__`` of importable public names, loaded lazily."""

import importlib
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import forge_kernel

ROOT = Path(__file__).resolve().parents[1]
KERNEL = ROOT / "forge_kernel"


def test_all_is_sorted_without_repeats():
    assert forge_kernel.__all__ == sorted(set(forge_kernel.__all__))
    assert dir(forge_kernel) == forge_kernel.__all__


@pytest.mark.parametrize("name", forge_kernel.__all__)
def test_every_name_is_importable_and_public(name):
    value = getattr(forge_kernel, name)
    module = getattr(value, "__module__", None) or type(value).__module__
    assert module.startswith("forge_kernel."), module
    assert not any(part.startswith("_") for part in module.split(".")), module
    assert ".planner" not in module, f"{name} is a planner internal"
    assert not name.startswith("_")


def test_the_read_side_and_the_errors_are_exported():
    assert {"open_run", "Run", "compare", "evaluate", "failure_ledger", "ablation_card", "ForgeError"} <= set(
        forge_kernel.__all__
    )
    assert all(
        issubclass(getattr(forge_kernel, n), forge_kernel.ForgeError)
        for n in forge_kernel.__all__
        if n.endswith("Error") and n != "ForgeError"
    )


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'Planner'"):
        forge_kernel.Planner  # noqa: B018


def test_importing_the_package_loads_nothing_else():
    code = "import sys, forge_kernel; print(sorted(m for m in sys.modules if m.startswith('forge_kernel')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['forge_kernel']"


FACES = [
    "forge_kernel",
    *(
        f"forge_kernel.{p}"
        for p in (
            "agents",
            "agents.planner",
            "analysis",
            "ehr",
            "engine",
            "models",
            "report",
            "spec",
            "store",
            "tools",
            "verify",
            "verify.kinds",
            "verify.tables",
            "widgets",
            "workers",
        )
    ),
]


@pytest.mark.parametrize("face", FACES)
def test_each_face_exports_exactly_its_homes_names_sorted(face):
    module = importlib.import_module(face)
    assert module.__all__ == sorted({name for names in module._HOMES.values() for name in names})
    assert dir(module) == module.__all__


def test_a_face_refuses_a_name_it_does_not_hold():
    with pytest.raises(AttributeError, match="no attribute 'facts'"):
        importlib.import_module("forge_kernel.store").facts  # noqa: B018  (the SQL facts are inside: store._facts)


def test_each_lazy_face_has_the_stub_the_script_writes():
    """Editors and type checkers read a lazy face's names from its ``__init__.pyi``: ``python3 scripts/face_stubs.py``
    writes them from the faces' ``_HOMES``."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import face_stubs

    assert face_stubs.lazy_faces()
    assert face_stubs.problems() == []


def test_the_stubs_and_the_typed_marker_ship_with_the_package():
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]["package-data"]
    shipped = {path for pattern in patterns["forge_kernel"] for path in KERNEL.glob(pattern)}
    assert {KERNEL / "py.typed", *KERNEL.rglob("*.pyi")} <= shipped
