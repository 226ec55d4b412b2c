"""The ``forge`` command. Thin: it parses, calls the engine, prints. A user's mistake exits 2 with one line."""
from __future__ import annotations

import json
import re
import shlex
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

import click

from .release_cli import keygen, release, signoff, verify_release
from .spec.errors import ForgeError, SpecError
from .spec.console import echo, printable

if TYPE_CHECKING:
    from .store import Run


@contextmanager
def user_errors():
    """Print a user's mistake (any ForgeError, or a usage error) as one line ``file: field: message``, and exit 2."""
    try:
        yield
    except click.exceptions.NoArgsIsHelpError:
        raise  # plain ``forge``: the help
    except click.UsageError as exc:
        echo(usage_line(exc), err=True)
        sys.exit(2)
    except ForgeError as exc:
        echo(printable(str(exc)), err=True)  # one line, though it may quote a file's text
        sys.exit(2)


def isolation_line(run: Run) -> str:
    """How each agent of a run (a Run handle) ran: in process (trusted) or in which sandbox."""
    ways: dict[str, list[str]] = {}
    for name, how in run.isolation.items():
        ways.setdefault(how, []).append(name)
    return "agents " + " · ".join(f"{how}: {', '.join(names)}" for how, names in ways.items())


@contextmanager
def opened(*paths: Path) -> Iterator[list[Run]]:
    """A Run handle per path, each run opened once (a path given twice gives the same handle)."""
    from .store import open_run

    runs: dict[Path, Run] = {}
    try:
        for path in paths:
            if path.resolve() not in runs:
                runs[path.resolve()] = open_run(path)
        yield [runs[path.resolve()] for path in paths]
    finally:
        for run in runs.values():
            run.close()


def usage_line(exc: click.UsageError) -> str:
    """A usage error as ``forge <command>: <option or argument>: message``, without the usage block."""
    param = getattr(exc, "param", None)
    if param is not None:
        field = param.opts[0] if isinstance(param, click.Option) else param.human_readable_name
    else:
        field = getattr(exc, "option_name", None) or getattr(exc, "command_name", None) or "(usage)"
    message = (exc.message or "missing").rstrip(".")
    if getattr(exc, "possibilities", None):
        message += f" (did you mean {', '.join(exc.possibilities)}?)"
    return f"{exc.ctx.command_path if exc.ctx else 'forge'}: {field}: {message}"


class Forge(click.Group):
    """The ``forge`` group: every command's mistakes, in its input or its usage, go through ``user_errors``."""

    def make_context(self, *args, **kwargs):
        with user_errors():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx):
        with user_errors():
            return super().invoke(ctx)


class OutputFile(click.Path):
    """A file to write, whose folder must exist: checked while parsing, before any work."""

    def __init__(self):
        super().__init__(dir_okay=False, path_type=Path)

    def convert(self, value, param, ctx):
        path = super().convert(value, param, ctx)
        if not path.parent.is_dir():
            self.fail(f"folder {path.parent} does not exist", param, ctx)
        return path


@click.group(cls=Forge, name="forge")
@click.version_option(package_name="medagent-forge")
def main() -> None:
    """MedAgent Forge: grade what a medical agent did to a virtual EHR (synthetic data only)."""


@main.command()
@click.argument("paths", nargs=-1, required=True)
def validate(paths: tuple[str, ...]) -> None:
    """Check packages: both halves, their cross-references and FHIR R4 fixtures."""
    from .engine.validate import check_package
    from .spec import find_packages

    failures = 0
    for folder in find_packages(list(paths)):
        try:
            package = check_package(folder)
            echo(f"ok    {package.id}  {package.package_hash[:19]}")
        except SpecError as exc:
            failures += 1
            echo(str(exc), err=True)
    if failures:
        sys.exit(2)


@main.command()
@click.option("--suite", "suites", multiple=True, required=True, help="Package folder(s); repeat for several.")
@click.option("--agent", "agents", required=True, help="Agent name(s), comma-separated, or module:attribute.")
@click.option("--trials", default=3, show_default=True, type=click.IntRange(1), help="Trials per task and agent.")
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path), help="Run directory.")
@click.option("--concurrency", default=4, show_default=True, type=click.IntRange(1))
@click.option("--seed", default=0, show_default=True, type=int, help="Run seed.")
@click.option("--resume", is_flag=True, help="Finish a run that stopped; finished trials are not redone.")
@click.option("--accept-sandbox-change", "accept_sandbox_change", is_flag=True,
              help="With --resume: go on although the isolated agents' sandbox differs from the stored run's (e.g. "
                   "bubblewrap installed since); the change is recorded in the run's manifest.")
