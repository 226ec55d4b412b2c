"""Set-up and the two everyday jobs, on a machine with nothing but Python 3.11+.

    python3 scripts/dev.py demo   # builds .venv if needed, then the demo release (parameterized_runs/demo.yaml):
                                  # candidate-v2 against baseline-v1 with both ablations on the bundled suites, its
                                  # report notebook and offline HTML page, and the release gate
    python3 scripts/dev.py test   # builds .venv if needed, then runs the test suite
    python3 scripts/dev.py lab    # the workbench: JupyterLab on 127.0.0.1 with a token (its URL printed)

The environment is rebuilt only when pyproject.toml changes. uv is used where present, else bootstrapped into it.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / "python"
STAMP = VENV / ".forge-installed"


def sh(*cmd: str | Path) -> None:
    print("+", " ".join(map(str, cmd)), flush=True)
    subprocess.run([str(c) for c in cmd], cwd=ROOT, check=True)


def ensure_env() -> None:
    """Create .venv and install the project with its test extras, unless already up to date."""
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if STAMP.exists() and STAMP.read_text() == wanted:
        return
    uv = shutil.which("uv")
    if uv:
        sh(uv, "venv", "--quiet", "--allow-existing", "--python", sys.executable, VENV)
    else:
        venv.create(VENV, with_pip=True)
        sh(PYTHON, "-m", "pip", "install", "--quiet", "uv")
        uv = str(BIN / "uv")
    sh(uv, "pip", "install", "--quiet", "--python", PYTHON, "-e", ".[test]")
    STAMP.write_text(wanted)


def demo() -> None:
    """The demo release; it ends with the paths of release.ipynb and release.html and the gate (exit 1 when red)."""
    sh(BIN / "forge", "release", ROOT / "parameterized_runs" / "demo.yaml")


def test() -> None:
    sh(PYTHON, "-m", "pytest", *sys.argv[2:])


def lab() -> None:
    sh(PYTHON, "-m", "forge_kernel.widgets.lab", ROOT)


if __name__ == "__main__":
    jobs = {"demo": demo, "test": test, "lab": lab}
    if len(sys.argv) < 2 or sys.argv[1] not in jobs:
        sys.exit(f"usage: python3 scripts/dev.py {{{'|'.join(jobs)}}} [pytest args]")
    ensure_env()
    try:
        jobs[sys.argv[1]]()
    except subprocess.CalledProcessError as exc:
        sys.exit(exc.returncode)
