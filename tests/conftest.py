"""Shared fixtures: one run of the six reference agents over the bundled suites, made once per session."""
import asyncio
from pathlib import Path

import pytest

from forge_kernel.agents.reference import REFERENCE_SET
from forge_kernel.engine import RunSpec, execute
from forge_kernel.store import open_run
from forge_kernel.verify._quantities import registry

ROOT = Path(__file__).resolve().parents[1]
registry()  # the units every grading reads, built once: each run's grader, a fork of this process, has them


@pytest.fixture(scope="session")
def reference_run(tmp_path_factory) -> Path:
    """RUN_DIR of 6 agents x 3 trials x 82 packages (about 4 s), declared with the default gate."""
    out = tmp_path_factory.mktemp("reference") / "run"
    spec = RunSpec(suite=[str(ROOT / "task_packages")], agents=list(REFERENCE_SET), trials=3, seed=0,
                   gate=str(ROOT / "forge_kernel/spec/gates/default.yaml"))
    asyncio.run(execute(spec, out, progress=False))
    return out


@pytest.fixture(scope="session")
def reference(reference_run):
    """The reference run, opened once (a Run handle)."""
    with open_run(reference_run) as run:
        yield run
