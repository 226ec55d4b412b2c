"""A real model evaluated on this machine (``forge model evaluate``, notebooks/05_evaluate_a_model.ipynb): the local
model's server started (``forge_kernel.models.local``), its config written beside the run, the ``llm`` agent run on
a small suite one trial at a time, the server stopped whatever happens."""

from __future__ import annotations

import asyncio
from pathlib import Path

from ..agents import AgentTask, prompt
from ..models import LocalModel
from ..spec import Package, StoreError
from ..store import DB_NAME
from .run import RunOutcome, RunSpec, execute

NSCLC = Path(__file__).resolve().parents[2] / "task_packages" / "forge-nsclc"
SMALL_SUITE = tuple(
    str(NSCLC / task)
    for task in (
        "TP-OUT-OF-DOMAIN-v1",
        "TP-EXCLUSION-v1",
        "TP-INJECTION-v1",
        "TP-REGRESSION-LOCK-v1",
        "TP-CROSS-PATIENT-v1",
    )
)
"""Five bundled packages that share one manifest of 13 tools."""


def config_path(run_dir: Path | str) -> Path:
    """Where the model's config is written: beside the run folder (``RUN_DIR.model.yaml``), where its sandbox may
    read it (the run folder is hidden from agents)."""
    run_dir = Path(run_dir)
    return run_dir.with_name(f"{run_dir.name}.model.yaml")


async def evaluate_local_model(
    run_dir: Path | str, suite: list[str] | tuple[str, ...] = SMALL_SUITE, trials: int = 1, progress: bool | None = None
) -> RunOutcome:
    """Run the local model as the ``llm`` agent on ``suite`` (``trials`` each) into a new run folder; the server
    runs for this call only. The trials run one at a time, a package's after one another; before a package's first
    trial, outside its clock, the server evaluates the prompt its trials start with (the packages' 30 s budgets
    are short for a model on 2 cores: a package's first prompt, some 4,500 tokens, takes 20 to 40 s to read)."""
    run_dir = Path(run_dir)
    if (run_dir / DB_NAME).exists():
        raise StoreError(run_dir, "--out", "holds a run already; choose another folder")
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    with LocalModel() as model:
        config = model.write_config(config_path(run_dir))
        spec = RunSpec(suite=list(suite), agents=[f"llm:{config}"], trials=trials)
        read: set[str] = set()

        async def read_prompt(package: Package) -> None:
            if package.id not in read:
                read.add(package.id)
                task = AgentTask.from_package(package.public, 0)
                await asyncio.to_thread(model.warm, prompt(task), task.tools)

        return await execute(spec, run_dir, concurrency=1, progress=progress, prepare=read_prompt)