@click.option("--gate", help="Release-gate policy (YAML) declared before the run; its hash goes into the manifest.")
@click.option("--trust", "trust", multiple=True, metavar="AGENT",
              help="Run this module:attribute --agent entry in process, unsandboxed (you trust its author).")
@click.option("--sandbox", default="namespace", show_default=True, type=click.Choice(["namespace", "strict", "process"]),
              help="How untrusted agents are confined (README: trust model).")
@click.option("--allow-endpoint", "endpoints", multiple=True, metavar="HOST:PORT",
              help="A service the agents may reach although it is on this machine (a local model server); "
                   "with --sandbox strict, the only ones they reach.")
@click.option("--agent-memory", "agent_memory", default=4096, show_default=True, type=click.IntRange(64),
              metavar="MB", help="The most memory an isolated agent may use: each of its processes, and all "
              "of them together where forge can make cgroups.")
@click.option("--agent-processes", "agent_processes", default=4096, show_default=True, type=click.IntRange(16),
              metavar="N", help="The most processes and threads one isolated agent may have at once.")
@click.option("--agent-env", "agent_env", multiple=True, metavar="NAME",
              help="An environment variable isolated agents get (e.g. their model's API key); they get no other "
                   "but PATH, HOME, locale and time zone.")
def run(suites, agents, trials, out, concurrency, seed, resume, accept_sandbox_change, gate, trust, sandbox,
        endpoints, agent_memory, agent_processes, agent_env) -> None:
    """Run agents on packages, k trials each, into a run store."""
    import asyncio

    from .engine import RunSpec, execute

    spec = RunSpec(suite=list(suites), agents=agent_entries(agents), trials=trials,
                   seed=seed, gate=gate, trust=list(trust), sandbox=sandbox, endpoints=list(endpoints),
                   agent_memory_mb=agent_memory, agent_processes=agent_processes, agent_env=list(agent_env))
    outcome = asyncio.run(execute(spec, out, concurrency=concurrency, resume=resume,
                                  accept_sandbox_change=accept_sandbox_change))
    echo_outcome(outcome, out)


def echo_outcome(outcome, out: Path) -> None:
    """What ``forge run`` prints after a run: how many trials ran, how the agents ran, the summary, what next."""
    from .analysis import run_summary

    echo(f"run {outcome.run_id}: {outcome.ran} trial(s) run, {outcome.skipped} already stored, in {out}")
    with opened(out) as (stored,):
        echo(isolation_line(stored))
        echo(str(run_summary(stored)))
    echo(f"per slice: forge summary {out} --by dimension · one trial: forge replay {out} --task ID --agent NAME")


def agent_entries(value: str) -> list[str]:
    """The entries of ``--agent``, comma-separated; an ``mcp:COMMAND`` entry takes the rest of the value, commas and
    all (a command line may hold them)."""
    from .workers import MCP_PREFIX

    found = re.search(rf"(?:^|,)\s*{MCP_PREFIX}", value)
    head, command = (value[:found.start()], value[found.start():].lstrip(", ").strip()) if found else (value, "")
    return [a.strip() for a in head.split(",") if a.strip()] + ([command] if command else [])


@main.group(name="model")
def model_group() -> None:
    """A real model on this machine (the local-model extra)."""


@model_group.command(name="evaluate")
@click.option("--suite", "suites", multiple=True, help="Package folder(s); five bundled packages with 13 tools if omitted.")
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="A new run directory; the model's config is written beside it (RUN_DIR.model.yaml).")
@click.option("--trials", default=1, show_default=True, type=click.IntRange(1), help="Trials per task.")
def model_evaluate(suites, out, trials) -> None:
    """Start SmolLM2-135M on 127.0.0.1, run it as the llm agent on a small suite, stop it. A weak model: minutes
    on 2 cores."""
    import asyncio

    from .engine import SMALL_SUITE, evaluate_local_model

    echo_outcome(asyncio.run(evaluate_local_model(out, list(suites) or SMALL_SUITE, trials)), out)


