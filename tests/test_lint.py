"""The linter, the formatter and the type checker pass on the code, as configured in pyproject.toml (``[tool.ruff]``,
``[tool.mypy]``): each is run from the installed environment (the ``test`` extra), and a failure shows its report.
The package says it is typed (PEP 561)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=900)


def test_ruff_finds_nothing():
    done = run("ruff", "check", "--no-cache", "--output-format", "concise", ".")
    assert done.returncode == 0, f"ruff check .\n{done.stdout}{done.stderr}"


def test_the_code_is_formatted():
    done = run("ruff", "format", "--no-cache", "--check", ".")
    assert done.returncode == 0, f"ruff format --check . (ruff format . writes it)\n{done.stdout}{done.stderr}"


def test_mypy_finds_nothing():
    done = run("mypy", "--cache-dir", str(ROOT / ".mypy_cache"))  # what to check and how: pyproject.toml
    assert done.returncode == 0, f"mypy\n{done.stdout}{done.stderr}"


def test_the_package_is_marked_typed():
    assert (ROOT / "forge_kernel" / "py.typed").is_file()
    assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"]["forge_kernel"]
