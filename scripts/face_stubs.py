"""The package faces as editors and type checkers see them: an ``__init__.pyi`` beside each lazy face of forge_kernel,
its ``_HOMES`` written out as explicit re-exports (``from .run import open_run as open_run``).

    python3 scripts/face_stubs.py           # writes the stubs
    python3 scripts/face_stubs.py --check   # exit 1, naming each stub that is missing, stale or left over

The faces stay lazy: a name is imported from its home when first asked for, which keeps ``forge replay``, ``forge
--help`` and an agent worker's start small (design/architecture.md, "Faces", has the measurement). A stub says the
same as its face, read from the face itself, so it cannot say more; tests/test_public_surface.py fails when a
committed stub is not what this script writes.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

KERNEL = Path(__file__).resolve().parents[1] / "forge_kernel"
LAZY = "__getattr__, __dir__ = _lazy(__name__, _HOMES, __all__)"
HEADER = (
    "# The face's names for editors and type checkers, written from _HOMES by scripts/face_stubs.py: do not edit.\n"
)
WIDTH = 120


def lazy_faces() -> list[Path]:
    """Every face of forge_kernel that hands out its names on first use."""
    return sorted(p for p in KERNEL.rglob("__init__.py") if LAZY in p.read_text(encoding="utf-8"))


def member_key(name: str) -> tuple[int, str]:
    """Constants, then classes, then the rest, as the import sorter orders the names of one import."""
    return (0 if name.isupper() and len(name) > 1 else 1 if name[0].isupper() else 2), name


def import_line(module: str, names: list[str]) -> str:
    """``from module import a as a, b as b`` on one line when it fits, else one name a line."""
    members = [f"{name} as {name}" if module.startswith(".") else name for name in sorted(names, key=member_key)]
    line = f"from {module} import {', '.join(members)}\n"
    if len(line) <= WIDTH + 1:
        return line
    return f"from {module} import (\n" + "".join(f"    {m},\n" for m in members) + ")\n"


def signatures(tree: ast.Module) -> tuple[list[str], list[str]]:
    """The face's own functions with ``...`` for a body, and the imports their signatures need."""
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    used = {
        n.id
        for f in functions
        for part in (f.args, f.returns)
        if part is not None
        for n in ast.walk(part)
        if isinstance(n, ast.Name)
    }
    imports = [
        import_line(node.module, [a.name for a in node.names if a.name in used])
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and not node.level and {a.name for a in node.names} & used
    ]
    for f in functions:
        f.body = [ast.Expr(ast.Constant(...))]
    return sorted(imports), [ast.unparse(f) + "\n" for f in functions]


def stub(face: str) -> str:
    """The stub of a lazy face, from its source."""
    tree = ast.parse(face)
    homes: dict[str, tuple[str, ...]] = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        and ast.unparse(node.targets[0] if isinstance(node, ast.Assign) else node.target) == "_HOMES"
    )
    imports, functions = signatures(tree)
    parts = [
        HEADER,
        *imports,
        "\n" if imports else "",
        *(import_line(f".{module}", list(names)) for module, names in sorted(homes.items())),
    ]
    if functions:
        parts += ["\n", "\n".join(functions)]
    return "".join(parts)


def stubs() -> dict[Path, str]:
    """Where each stub goes, and its text."""
    return {face.with_suffix(".pyi"): stub(face.read_text(encoding="utf-8")) for face in lazy_faces()}


def problems() -> list[str]:
    """Each stub that is missing, differs from what its face gives, or stands beside no lazy face."""
    wanted = stubs()
    found = [
        f"{path.relative_to(KERNEL.parent)}: {'stale' if path.exists() else 'missing'}"
        for path, text in wanted.items()
        if not path.exists() or path.read_text(encoding="utf-8") != text
    ]
    found += [
        f"{path.relative_to(KERNEL.parent)}: beside no lazy face"
        for path in sorted(KERNEL.rglob("*.pyi"))
        if path not in wanted
    ]
    return found


def main() -> None:
    if sys.argv[1:] == ["--check"]:
        found = problems()
        print("\n".join(found) or "the stubs are what the faces say")
        sys.exit(1 if found else 0)
    for path, text in stubs().items():
        path.write_text(text, encoding="utf-8")
        print(path.relative_to(KERNEL.parent))


if __name__ == "__main__":
    main()
