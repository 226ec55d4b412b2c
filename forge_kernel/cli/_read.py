"""The commands that read run stores: ``forge summary``, ``compare``, ``ablation``, ``ledger`` and ``replay``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..spec import echo
from ._common import OutputFile, isolation_line, opened


@click.command()
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--by", default="dimension", show_default=True, help="A slice (dimension, language, ...) or suite.")
@click.option("--markdown", is_flag=True, help="Print a Markdown table.")
def summary(run_dir, by, markdown) -> None:
    """Trial pass rate per agent and slice value (latest grading); cost and model tokens per task where any."""
    from ..analysis import markdown_lines, markdown_table, pass_rates, usage
    from ..spec import SYNTHETIC_BANNER

    with opened(run_dir) as (run,):
        table = pass_rates(run, by)
        spent = usage(run.usage) if run.usage["turns"].any() or run.usage["cost"].any() else None
        if markdown:
            echo(f"> {SYNTHETIC_BANNER}\n\n{markdown_table(table.frame, 'agent', lambda v: f'{v:.0%}')}")
        else:
            echo(str(table))
        if spent is not None:
            echo(
                "\nCost and model tokens per task (the tokens as each agent reported them):\n"
                + (
                    "\n".join(markdown_lines(list(spent.frame.columns), spent.frame.values.tolist()))
                    if markdown
                    else spent.text()
                )
            )
        echo(isolation_line(run))


@click.command(name="compare")
@click.argument("baseline_run", type=click.Path(file_okay=False, path_type=Path))
@click.argument("candidate_run", type=click.Path(file_okay=False, path_type=Path))
@click.option("--baseline-agent", help="The agent to read from BASELINE_RUN (needed when it holds several).")
@click.option("--candidate-agent", help="The agent to read from CANDIDATE_RUN (needed when it holds several).")
@click.option("--gate", "gate_file", help="Release-gate policy (YAML); the bundled default when omitted.")
@click.option("--json", "json_out", type=OutputFile(), help="Write every figure as JSON.")
@click.option("--markdown", "md_out", type=OutputFile(), help="Write a Markdown report.")
def compare_runs(baseline_run, candidate_run, baseline_agent, candidate_agent, gate_file, json_out, md_out) -> None:
    """Compare a candidate with a baseline and apply the release gate: exit 0 green, 1 red, 2 bad input."""
    from ..analysis import compare, components, coverage_slices, declared_policy, evaluate, load_policy
    from ..report import render_comparison
    from ..spec import SYNTHETIC_BANNER

    with opened(baseline_run, candidate_run) as (base, cand):
        cmp = compare(base, cand, baseline_agent, candidate_agent)
        gate = evaluate(cmp, load_policy(gate_file), declared_policy(cand))
    if json_out:
        json_out.write_text(
            json.dumps(
                {"comparison": cmp.model_dump(mode="json"), "gate": gate.model_dump(mode="json")},
                ensure_ascii=False,
                indent=1,
            ),
            encoding="utf-8",
        )
    if md_out:
        md_out.write_text(render_comparison(cmp, gate), encoding="utf-8")
    echo(
        "\n".join(
            [
                SYNTHETIC_BANNER,
                f"{cmp.title}: {gate.summary}",
                f"  ran: {cmp.ran}",
                *gate.check_lines(),
                cmp.headline,
                *(f"  {line}" for line in cmp.usage_lines()),
                *components(cmp).lines(),
                *coverage_slices(cmp).lines(),
            ]
        )
    )
    sys.exit(0 if gate.green else 1)


@click.command()
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--candidate", required=True, help="The full agent.")
@click.option("--ablation", "ablations", required=True, help="Ablated variant(s), comma-separated.")
@click.option(
    "--ablation-run",
    type=click.Path(file_okay=False, path_type=Path),
    help="Run holding the ablations, when not RUN_DIR.",
)
@click.option("--markdown", "md_out", type=OutputFile(), help="Write the cards as Markdown.")
def ablation(run_dir, candidate, ablations, ablation_run, md_out) -> None:
    """Ablation cards: the component each variant removes, the tasks it costs, the slices where it mattered."""
    from ..analysis import ablation_cards
    from ..report import render_ablations

    names = [name.strip() for name in ablations.split(",") if name.strip()]
    with opened(run_dir, ablation_run or run_dir) as (run, other):
        text = render_ablations(ablation_cards(run, candidate, names, other))
    if md_out:
        md_out.write_text(text, encoding="utf-8")
    echo(text)


@click.command()
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--triage", "triage_file", help="Triage YAML with reviewer decisions to apply.")
@click.option("--csv", "csv_out", type=OutputFile(), help="Write the ledger as CSV.")
@click.option("--parquet", "parquet_out", type=OutputFile(), help="Write the ledger as Parquet.")
@click.option(
    "--bundles",
    "bundles_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write a repro bundle per critical failure under this folder.",
)
def ledger(run_dir, triage_file, csv_out, parquet_out, bundles_dir) -> None:
    """Every failed trial: its verdicts, error class, component and fix status. No patient content."""
    from ..analysis import failure_ledger, load_triage, write_ledger

    with opened(run_dir) as (run,):
        found = failure_ledger(run, load_triage(triage_file) if triage_file else None)
        bundles = None
        if bundles_dir:
            from ..engine import write_bundles  # the engine, only to write bundles

            bundles = write_bundles(run, found.critical, bundles_dir)
        write_ledger(found, csv_out, parquet_out)
        echo(str(found))
        echo(isolation_line(run))
    if bundles is not None:
        from ..engine import COMMAND

        echo(f"{len(bundles)} repro bundle(s) in {bundles_dir}; in one, run: {COMMAND}")
        for bundle in (b for b in bundles if b.differs):
            echo(f"  {bundle.path}: a replay does NOT reproduce {', '.join(bundle.differs)}")


@click.command()
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--task", required=True)
@click.option("--agent", required=True)
@click.option("--trial", default=0, show_default=True, type=int)
def replay(run_dir, task, agent, trial) -> None:
    """Show one stored trajectory as text, with state changes and verdicts."""
    from ..report import render_trial
    from ..store import open_run

    with open_run(run_dir) as run:
        echo(render_trial(run.trial(task, agent, trial), run.isolation.get(agent, "")))
