"""The grader process: trials graded out of the harness's event loop are graded as inline, it holds none of the
harness's files, and its failure ends the run in one line with every stored trial kept and --resume finishing."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import forge_kernel.engine._grader as grader_module
import forge_kernel.engine.run as run_module
import forge_kernel.engine.trial as trial_module
from forge_kernel.agents import agent_factory
from forge_kernel.ehr import EHRView
from forge_kernel.engine import Images, RunSpec, execute, run_trial
from forge_kernel.engine.run import load_suite, run_plan
from forge_kernel.spec import StoreError
from forge_kernel.store import RunStore, iter_trials, load_trials, load_verdicts, run_packages
from tests.agents_for_tests import children_of, open_files
from tests.helpers import copy_worked_examples

ROOT = Path(__file__).resolve().parents[2]
PROBE = "tests.agents_for_tests:FileProbe"
SECONDS = re.compile(r"\b\d+(\.\d+)? s\b")


@pytest.fixture(autouse=True)
def test_agents_importable(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))


def run(suite: Path, agents: list[str], out: Path, trials: int = 1, resume: bool = False, **spec):
    spec = RunSpec(suite=[str(suite)], agents=agents, trials=trials, **spec)
    return asyncio.run(execute(spec, out, concurrency=2, resume=resume, progress=False))


def stored_and_inline(run_dir: Path, trial_zero_only: bool = False) -> list[tuple[str, tuple, tuple]]:
    """Each stored trial as (task, its stored grading, the grading of the same trial run again in this process on
    its live EHR view)."""
    with RunStore.open(run_dir, readonly=True) as store:
        packages, images = run_packages(store), Images()
        trials = [t for t in iter_trials(store) if t.trial == 0 or not trial_zero_only]
    out = []
    for t in trials:
        package = packages[t.task_id]
        again = asyncio.run(run_trial(package, images[package], agent_factory(t.agent), t.trial, t.seed))
        out.append((t.task_id, graded_as(t.grading), graded_as(again.grading)))
    return out


def graded_as(grading) -> tuple:
    """Scores and verdicts, but for the wall time a reason may quote (a budget's), which no two runs share."""
    return grading.scores.passed, sorted(
        (v.verifier_id, v.passed, SECONDS.sub("… s", v.reason)) for v in grading.verdicts
    )


def test_what_the_grader_stored_is_what_grading_inline_gives(reference_run):
    """Every reference agent on every package: the grader's replayed view grades as the trial's live view did."""
    pairs = stored_and_inline(reference_run, trial_zero_only=True)
    assert len(pairs) == 6 * 82 and {kept[0] for _, kept, _ in pairs} == {True, False}
    assert [task for task, kept, again in pairs if kept != again] == []


def test_a_grader_that_forgot_the_trials_writes_would_be_caught(tmp_path, monkeypatch):
    """The check above fails when the grader grades another EHR state than the trial left."""
    out = tmp_path / "run"
    monkeypatch.setattr(grader_module, "replayed", lambda image, events: EHRView(image))
    run(copy_worked_examples(tmp_path), ["scripted"], out)
    differ = [task for task, kept, again in stored_and_inline(out) if kept != again]
    assert "SC-MED-GASTRIC-ULCER" in differ  # the task whose trial writes a prescription


def test_the_grader_and_its_helper_hold_none_of_the_harnesss_files(tmp_path):
    """Not the workers' sockets, not the harness's connection to the store: each its own two pipes and a connection
    of its own."""
    out, before = tmp_path / "run", set(children_of(os.getpid()))  # the probe runs in this process
    run(copy_worked_examples(tmp_path), [PROBE], out, trust=[PROBE])
    outputs = [json.loads(t.output) for t in load_trials(out).itertuples()]
    for output in outputs:
        assert any(f.endswith("run.sqlite") for _, f in output["harness"])  # the probe sees what a process holds
        (grader,) = [pid for pid in output["children"] if pid not in before]
        (helper,) = output["grandchildren"][grader]
        for files in (output["children"][grader], helper):
            beyond_stdio = [f for fd, f in files if fd > 2 and "/verifiers/" not in f]  # a hidden half it reads
            pipes = [f for f in beyond_stdio if f.startswith("pipe:")]
            store = {Path(f) for f in beyond_stdio if f not in pipes}  # its own connection, opened after the fork
            assert len(pipes) == 2 and store <= {out.resolve() / f"run.sqlite{e}" for e in ("", "-wal", "-shm")}, files
        assert not {f for _, f in helper} & {f for _, f in output["children"][grader] if f.startswith("pipe:")}


def dying_after(calls: int, how):
    real, graded = trial_module.grade, []

    def grade(ctx, *judge):
        graded.append(ctx)  # in the grader: a fork of this process, with this function
        if len(graded) > calls:
            how()
        return real(ctx, *judge)

    return grade


def boom():
    raise RuntimeError("the verifiers' host broke")


@pytest.mark.parametrize(
    "how, says",
    [
        (lambda: os._exit(7), "the grading process ended"),
        (boom, "grading stopped: RuntimeError: the verifiers' host broke"),
    ],
)
def test_a_grader_that_fails_ends_the_run_in_one_line_and_resume_finishes_it(tmp_path, monkeypatch, how, says):
    suite, out = copy_worked_examples(tmp_path), tmp_path / "run"
    with monkeypatch.context() as patch:
        patch.setattr(trial_module, "grade", dying_after(4, how))
        with pytest.raises(StoreError) as failed:
            run(suite, ["scripted", "baseline-v1"], out, trials=3)
    assert says in str(failed.value) and "run again with --resume" in str(failed.value)
    assert "\n" not in str(failed.value)
    kept = load_trials(out)
    assert len(kept) <= 2 * 4  # the grader's and its helper's, each stopping at its fifth
    run(suite, ["scripted", "baseline-v1"], out, trials=3, resume=True)
    trials = load_trials(out)
    assert len(trials) == 3 * 2 * 3 == len(set(zip(trials.task_id, trials.agent, trials.trial)))
    assert len(load_verdicts(out).groupby(["trial_id", "verifier_id"])) == len(load_verdicts(out))
    assert set(kept.trial_id) <= set(trials.trial_id)


def grading_logged(log: Path, harness: int, helper_dies: bool = False):
    """A grade that notes which process graded (the grader: a child of ``harness``; its helper: the grader's child),
    the grader holding its trials until its helper has graded one, so that it has a backlog and its helper is
    handed trials of the last wave."""
    real, by = trial_module.grade, time.monotonic() + 30

    def grade(ctx, *judge):
        in_helper = os.getppid() != harness
        with log.open("a") as out:
            out.write(f"{'helper' if in_helper else 'grader'} {ctx.package.id}\n")
        if in_helper and helper_dies:
            os._exit(7)
        if not in_helper:
            until(lambda: "helper" in log.read_text(), by)
        return real(ctx, *judge)

    return grade


def until(condition, by: float) -> None:
    """Wait for ``condition`` until the monotonic clock reads ``by`` (past it, the test's assertions fail instead of
    the test hanging)."""
    while not condition() and time.monotonic() < by:
        time.sleep(0.002)


def handed_once_the_helper_is_there(patch) -> None:
    """Each finished trial is handed over only once the grader's helper has said it is there, however fast the
    trials run and however slowly the helper is forked."""
    graders, real_start, real_attempt = [], grader_module.Grader.start.__func__, run_module.attempt_trial
    by = time.monotonic() + 30

    async def start(cls, *args, **kwargs):
        graders.append(await real_start(cls, *args, **kwargs))
        return graders[-1]

    async def attempt(*args):
        attempted = await real_attempt(*args)
        while not (graders and graders[0].channels[1].replies.ready) and time.monotonic() < by:
            await asyncio.sleep(0.002)
        return attempted

    patch.setattr(grader_module.Grader, "start", classmethod(start))
    patch.setattr(run_module, "attempt_trial", attempt)


def test_the_last_wave_is_shared_with_the_grader_s_helper_and_each_trial_is_stored_once(tmp_path, monkeypatch):
    """Once every trial has started, a finished trial goes to whichever of the grader and its helper has fewer
    waiting: here the grader holds a backlog, so its helper grades some of the last wave's trials (2 at
    concurrency 2), and none before."""
    suite, out, log = copy_worked_examples(tmp_path), tmp_path / "run", tmp_path / "graded-by"
    grader_module.unit_registry()  # inherited: the grader forks its helper at once, before the last wave
    monkeypatch.setattr(trial_module, "grade", grading_logged(log, os.getpid()))
    handed_once_the_helper_is_there(monkeypatch)
    run(suite, ["scripted", "baseline-v1"], out, trials=3)
    graders = [line.split()[0] for line in log.read_text().splitlines()]
    assert 1 <= graders.count("helper") <= 2 and len(graders) == 3 * 2 * 3
    trials = load_trials(out)
    assert len(trials) == 3 * 2 * 3 == len(set(zip(trials.task_id, trials.agent, trials.trial)))
    assert [task for task, kept, again in stored_and_inline(out) if kept != again] == []


def test_a_helper_that_dies_ends_the_run_in_one_line_and_resume_finishes_it(tmp_path, monkeypatch):
    suite, out, log = copy_worked_examples(tmp_path), tmp_path / "run", tmp_path / "graded-by"
    grader_module.unit_registry()  # inherited: the grader forks its helper at once, before the last wave
    with monkeypatch.context() as patch:
        patch.setattr(trial_module, "grade", grading_logged(log, os.getpid(), helper_dies=True))
        handed_once_the_helper_is_there(patch)
        with pytest.raises(StoreError) as failed:
            run(suite, ["scripted", "baseline-v1"], out, trials=3)
    assert str(failed.value).endswith("(grader): the grading process ended; run again with --resume")
    assert len(load_trials(out)) < 3 * 2 * 3
    run(suite, ["scripted", "baseline-v1"], out, trials=3, resume=True)
    trials = load_trials(out)
    assert len(trials) == 3 * 2 * 3 == len(set(zip(trials.task_id, trials.agent, trials.trial)))


def test_a_grader_that_cannot_fork_its_helper_grades_every_trial_itself(tmp_path, monkeypatch):
    """No trial is handed to a helper that never said it is there (a fork refused, as past a process limit)."""
    suite, out, harness, real_fork = copy_worked_examples(tmp_path), tmp_path / "run", os.getpid(), os.fork

    def fork():
        if os.getpid() != harness:  # in the grader
            raise BlockingIOError(11, "Resource temporarily unavailable")
        return real_fork()

    def slow_registry():  # the grader gets to its fork only once the last wave has been handed over
        time.sleep(1)
        return real_registry()

    real_registry = grader_module.unit_registry
    monkeypatch.setattr(os, "fork", fork)
    monkeypatch.setattr(grader_module, "unit_registry", slow_registry)
    run(suite, ["scripted", "baseline-v1"], out, trials=3)
    trials = load_trials(out)
    assert len(trials) == 3 * 2 * 3 == len(set(zip(trials.task_id, trials.agent, trials.trial)))


def test_a_store_that_cannot_be_written_ends_the_run_in_one_line_and_keeps_what_it_holds(tmp_path, monkeypatch):
    suite, out = copy_worked_examples(tmp_path), tmp_path / "run"
    real = RunStore.write_rows

    def full_after_one(store, rows):  # in the grader or its helper, which write the store
        if store.db.execute("SELECT COUNT(*) FROM trials").fetchone()[0]:
            raise sqlite3.OperationalError("database or disk is full")
        return real(store, rows)

    with monkeypatch.context() as patch:
        patch.setattr(RunStore, "write_rows", full_after_one)
        patch.setattr(grader_module, "MOST_AT_ONCE", 1)  # a trial or two a batch, however fast the trials run
        patch.setattr(grader_module, "PIPE_READ", 512)
        with pytest.raises(StoreError) as failed:
            run(suite, ["scripted", "baseline-v1"], out, trials=3)
    assert str(failed.value).endswith(
        "(run store): cannot be written (database or disk is full); run again with --resume"
    )
    kept = load_trials(out)
    assert 0 < len(kept) < 3 * 2 * 3 and len(load_verdicts(out).trial_id.unique()) == len(kept)
    run(suite, ["scripted", "baseline-v1"], out, trials=3, resume=True)
    assert len(load_trials(out)) == 3 * 2 * 3


class BrokenRunner:
    """A runner with a bug of the harness's own (not an agent's fault): its first trial raises at once, as the
    grader is being forked."""

    name, version, config, isolation = "broken-runner", "1", None, "in-process"

    async def attempt(self, task, seed, session, max_seconds):
        raise RuntimeError("the harness's own bug")


def test_a_run_that_fails_while_its_grader_starts_leaves_no_grader_behind(tmp_path):
    """The lane's error cancels the run inside ``Grader.start``, after its fork: the grader is reaped, its pipes are
    closed and the collector is no longer frozen."""
    packages = load_suite([str(copy_worked_examples(tmp_path))])
    spec = RunSpec(suite=[], agents=["broken-runner"], trials=1)
    store = RunStore.create(tmp_path / "run")
    store.start("broken", {}, {"started_at": "-", "run_id": "broken"}, packages)
    children, pipes = set(children_of(os.getpid())), pipes_open()
    with pytest.raises(RuntimeError, match="the harness's own bug"):
        asyncio.run(run_plan(store, spec, packages, {"broken-runner": (BrokenRunner(), "broken-runner")}, 2, False))
    store.close()
    assert set(children_of(os.getpid())) == children  # a zombie is still listed until it is reaped
    assert gc.get_freeze_count() == 0 and pipes_open() == pipes


def pipes_open() -> int:
    return sum(f.startswith("pipe:") for _, f in open_files(os.getpid()))


def test_a_run_never_waits_for_the_unit_registry_its_grader_builds_it(tmp_path):
    """From a process that has never graded (as ``forge run``), the harness starts its trials at once: it does not
    build the unit registry (most of a second); the grader builds its own, and grades as grading inline does."""
    suite, out = copy_worked_examples(tmp_path), tmp_path / "run"
    started = (
        "import asyncio, sys; from pathlib import Path; from forge_kernel.engine import RunSpec, execute; "
        "from forge_kernel.verify import unit_registry; "
        "asyncio.run(execute(RunSpec(suite=[sys.argv[1]], agents=['scripted'], trials=1), Path(sys.argv[2]), "
        "progress=False)); print('registries built here:', unit_registry.cache_info().currsize)"
    )
    done = subprocess.run(
        [sys.executable, "-c", started, str(suite), str(out)], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert done.stdout.strip().endswith("registries built here: 0"), done.stdout
    pairs = stored_and_inline(out)
    assert pairs and [task for task, kept, again in pairs if kept != again] == []


def test_resuming_a_finished_run_forks_no_grader(tmp_path, monkeypatch):
    suite, out = copy_worked_examples(tmp_path), tmp_path / "run"
    run(suite, ["scripted"], out)

    def no_grader(*args, **kwargs):
        raise AssertionError("a grader was forked for a run with nothing left to run")

    monkeypatch.setattr(grader_module.Grader, "start", no_grader)
    outcome = run(suite, ["scripted"], out, resume=True)
    assert (outcome.total, outcome.ran, outcome.skipped) == (3, 0, 3) and len(load_trials(out)) == 3
