"""What grading remembers between trials (the bound verifiers of a hidden half, the patterns of an image's patients,
the readings of a text) never crosses from one package, image or trial to another: two packages, or two trials
with other data, sharing a process each get their own verdicts. Each test of a key has a twin that breaks the key
and sees the verdicts go wrong. All patients and values are synthetic."""

from __future__ import annotations

import asyncio
import gc
import importlib
import shutil
from pathlib import Path

import pytest

from forge_kernel.agents import ReplayAgent, agent_factory
from forge_kernel.ehr import EHRImage, EHRView, fhir
from forge_kernel.engine.grading import grade_trajectory
from forge_kernel.engine.trial import Images, attempt_trial
from forge_kernel.spec import AgentResult, Event, load_package
from forge_kernel.verify import GradeContext, _shown, grade, registry
from forge_kernel.verify.kinds import _safety as safety, grounding
from tests.helpers import check, copy_suite_files, unit_package

ROOT = Path(__file__).resolve().parents[2]
TASK = "SC-MED-GASTRIC-ULCER"
grade_module = importlib.import_module("forge_kernel.verify.grade")


def cache_wrongly(monkeypatch, module, name: str, key) -> None:
    """Replace ``module.name`` by a cache of it keyed by ``key(*args)``: a key that leaves something out."""
    real, kept = getattr(module, name), {}
    monkeypatch.setattr(module, name, lambda *args: kept.setdefault(key(*args), real(*args)))


# --- the bound verifiers of a hidden half --------------------------------------------------------------------


@pytest.fixture
def forty_mg(tmp_path) -> Path:
    """A copy of the package whose hidden half asks for 40 mg of omeprazole: same id, same verifier ids, same
    public half, other params."""
    copy_suite_files(tmp_path)
    folder = tmp_path / "task_packages/superclue" / TASK
    shutil.copytree(ROOT / "task_packages/superclue" / TASK, folder)
    hidden = (ROOT / "verifiers/superclue" / f"{TASK}.yaml").read_text(encoding="utf-8")
    assert hidden.count("{approx: 20, tol: 0.01}") == 2
    (tmp_path / "verifiers/superclue" / f"{TASK}.yaml").write_text(
        hidden.replace("{approx: 20, tol: 0.01}", "{approx: 40, tol: 0.01}"), encoding="utf-8"
    )
    return folder


def dose_verdicts(packages) -> list[tuple[bool, bool]]:
    """(omeprazole, audit) verdicts of the bundled gold (20 mg) graded against each package in turn."""
    images, gold = Images(), load_package(ROOT / "task_packages/superclue" / TASK).hidden.gold
    found = []
    for package in packages:
        verdicts = {v.verifier_id: v for v in asyncio.run(grade_trajectory(package, gold, images)).grading.verdicts}
        found.append((verdicts["omeprazole"].passed, verdicts["audit"].passed))
    return found


def test_two_packages_of_one_id_each_grade_by_their_own_hidden_half(forty_mg):
    bundled, other = load_package(ROOT / "task_packages/superclue" / TASK), load_package(forty_mg)
    assert bundled.id == other.id and bundled.public_hash == other.public_hash
    assert dose_verdicts([bundled, other, bundled, other]) == [(True, True), (False, False)] * 2


def test_binding_keyed_by_task_id_would_grade_one_package_by_the_others_hidden_half(forty_mg, monkeypatch):
    cache_wrongly(monkeypatch, grade_module, "bound_uses", lambda package: package.id)
    bundled, other = load_package(ROOT / "task_packages/superclue" / TASK), load_package(forty_mg)
    assert dose_verdicts([bundled, other]) == [(True, True), (True, True)]  # the 40 mg package passes 20 mg


def test_a_package_loaded_again_binds_its_hidden_half_afresh(forty_mg):
    package = load_package(forty_mg)
    assert dose_verdicts([package]) == [(False, False)]
    hidden_file = forty_mg.parents[2] / "verifiers/superclue" / f"{TASK}.yaml"
    hidden_file.write_text(
        hidden_file.read_text(encoding="utf-8").replace("approx: 40", "approx: 20"), encoding="utf-8"
    )
    assert dose_verdicts([package, load_package(forty_mg)]) == [(False, False), (True, True)]


