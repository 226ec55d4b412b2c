"""Shared fixtures: one run of the six reference agents over the bundled suites, and one of a model that says what
it does beside baseline-v1, each made once per session; the order vocabulary broken on demand."""

import asyncio
from pathlib import Path

import pytest
import yaml

from forge_kernel.agents.reference import REFERENCE_SET
from forge_kernel.engine import RunSpec, execute
from forge_kernel.store import open_run
from forge_kernel.verify import unit_registry
from forge_kernel.verify.tables import synonyms

ROOT = Path(__file__).resolve().parents[1]
unit_registry()  # the units every grading reads, built once: each run's grader, a fork of this process, has them


@pytest.fixture(scope="session")
def reference_run(tmp_path_factory) -> Path:
    """RUN_DIR of 6 agents x 3 trials x the 82 packages of superclue and forge-nsclc (about 4 s), declared with the
    default gate (medagentbench-style has a run of its own: tests/suites/test_suite_medagentbench_style.py)."""
    out = tmp_path_factory.mktemp("reference") / "run"
    spec = RunSpec(
        suite=[str(ROOT / "task_packages" / "superclue"), str(ROOT / "task_packages" / "forge-nsclc")],
        agents=list(REFERENCE_SET),
        trials=3,
        seed=0,
        gate=str(ROOT / "forge_kernel/spec/gates/default.yaml"),
    )
    asyncio.run(execute(spec, out, progress=False))
    return out


@pytest.fixture(scope="session")
def reference(reference_run):
    """The reference run, opened once (a Run handle)."""
    with open_run(reference_run) as run:
        yield run


@pytest.fixture(scope="session")
def llm_run(tmp_path_factory) -> Path:
    """RUN_DIR of the three worked examples x 2 trials of baseline-v1 and of ``narrated``, an llm agent (trusted, in
    process) whose model (tests/chat_server.py) says what it does before each gold call, first with arguments cut
    short that never reach the tools; priced per million tokens at $3 in, $0.30 cached in, $15 out."""
    from tests.chat_server import ChatServer, gold_script
    from tests.helpers import copy_worked_examples

    root = tmp_path_factory.mktemp("llm-run")
    suite = copy_worked_examples(root)
    config = root / "narrated.yaml"
    with ChatServer(gold_script(sorted(p.parent for p in suite.rglob("package.yaml")))) as chat:
        config.write_text(
            yaml.safe_dump(
                {
                    "base_url": chat.url,
                    "model": "narrated",
                    "seed": 0,
                    "timeout_s": 5.0,
                    "price": {"input": 3.0, "cached_input": 0.3, "output": 15.0},
                }
            )
        )
        spec = RunSpec(
            suite=[str(suite)], agents=[f"llm:{config}", "baseline-v1"], trials=2, seed=0, trust=[f"llm:{config}"]
        )
        asyncio.run(execute(spec, root / "run", progress=False))
    return root / "run"


def forget_order_lookups() -> None:
    synonyms.synonym_key.cache_clear()
    synonyms.order_identity.cache_clear()


@pytest.fixture
def break_order_table(monkeypatch):
    """Call it to empty the order vocabulary (the mechanism broken); the look-ups that remember what it gave forget
    it then, and again after the test."""

    def broken() -> None:
        monkeypatch.setattr(synonyms, "order_names", lambda: {})
        forget_order_lookups()

    yield broken
    forget_order_lookups()
