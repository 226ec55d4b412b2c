"""``forge release``: run the trials a release still lacks, execute the report template with papermill, export the
self-contained HTML, copy the parameters in and write ``release.json``, so that ``forge signoff`` / ``forge verify``
work on the folder, wherever it is copied to."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from ..spec import ForgeError
from ..store import DB_NAME
from ._approved import last_approved
from ._html_export import export_html
from ._params import LAST_APPROVED, ReleaseParameters, load_parameters
from .release import recorded
from .signoff import HTML, RECORD, SIGNOFF
from .signoff_section import with_signoff

TEMPLATE = Path(__file__).resolve().parents[2] / "notebooks" / "release_report.ipynb"
NOTEBOOK = "release.ipynb"
PARAMETERS = "parameters.yaml"
"""The parameters file as the release was built from it, copied into the folder (its paths are relative to the
original's folder): a signature covers it, and a copied folder still has it."""
MUTANTS = "mutants.json"
"""The mutation kill rate's cache, filled while the trials run."""
JUDGES = "judges.json"
"""The judges' agreement with their labelled sets, filled while the trials run."""


@dataclass(frozen=True)
class Built:
    folder: Path
    notebook: Path
    html: Path
    green: bool
    values: dict


@dataclass(frozen=True)
class Side:
    """One run the report reads: its folder and the agent in it (as the parameters name it, a bundled name or
    ``module:attribute``, and as the store names it: the name the agent declares); ``run_here`` when this release
    runs it."""

    label: str
    agent: str
    run: Path
    run_here: bool
    name: str = ""

    @property
    def stored_as(self) -> str:
        return self.name or self.agent


def sides(params: ReleaseParameters, base: Path, parameters: Path, folder: Path) -> tuple[list[Side], str]:
    """The baseline, candidate and ablation runs, and how the baseline was chosen."""
    runs = folder / "runs"
    if params.baseline == LAST_APPROVED:
        found = last_approved(base, base / params.trusted_keys, parameters, params.release)
        baseline = Side("baseline", found.agent, found.run, False, found.agent)
        source = f"the last approved release, {found.folder.name} (approved {found.approved_at})"
    else:
        baseline, source = Side("baseline", params.baseline, runs / "baseline", True), "run for this release"
    ablations = [
        Side(f"ablation-{i}", name, runs / f"ablation-{i}", True) for i, name in enumerate(params.ablations, 1)
    ]
    return [baseline, Side("candidate", params.candidate, runs / "candidate", True), *ablations], source


def run_missing(
    side: Side,
    params: ReleaseParameters,
    suites: list[str],
    gate: str | None,
    progress: bool,
    say: Callable[[str], None],
    accept_sandbox_change: bool,
) -> Side:
    """Run the side's trials that its store does not hold yet (a store that exists is resumed); the side with the
    name its agent declares."""
    from ..engine import RunSpec, execute

    spec = RunSpec(suite=suites, agents=[side.agent], trials=params.trials, seed=params.seed, gate=gate)
    outcome = asyncio.run(
        execute(
            spec,
            side.run,
            resume=(side.run / DB_NAME).exists(),
            progress=progress,
            accept_sandbox_change=accept_sandbox_change,
            executor=params.executor,
            scheduler=params.scheduler,
        )
    )
    named = replace(side, name=outcome.names[side.agent])
    called = "" if named.name == side.agent else f" ({named.name})"
    say(f"{side.label} {side.agent}{called}: {outcome.ran} trial(s) run, {outcome.skipped} already stored")
    return named


def build_release(
    parameters: Path, progress: bool = True, say: Callable[[str], None] = print, accept_sandbox_change: bool = False
) -> Built:
    """Build the release the parameters file describes; return where its files are and the gate's colour."""
    parameters = Path(parameters).resolve()
    params, base = load_parameters(parameters)
    folder = base / params.release
    folder.mkdir(exist_ok=True)
    gate = str((base / params.gate).resolve()) if params.gate else None
    suites = [str((base / s).resolve()) for s in params.suites]
    plan, source = sides(params, base, parameters, folder)
    beside = [
        subprocess.Popen([sys.executable, "-m", f"forge_kernel.report.{module}", str(folder / cache), *suites])
        for module, cache in (("kill_rate", MUTANTS), ("judges", JUDGES))
    ]
    try:
        plan = [
            run_missing(side, params, suites, gate, progress, say, accept_sandbox_change) if side.run_here else side
            for side in plan
        ]
    except BaseException:
        for process in beside:
            process.kill()
        raise
    finally:
        for process in beside:
            process.wait()
    supersede_signoff(folder, say)
    by_label = {s.label: s for s in plan}

    def here(path) -> str:
        return os.path.relpath(path, folder)

    notebook = execute_template(
        folder,
        {
            "release": params.release,
            "baseline_source": source,
            "baseline_run": here(by_label["baseline"].run),
            "baseline_agent": by_label["baseline"].stored_as,
            "candidate_run": here(by_label["candidate"].run),
            "candidate_agent": by_label["candidate"].stored_as,
            "ablations": {s.stored_as: here(s.run) for s in plan if s.label.startswith("ablation-")},
            "gate_policy": here(gate) if gate else None,
            "suites": [here(s) for s in suites],
            "trials": params.trials,
            "triage": here(base / params.triage) if params.triage else None,
            "mutants_cache": MUTANTS,
            "judges_cache": JUDGES,
        },
        progress,
    )
    unsigned: dict = {"signatures": []}
    shown = with_signoff(notebook.read_text(encoding="utf-8"), unsigned, params.roles, NOTEBOOK)
    notebook.write_text(shown, encoding="utf-8")
    html = export_html(notebook, folder / HTML, unsigned, params.roles)
    shutil.copyfile(parameters, folder / PARAMETERS)
    record = {
        "parameters": PARAMETERS,
        "runs": {s.label: here(s.run) for s in plan},
        "agents": {s.label: s.stored_as for s in plan},
        "entries": {s.label: s.agent for s in plan},
        "roles": params.roles,
        "several_roles_per_reviewer": params.several_roles_per_reviewer,
        "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    (folder / RECORD).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    values = recorded(json.loads(notebook.read_text(encoding="utf-8")))
    return Built(folder, notebook, html, bool(values["green"]), values)


def supersede_signoff(folder: Path, say: Callable[[str], None]) -> None:
    """A rebuilt report needs new signatures: an earlier sign-off file is kept aside, never deleted."""
    old = folder / SIGNOFF
    if old.exists():
        kept = folder / f"signoff.superseded-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
        old.rename(kept)
        say(f"the report is rebuilt: its earlier sign-off is kept in {kept.name} and no longer applies")


def execute_template(folder: Path, parameters: dict, progress: bool) -> Path:
    """Execute the template into ``folder/release.ipynb`` (in that folder); a user's mistake that a cell meets
    (e.g. a gate policy other than the one declared) is one ForgeError line, as on the command line."""
    import papermill

    out = folder / NOTEBOOK
    try:
        papermill.execute_notebook(
            str(TEMPLATE),
            str(out),
            parameters=parameters,
            kernel_name="python3",
            cwd=str(folder),
            progress_bar=progress,
            log_output=False,
        )
    except papermill.PapermillExecutionError as exc:
        if exc.ename in {cls.__name__ for cls in all_subclasses(ForgeError)}:
            file, field, message = [*exc.evalue.split(": ", 2), "", ""][:3]
            raise ForgeError(file, field, message) from None
        raise
    return out


def all_subclasses(cls: type) -> set[type]:
    found: set[type] = set(cls.__subclasses__())
    return found | {sub for c in found for sub in all_subclasses(c)} | {cls}