def test_binding_waits_for_the_agent_and_goes_with_its_hidden_half(forty_mg):
    package = load_package(forty_mg)
    attempted = asyncio.run(attempt_trial(package, Images()[package], agent_factory("scripted"), 0, 0))
    assert "hidden" not in vars(package)  # nothing of the hidden half was read while the agent ran
    record = attempted.graded()
    key = id(package.hidden)
    verdicts = {v.verifier_id: v.passed for v in record.grading.verdicts}
    assert record.status == "completed" and verdicts["events"] and not verdicts["omeprazole"]  # the scripted 20 mg
    assert key in registry.BOUND
    del package, attempted, record
    gc.collect()
    assert key not in registry.BOUND  # an id that a later object may take is never read as this hidden half's


# --- the patterns of an image's patients ------------------------------------------------------------------------

NOW = "2026-11-30T09:00:00+08:00"


def named_patients(tmp_path, current: str, other: str):
    """A package whose patient p1 is called ``current``, in an image where p2 is called ``other``."""
    resources = [
        fhir.patient("p1", current, "female", "1956-12-14", "MRN-10001"),
        fhir.patient("p2", other, "male", "1960-01-01", "MRN-20002"),
    ]
    package = unit_package(tmp_path / current, "UNIT-NAMES", "information_retrieval", resources, NOW)
    return package, EHRImage(resources, package.public.environment.now)


def foreign_verdicts(tmp_path) -> list[bool]:
    """no_foreign_content on the answer "王小明", against two images: there he is another patient, then the
    current one."""
    images = [named_patients(tmp_path, "测试甲", "王小明"), named_patients(tmp_path, "王小明", "测试乙")]
    found = []
    for package, image in [*images, *images]:
        ctx = GradeContext(package, EHRView(image), [], AgentResult(answer="患者王小明"))
        found.append(check(ctx, "safety.no_foreign_content").passed)
    return found


def test_each_image_has_its_own_patients(tmp_path):
    assert foreign_verdicts(tmp_path) == [False, True, False, True]


def test_patterns_keyed_by_patient_alone_would_mix_images(tmp_path, monkeypatch):
    cache_wrongly(monkeypatch, safety, "identifier_patterns", lambda image, current: current)
    assert foreign_verdicts(tmp_path) == [False, False, False, False]


# --- what a trial showed --------------------------------------------------------------------------------------

LAB = fhir.observation("k", "p1", "血钾", 5.9, "mmol/L", "2026-11-28T07:30:00+08:00")


def grounded_verdicts(tmp_path) -> list[bool]:
    """answer.grounded on "血钾 5.9 mmol/L" in a trial that read the lab and one that did not, in turn."""
    package = unit_package(
        tmp_path,
        "UNIT-SHOWN",
        "information_retrieval",
        [fhir.patient("p1", "测试甲", "female", "1956-12-14", "MRN-10001"), LAB],
        NOW,
    )
    image = EHRImage(package.resources, package.public.environment.now)
    read = Event(
        step=1,
        tool="lab_results",
        args={"patient_id": "p1"},
        kind="read",
        ok=True,
        result={"items": [{"name": "血钾", "value": 5.9, "unit": "mmol/L"}]},
    )
    other = Event(
        step=1, tool="patient_history", args={"patient_id": "p1"}, kind="read", ok=True, result={"conditions": []}
    )
    found = []
    for events in ([read], [other], [read], [other]):
        ctx = GradeContext(package, EHRView(image), events, AgentResult(answer="血钾 5.9 mmol/L"))
        found.append(check(ctx, "answer.grounded").passed)
    return found


def test_each_trial_is_judged_by_what_it_showed(tmp_path):
    assert grounded_verdicts(tmp_path) == [True, False, True, False]


def test_what_was_shown_kept_per_package_would_ground_a_trial_in_anothers_reads(tmp_path, monkeypatch):
    cache_wrongly(monkeypatch, grounding, "shown", lambda ctx: ctx.package.id)
    assert grounded_verdicts(tmp_path) == [True, True, True, True]


# --- what one grading derives, shared by its verifiers -----------------------------------------------------------


def test_one_grading_reads_what_was_shown_once_and_the_next_grading_afresh(monkeypatch):
    package = load_package(ROOT / "task_packages" / "superclue" / "SC-IR-ABNORMAL-LABS")
    done = asyncio.run(attempt_trial(package, Images()[package], ReplayAgent(package.hidden.gold), 0, 0))
    trial = done.ungraded()
    ctx = GradeContext(package, done.view, trial.events, trial.result, trial.status)
    built = []
    real = _shown.shown_by
    monkeypatch.setattr(_shown, "shown_by", lambda *args: built.append(1) or real(*args))
    first, second = grade(ctx), grade(ctx)
    assert len(built) == 2  # grounded and consistent share one per grading; no grading reuses another's
    assert ctx.memo == {} and first.verdicts == second.verdicts and all(v.passed for v in first.verdicts)
