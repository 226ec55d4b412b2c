"""``forge model evaluate``: a small real model on this machine, run as the llm agent."""

from __future__ import annotations

from pathlib import Path

import click

from ._run import echo_outcome


@click.group(name="model")
def model_group() -> None:
    """A real model on this machine (the local-model extra)."""


@model_group.command(name="evaluate")
@click.option(
    "--suite", "suites", multiple=True, help="Package folder(s); five bundled packages with 13 tools if omitted."
)
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="A new run directory; the model's config is written beside it (RUN_DIR.model.yaml).",
)
@click.option("--trials", default=1, show_default=True, type=click.IntRange(1), help="Trials per task.")
def model_evaluate(suites, out, trials) -> None:
    """Start SmolLM2-135M on 127.0.0.1, run it as the llm agent on a small suite, stop it. A weak model: minutes
    on 2 cores."""
    import asyncio

    from ..engine import SMALL_SUITE, evaluate_local_model

    echo_outcome(asyncio.run(evaluate_local_model(out, list(suites) or SMALL_SUITE, trials)), out)