@main.command()
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--by", default="dimension", show_default=True, help="A slice (dimension, language, ...) or suite.")
@click.option("--markdown", is_flag=True, help="Print a Markdown table.")
def summary(run_dir, by, markdown) -> None:
    """Trial pass rate per agent and slice value (latest grading); cost and model tokens per task where any."""
    from .analysis import markdown_lines, markdown_table, pass_rates, usage
    from .spec.compact import SYNTHETIC_BANNER

    with opened(run_dir) as (run,):
        table = pass_rates(run, by)
        spent = usage(run.usage) if run.usage["turns"].any() or run.usage["cost"].any() else None
        if markdown:
            echo(f"> {SYNTHETIC_BANNER}\n\n{markdown_table(table.frame, 'agent', lambda v: f'{v:.0%}')}")
        else:
            echo(str(table))
        if spent is not None:
            echo(f"\nCost and model tokens per task (the tokens as each agent reported them):\n"
                 + ("\n".join(markdown_lines(list(spent.frame.columns), spent.frame.values.tolist())) if markdown
                    else spent.text()))
        echo(isolation_line(run))


@main.command(name="compare")
@click.argument("baseline_run", type=click.Path(file_okay=False, path_type=Path))
@click.argument("candidate_run", type=click.Path(file_okay=False, path_type=Path))
@click.option("--baseline-agent", help="The agent to read from BASELINE_RUN (needed when it holds several).")
@click.option("--candidate-agent", help="The agent to read from CANDIDATE_RUN (needed when it holds several).")
@click.option("--gate", "gate_file", help="Release-gate policy (YAML); the bundled default when omitted.")
@click.option("--json", "json_out", type=OutputFile(), help="Write every figure as JSON.")
@click.option("--markdown", "md_out", type=OutputFile(), help="Write a Markdown report.")
def compare_runs(baseline_run, candidate_run, baseline_agent, candidate_agent, gate_file, json_out, md_out) -> None:
    """Compare a candidate with a baseline and apply the release gate: exit 0 green, 1 red, 2 bad input."""
    from .analysis import compare, declared_policy, evaluate, load_policy
    from .report.compare_markdown import render_comparison
    from .spec.compact import SYNTHETIC_BANNER

    with opened(baseline_run, candidate_run) as (base, cand):
        cmp = compare(base, cand, baseline_agent, candidate_agent)
        gate = evaluate(cmp, load_policy(gate_file), declared_policy(cand))
    if json_out:
        json_out.write_text(json.dumps({"comparison": cmp.model_dump(mode="json"), "gate": gate.model_dump(mode="json")},
                                       ensure_ascii=False, indent=1), encoding="utf-8")
    if md_out:
        md_out.write_text(render_comparison(cmp, gate), encoding="utf-8")
    echo("\n".join([SYNTHETIC_BANNER, f"{cmp.title}: {gate.summary}", f"  ran: {cmp.ran}", *gate.check_lines(),
                    cmp.headline, *(f"  {line}" for line in cmp.usage_lines())]))
    sys.exit(0 if gate.green else 1)


@main.command()
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--candidate", required=True, help="The full agent.")
@click.option("--ablation", "ablations", required=True, help="Ablated variant(s), comma-separated.")
@click.option("--ablation-run", type=click.Path(file_okay=False, path_type=Path),
              help="Run holding the ablations, when not RUN_DIR.")
@click.option("--markdown", "md_out", type=OutputFile(), help="Write the cards as Markdown.")
def ablation(run_dir, candidate, ablations, ablation_run, md_out) -> None:
    """Ablation cards: the component each variant removes, the tasks it costs, the slices where it mattered."""
    from .analysis import ablation_cards
    from .report.compare_markdown import render_ablations

    names = [name.strip() for name in ablations.split(",") if name.strip()]
    with opened(run_dir, ablation_run or run_dir) as (run, other):
        text = render_ablations(ablation_cards(run, candidate, names, other))
    if md_out:
        md_out.write_text(text, encoding="utf-8")
    echo(text)


