"""The Run handle: a run read once, a trial with its timeline and compact form, from a store copied alone."""

from __future__ import annotations

import asyncio
import json
import shutil

import jsonschema
import pytest

from forge_kernel import open_run
from forge_kernel.authoring.schemas import SCHEMA_DIR
from forge_kernel.engine import RunSpec, execute
from forge_kernel.spec.compact import SYNTHETIC_BANNER
from tests.helpers import copy_worked_examples


@pytest.fixture(scope="module")
def copied_alone(tmp_path_factory):
    """A run of the worked examples whose store was copied alone to a new folder; the packages are gone."""
    root = tmp_path_factory.mktemp("handle")
    suite = copy_worked_examples(root / "here")
    asyncio.run(
        execute(
            RunSpec(suite=[str(suite)], agents=["scripted", "unsafe-shortcut"], trials=2),
            root / "here" / "run",
            progress=False,
        )
    )
    (root / "there").mkdir()
    shutil.copy(root / "here" / "run" / "run.sqlite", root / "there" / "run.sqlite")
    shutil.rmtree(root / "here")
    return root / "there"


def test_a_trial_of_a_copied_store_has_its_timeline(copied_alone):
    with open_run(copied_alone) as run:
        trial = run.trial("SC-MED-GASTRIC-ULCER", "scripted", 1)
        line = trial.timeline
        order = next(e.step for e in trial.events if e.tool == "medication_request_create")
        created = line.diff(order - 1, order)
        assert [(d.rtype, d.status) for d in created] == [("MedicationRequest", "added")]
        assert line.diff(0, order - 1) == [] and line.diff(0, line.last_step) == created
        written = line.state(order).touched()
        assert list(written) == [("MedicationRequest", created[0].rid)]
        patient = run.package("SC-MED-GASTRIC-ULCER").public.environment.patient_id
        assert line.state(0)[("Patient", patient)]["id"] == patient  # the untouched rest, from the store's copy


def test_the_trial_table_is_read_once(copied_alone):
    with open_run(copied_alone) as run:
        assert run.trials is run.trials
        assert len(run.trials) == 12 and set(run.trials.agent) == {"scripted", "unsafe-shortcut"}
        assert run.agents == ["scripted", "unsafe-shortcut"]


def test_the_compact_trajectory_is_what_its_schema_says(copied_alone):
    schema = json.loads((SCHEMA_DIR / "compact-trajectory.schema.json").read_text(encoding="utf-8"))
    with open_run(copied_alone) as run:
        for agent in ("scripted", "unsafe-shortcut"):
            compact = json.loads(run.trial("SC-MED-GASTRIC-ULCER", agent, 0).compact().model_dump_json())
            jsonschema.validate(compact, schema)
            assert compact["banner"] == SYNTHETIC_BANNER
            assert len(compact["steps"]) == len(run.trial("SC-MED-GASTRIC-ULCER", agent, 0).events)
        ((key, resource),) = compact["resources"].items()
        assert key.startswith("MedicationRequest/") and resource["initial"] is None
        assert [step for step, _ in resource["versions"]] == [
            s["step"] for s in compact["steps"] if s["tool"] == "medication_request_create"
        ]
        assert any(not v["passed"] for v in compact["verdicts"])  # unsafe-shortcut fails its safety check


def test_a_run_shows_the_synthetic_banner(copied_alone):
    with open_run(copied_alone) as run:
        assert SYNTHETIC_BANNER.split(":")[0] in run._repr_html_()
        assert run.run_id in repr(run)
