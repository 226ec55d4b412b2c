"""Dependencies point one way (design/architecture.md): every import inside forge_kernel goes to a lower layer.

The layers are read from the source with ``ast``, so a new upward import fails here before it reaches main. An
import made inside a function (run only when called) counts as any other: none goes up.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

KERNEL = Path(__file__).resolve().parents[1] / "forge_kernel"

LAYERS = {
    "_lazy": 0,
    "spec": 1,
    "ehr": 1,
    "catalog": 2,
    "models": 2,
    "tools": 3,
    "agents": 4,
    "verify": 4,
    "workers": 5,
    "store": 5,
    "analysis": 6,
    "engine": 7,
    "built_in": 7,
    "authoring": 8,
    "widgets": 9,
    "report": 10,
    "cli": 11,
    "__init__": 12,
}
"""Each room of forge_kernel and its floor: a room may import from a lower floor (or its own room) only."""

FACED = (
    "agents",
    "agents/planner",
    "analysis",
    "cli",
    "ehr",
    "engine",
    "models",
    "report",
    "spec",
    "store",
    "tools",
    "verify",
    "verify/kinds",
    "verify/tables",
    "widgets",
    "workers",
)
"""Packages whose inside modules are private (``_name.py``): a module without the underscore is a home of names
in its face's ``_HOMES``, is imported by another package or a notebook, or runs as a program (``python -m``)."""
NOTEBOOKS = KERNEL.parent / "notebooks"


def room(parts: tuple[str, ...]) -> str:
    return parts[0].removesuffix(".py")


def sources() -> dict[str, str]:
    """Every module of forge_kernel: its path inside the package -> its text."""
    return {p.relative_to(KERNEL).as_posix(): p.read_text(encoding="utf-8") for p in sorted(KERNEL.rglob("*.py"))}


def imports(here: str, text: str):
    """(room imported, line) for every relative import of one module, at its top or inside a function."""
    parts = tuple(here.split("/"))
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and node.level:
            package = list(parts[:-1])[: len(parts) - node.level]
            target = package + (node.module.split(".") if node.module else [node.names[0].name])
            yield room(tuple(target)), node.lineno