@main.command()
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--triage", "triage_file", help="Triage YAML with reviewer decisions to apply.")
@click.option("--csv", "csv_out", type=OutputFile(), help="Write the ledger as CSV.")
@click.option("--parquet", "parquet_out", type=OutputFile(), help="Write the ledger as Parquet.")
@click.option("--bundles", "bundles_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write a repro bundle per critical failure under this folder.")
def ledger(run_dir, triage_file, csv_out, parquet_out, bundles_dir) -> None:
    """Every failed trial: its verdicts, error class, component and fix status. No patient content."""
    from .analysis.ledger import failure_ledger, write_ledger
    from .analysis.triage import load_triage

    with opened(run_dir) as (run,):
        found = failure_ledger(run, load_triage(triage_file) if triage_file else None)
        bundles = None
        if bundles_dir:
            from .engine.repro import write_bundles  # the engine, only to write bundles

            bundles = write_bundles(run, found.critical, bundles_dir)
        write_ledger(found, csv_out, parquet_out)
        echo(str(found))
        echo(isolation_line(run))
    if bundles is not None:
        from .engine.repro import COMMAND

        echo(f"{len(bundles)} repro bundle(s) in {bundles_dir}; in one, run: {COMMAND}")
        for bundle in (b for b in bundles if b.differs):
            echo(f"  {bundle.path}: a replay does NOT reproduce {', '.join(bundle.differs)}")


@main.command()
@click.option("--package", "package_path", required=True, help="Package folder or package.yaml.")
@click.option("--trajectory", "trajectory_path", required=True, help="Trajectory JSON file.")
@click.option("--json", "json_out", type=OutputFile(), help="Write the grading as JSON.")
def grade(package_path, trajectory_path, json_out) -> None:
    """Grade one recorded trajectory: replay its calls on a fresh EHR, then run the verifiers."""
    import asyncio

    from .engine.grading import grade_trajectory, trajectory_json
    from .spec import load_package, load_trajectory

    package = load_package(package_path)
    record = asyncio.run(grade_trajectory(package, load_trajectory(trajectory_path), judge=True))
    echo(f"{package.id} · {trajectory_path} · hidden half {record.grading.hidden_version}")
    echo_grading(record)
    if json_out:
        json_out.write_text(json.dumps(trajectory_json(record), ensure_ascii=False, indent=2), encoding="utf-8")


def echo_grading(record, err: bool = False) -> None:
    """A graded trial's scores, then each verdict on a line."""
    s = record.grading.scores
    echo(f"{'PASSED' if s.passed else 'FAILED'} · accuracy {s.accuracy:.2f} · completion {s.completion}"
         f" · safety gate {s.safety_gate}", err=err)
    for v in record.grading.verdicts:
        echo(f"  {'PASS' if v.passed else 'FAIL'} {v.severity:<4} {v.category:<7} {v.verifier_id}: {v.reason}", err=err)


@main.group(name="mcp")
def mcp_commands() -> None:
    """Agents over MCP (the Model Context Protocol): forge as the server of a trial."""


@mcp_commands.command(name="serve")
@click.option("--package", "package_path", required=True, help="Package folder or package.yaml.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Store the trial as a run in this folder (one that holds no run yet).")
@click.option("--transport", default="stdio", show_default=True, type=click.Choice(["stdio", "http"]),
              help="stdio: this process's stdin and stdout; http: streamable HTTP on 127.0.0.1.")
@click.option("--port", default=0, show_default=True, type=click.IntRange(0, 65535),
              help="With --transport http: the port (0: any free one); the URL is printed.")
def mcp_serve(package_path, out, transport, port) -> None:
    """Serve one trial of a package's tools and task over MCP; when it ends, grade it and, with --out, store it as a
    run. Over stdio, forge's own lines go to stderr."""
    import asyncio

    from .engine.mcp_serve import serve

    err = transport == "stdio"  # stdout is the client's connection
    served = asyncio.run(serve(package_path, out, transport, port, say=echo))
    record = served.record
    echo(f"{record.task_id} · {record.agent} {record.agent_version} · {record.status}"
         + (f" ({record.reason})" if record.reason else ""), err=err)
    echo_grading(record, err)
    if served.run_id:
        echo(f"run {served.run_id}: 1 trial stored in {out} · forge replay {out} --task {record.task_id} --agent "
             f"{shlex.quote(record.agent)}", err=err)


@main.command()
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
def regrade(run_dir) -> None:
    """Re-run the current hidden halves' verifiers on a run's stored trajectories (a new grading)."""
    from .engine.grading import regrade as do_regrade

    outcome = do_regrade(run_dir)
    versions = ", ".join(f"{k} {v}" for k, v in sorted(outcome.hidden_versions.items()))
    echo(f"grading {outcome.grading_id}: {outcome.trials} trial(s) regraded, {outcome.changed} changed pass/fail")
    echo(f"hidden halves: {versions}")


