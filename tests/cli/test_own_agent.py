"""An agent of one's own, in the folder the command (or the notebook) runs in, is found without PYTHONPATH: the
example of docs/agents.md, as a reader would save and run it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from forge_kernel.workers.sandbox import Sandbox
from tests.helpers import ROOT, needs_bwrap

FORGE = str(Path(sys.executable).with_name("forge"))


@pytest.fixture
def own_folder():
    """A folder holding docs/agents.md's example as my_agent.py, readable by the sandbox's user."""
    example = next(
        block
        for block in re.findall(r"```python\n(.*?)```", (ROOT / "docs/agents.md").read_text(encoding="utf-8"), re.S)
        if "class AllergyReader" in block
    )
    folder = Path(tempfile.mkdtemp(prefix="forge-own-agent-"))
    folder.chmod(0o755)
    (folder / "my_agent.py").write_text(example, encoding="utf-8")
    (folder / "my_agent.py").chmod(0o644)
    yield folder
    shutil.rmtree(folder)


@needs_bwrap
def test_the_documented_agent_runs_from_the_current_folder_without_pythonpath(own_folder):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    command = [FORGE, "run", "--suite", str(ROOT / "task_packages/superclue/SC-IR-ALLERGIES")]
    result = subprocess.run(
        [*command, "--agent", "my_agent:AllergyReader", "--trials", "1", "--out", "runs/mine"],
        cwd=own_folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    assert "1 trial(s) run" in result.stdout and (own_folder / "runs/mine").is_dir()


def test_a_notebooks_own_folder_reaches_the_sandboxed_workers(tmp_path, monkeypatch):
    """A kernel's module search path starts with "" (its folder); the workers get it as a path."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", ["", *sys.path])
    assert str(tmp_path) in Sandbox(mode="process").environment()["PYTHONPATH"].split(os.pathsep)