def imported_modules(here: str, text: str):
    """Every module of forge_kernel (dotted, inside the package) that one module imports or names in a string."""
    parts = tuple(here.removesuffix(".py").split("/"))
    package = list(parts[:-1])
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and node.level:
            target = package[: len(package) - node.level + 1] + (node.module.split(".") if node.module else [])
            yield ".".join(target)
            yield from (".".join([*target, alias.name]) for alias in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield from (
                name.removeprefix("forge_kernel.") for name in re.findall(r"forge_kernel(?:\.\w+)+", node.value)
            )


def assigned(text: str, name: str):
    """The value a module assigns to ``name`` at its top (annotated or not), or None."""
    for node in ast.parse(text).body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        if any(getattr(t, "id", None) == name for t in targets) and node.value is not None:
            return ast.literal_eval(node.value)
    return None


def face_homes(text: str) -> set[str]:
    """The modules a face's ``_HOMES`` names."""
    return set(assigned(text, "_HOMES") or ())


def notebook_imports() -> set[str]:
    """The modules of forge_kernel the notebooks import (``from forge_kernel.report import sections`` gives both)."""
    found = set()
    for notebook in NOTEBOOKS.glob("*.ipynb"):
        for module, names in re.findall(r"from forge_kernel\.([\w.]+) import ([\w, ]+)", notebook.read_text("utf-8")):
            found |= {module, *(f"{module}.{name.strip()}" for name in names.split(","))}
    return found


def unhomed_public_modules(modules: dict[str, str]) -> list[str]:
    """Public modules of the faced packages that are neither homes, nor imported from another package or a notebook,
    nor run as a program (a ``__main__`` block, its dotted name in a string of the kernel)."""
    used = {(name, here.rsplit("/", 1)[0]) for here, text in modules.items() for name in imported_modules(here, text)}
    used |= {(name, "notebooks") for name in notebook_imports()}
    named = {name for here, text in modules.items() for name in imported_modules(here, text)}
    found = []
    for package in FACED:
        homes = face_homes(modules[f"{package}/__init__.py"])
        for here in modules:
            folder, _, file = here.rpartition("/")
            name = file.removesuffix(".py")
            if folder != package or name.startswith("_") or name in homes:
                continue
            dotted = f"{package}/{name}".replace("/", ".")
            program = 'if __name__ == "__main__":' in modules[here] and dotted in named
            if not program and not any(module == dotted and user != package for module, user in used):
                found.append(here)
    return found


def face_names(text: str) -> set[str]:
    """The names a face hands out (its ``__all__``)."""
    return set(assigned(text, "__all__") or ())


def skipped_faces(modules: dict[str, str]) -> list[str]:
    """Imports that reach into another package's module instead of taking the name from its face: ``from
    ..store.run import Run`` in ``analysis/`` where ``from ..store import Run`` is meant, or ``from ..ehr import
    fhir`` (a module through the face). A module imports from the modules of its own package and of the packages
    that hold it (``verify/kinds/`` from ``verify/``, anything from ``forge_kernel/`` itself); from every other package,
    a subpackage too, only the names its face (``__init__.py``) hands out."""
    folders = {here.rpartition("/")[0] for here in modules if here.endswith("__init__.py")}
    found = []
    for here, text in modules.items():
        package = here.split("/")[:-1]
        holders = {"/".join(package[:i]) for i in range(len(package) + 1)}
        for node in ast.walk(ast.parse(text)):
            if not (isinstance(node, ast.ImportFrom) and node.level):
                continue
            module = package[: len(package) - node.level + 1] + (node.module.split(".") if node.module else [])
            target, names = "/".join(module), [alias.name for alias in node.names]
            dotted = target.replace("/", ".")
            if target in folders:  # from a face: only its names, not its modules
                face = face_names(modules[f"{target}/__init__.py".lstrip("/")])
                names = [n for n in names if n not in face and f"{target}/{n}" in folders | {m[:-3] for m in modules}]
                if names and target not in holders:
                    found.append(
                        f"{here}:{node.lineno} imports the module {', '.join(names)} of {dotted}, not names "
                        "from its face"
                    )
            elif names and target.rpartition("/")[0] not in holders:
                found.append(
                    f"{here}:{node.lineno} imports {', '.join(names)} from {dotted}, not from the face of "
                    f"{dotted.rpartition('.')[0]}"
                )
    return found


def upward_imports(modules: dict[str, str]) -> list[str]:
    found = []
    for here, text in modules.items():
        source = room(tuple(here.split("/")))
        for target, line in imports(here, text):
            if target == source or LAYERS[target] < LAYERS[source]:
                continue
            found.append(f"{here}:{line} imports {target} (floor {LAYERS[target]} >= {LAYERS[source]})")
    return found


def test_every_room_has_a_floor():
    rooms = {room(tuple(here.split("/"))) for here in sources()}
    assert rooms <= set(LAYERS), rooms - set(LAYERS)


def test_no_import_runs_upward():
    assert upward_imports(sources()) == []


def test_an_upward_import_is_caught():
    probe = {
        "ehr/probe.py": "from ..analysis import compare\n",
        "ehr/lazy.py": "def f():\n    from ..store import Run\n",
    }
    assert upward_imports(probe) == [
        "ehr/probe.py:1 imports analysis (floor 6 >= 1)",
        "ehr/lazy.py:2 imports store (floor 5 >= 1)",
    ]


def test_every_import_from_another_package_goes_through_its_face():
    assert skipped_faces(sources()) == []


def test_an_import_that_skips_a_face_is_caught():
    probes = {
        "analysis/probe.py": "from ..store.run import Run\nfrom . import gate\n",
        "tools/probe.py": "def f():\n    from ..ehr import fhir, EHRImage\n",
        "verify/kinds/probe.py": "from ..registry import verifier\nfrom ...verify.tables.drugs import drugs_in\n",
    }
    assert [line for line in skipped_faces({**sources(), **probes}) if "/probe.py:" in line] == [
        "analysis/probe.py:1 imports Run from store.run, not from the face of store",
        "tools/probe.py:2 imports the module fhir of ehr, not names from its face",
        "verify/kinds/probe.py:2 imports drugs_in from verify.tables.drugs, not from the face of verify.tables",
    ]


def test_a_public_module_is_a_home_or_used_from_outside():
    assert unhomed_public_modules(sources()) == []


def test_a_new_inside_module_must_be_private():
    probe = {
        **sources(),
        "store/inside.py": "X = 1\n",
        "store/run.py": sources()["store/run.py"] + "from .inside import X\n",
    }
    assert unhomed_public_modules(probe) == ["store/inside.py"]
    probe["store/_inside.py"] = probe.pop("store/inside.py")
    assert unhomed_public_modules(probe) == []


def test_a_subpackage_inside_module_must_be_private_too():
    answer = sources()["verify/kinds/answer.py"]
    probe = {
        **sources(),
        "verify/kinds/inside.py": "X = 1\n",
        "verify/kinds/answer.py": answer + "from .inside import X\n",
    }
    assert unhomed_public_modules(probe) == ["verify/kinds/inside.py"]