@main.command()
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--task", required=True)
@click.option("--agent", required=True)
@click.option("--trial", default=0, show_default=True, type=int)
def replay(run_dir, task, agent, trial) -> None:
    """Show one stored trajectory as text, with state changes and verdicts."""
    from .report import render_trial
    from .store import open_run

    with open_run(run_dir) as run:
        echo(render_trial(run.trial(task, agent, trial), run.isolation.get(agent, "")))


@main.command(name="catalog")
@click.option("--json", "as_json", is_flag=True, help="Print every entry as JSON, with its model's JSON Schema.")
def show_catalog(as_json) -> None:
    """Everything registered by name: tools, verifier kinds (with params), agents, gate checks."""
    from . import catalog
    from .built_in import load

    entries = load()
    if as_json:
        echo(json.dumps({kind: [catalog.as_json(e) for e in entries.of(kind)] for kind in catalog.KINDS},
                              ensure_ascii=False, indent=1, default=str))
        return
    for kind in catalog.KINDS:
        echo(f"{kind}s ({len(entries.of(kind))})")
        for entry in entries.of(kind):
            echo(f"  {catalog.entry_line(entry)}")


@main.command()
@click.argument("paths", nargs=-1)
@click.option("--mutants", "with_mutants", is_flag=True,
              help="Also grade generic mutants of each gold solution; list every one the verifiers do not reject.")
def selftest(paths, with_mutants) -> None:
    """Verifier coverage: every gold solution passes, every counterexample fails as named, every valid variant
    passes; each judge's agreement with its labelled set. Not a model score."""
    import asyncio

    from .analysis import cohens_kappa
    from .engine import Images
    from .engine.selftest import judge_agreements, mutation_test, selftest_package
    from .spec import find_packages, load_package

    packages = [load_package(folder) for folder in find_packages(list(paths) or ["task_packages"])]

    async def all_packages():
        images = Images()
        cases = [await selftest_package(package, images) for package in packages]
        reports = [await mutation_test(package, images) for package in packages] if with_mutants else []
        return cases, reports

    by_package, reports = asyncio.run(all_packages())
    for cases in by_package:
        failing = [c for c in cases if not c.ok]
        kinds = [c.kind for c in cases]
        echo(f"{'FAIL' if failing else 'ok  '}  {cases[0].task_id:<32} gold + {kinds.count('counterexample')} "
                   f"counterexample(s) + {kinds.count('valid variant')} valid variant(s)")
        for c in failing:
            echo(f"      {c.kind} {c.case}: {c.detail}")
    bad = [cases[0].task_id for cases in by_package if not all(c.ok for c in cases)]
    echo(f"verifier coverage: {len(by_package) - len(bad)}/{len(by_package)} package(s) tell the gold solution "
               "and valid variants from every counterexample (a check of the verifiers, not a model score)")
    for judge in judge_agreements(packages):
        agreement = "no labelled set" if judge.pairs is None else str(cohens_kappa(judge.pairs))
        echo(f"judge {judge.name} ({judge.identity}): {agreement} ({judge.labelled_set})")
    if with_mutants:
        echo_mutants(reports)
    if bad or not all(r.ok for r in reports):
        sys.exit(1)


def echo_mutants(reports) -> None:
    """Per package, the operators' rejected / applicable counts and every mutant that is a problem; then one line
    per operator."""
    from .engine.selftest import PROBLEMS, operator_totals, operators_line, totals_line

    for report in reports:
        state = "ok  " if report.ok else "FAIL"
        echo(f"{state}  {report.task_id:<32} mutants rejected: {operators_line(report)}")
        for r in (r for r in report.results if r.status in PROBLEMS):
            echo(f"      {r.status}: {r.mutant.operator} {r.mutant.target} ({r.mutant.note}): {r.detail}")
            for line in r.mutant.lines():
                echo(f"        {line}")
        for d in report.unmatched:
            echo(f"      valid_mutants: {d.operator} {d.target} matches no mutant")
    echo("mutants per operator (a check of the verifiers, not a model score):")
    for operator, counts in operator_totals(reports).items():
        echo(f"  {totals_line(operator, counts)}")


for command in (release, keygen, signoff, verify_release):
    main.add_command(command)
