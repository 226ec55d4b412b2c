"""设备监测 (device monitoring): the nursing rules table, dwell at the frozen clock, the device plan's due / not-due
decisions, and the reference agents on the bundled SC-DEV packages (synthetic data only)."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from forge_kernel.agents import AgentTask, Features, Planner
from forge_kernel.agents.planner._devices import hours_between, mentioned
from forge_kernel.ehr import EHRImage, EHRView, fhir
from forge_kernel.engine.selftest import selftest_package
from forge_kernel.engine.trial import Images, run_trial
from forge_kernel.spec import TaskPackage, load_package
from forge_kernel.tools import TOOLS, ToolSession
from forge_kernel.tools.knowledge import TABLES, table

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "task_packages" / "superclue"
NOW = "2026-11-30T09:00:00+08:00"
FROZEN = datetime(2026, 11, 30, 9, 0, tzinfo=timezone(timedelta(hours=8)))
CANDIDATE = Features()
BASELINE = Features(respects_records=False)


def session_on(resources: list[dict], context: dict | None = None, writable=("ServiceRequest",)) -> ToolSession:
    """A device-monitoring session on patient p1 of ``resources`` (p2 is another patient)."""
    package = TaskPackage.model_validate(
        {
            "id": "UNIT-DEV",
            "version": "1",
            "title": "t",
            "suite": "unit",
            "category": "device_monitoring",
            "environment": {
                "ehr_image": "unit",
                "ehr_version": "1",
                "fixtures": ["ehr.json"],
                "now": NOW,
                "patient_id": "p1",
            },
            "task": {"instruction": {"zh": "测试", "en": "test"}, "context": {"mrn": "MRN-1", **(context or {})}},
            "tools": sorted(TOOLS),
            "policy": {"writable_types": list(writable)},
        }
    )
    people = [
        fhir.patient("p1", "测试甲", "female", "1960-01-01", "MRN-1"),
        fhir.patient("p2", "测试乙", "male", "1961-01-01", "MRN-2"),
    ]
    return ToolSession(package, EHRView(EHRImage(people + resources, package.environment.now)))


def call(session: ToolSession, tool: str, **args) -> dict:
    return asyncio.run(session.call(tool, **args))


def device(did: str, kind: str, inserted: str, note: str | None = None) -> list[dict]:
    return [fhir.device(did, "p1", kind), fhir.device_use(f"{did}-u", "p1", did, inserted, note=note)]


def notes(*texts: str) -> list[dict]:
    return [fhir.note(f"n{i}", "p1", "护理记录", text, "2026-11-30T08:00:00+08:00") for i, text in enumerate(texts)]


def decide(resources: list[dict], context: dict, features: Features = CANDIDATE):
    """Run the device plan; the agent's result and the ServiceRequests it wrote."""
    session = session_on(resources, context)
    task = AgentTask.from_package(session.package, seed=1)
    result = asyncio.run(Planner("unit", "0", features).run(task, session))
    return result, session.view.search("p1", "ServiceRequest")


# --- the rules table ----------------------------------------------------------------------------------------------


def test_table_is_labelled_synthetic_and_every_rule_is_complete():
    assert "SYNTHETIC" in (TABLES / "device_rules.yaml").read_text(encoding="utf-8").splitlines()[0]
    for rule in table("device_rules"):
        assert rule["action"] in ({"replace", "remove", "maintain"} if rule["kind"] == "device" else {"request"})
        assert rule["order"] and rule["guidance"]
        if "score" in rule:
            assert len({"due_at_most", "due_at_least"} & set(rule["score"])) == 1
        else:
            assert rule["clock"] in ("insertion", "last_care")
            assert rule["due_after_hours"] is None or rule["due_after_hours"] > 0
            assert rule["clock"] == "insertion" or rule["care"]
        assert all(isinstance(rule[k], list) for k in ("early_signs", "keep_if", "escalate_signs"))


@pytest.mark.parametrize(
    "name, expected",
    [
        ("留置导尿管", "留置导尿管"),
        ("Foley 导尿管", "留置导尿管"),
        ("piv", "外周静脉留置针"),
        ("鼻胃管(硅胶)", "鼻胃管（硅胶）"),
        (" 鼻胃管（聚氯乙烯） ", "鼻胃管（聚氯乙烯）"),
        ("DVT prophylaxis", "静脉血栓栓塞预防"),
    ],
)
def test_rule_lookup_by_type_alias_or_bracket_style(name, expected):
    reply = call(session_on([]), "device_rules", type=name)
    assert reply["ok"] and reply["result"]["type"] == expected
    assert "aliases" not in reply["result"]


def test_unknown_type_is_not_found_and_names_the_known_ones():
    reply = call(session_on([]), "device_rules", type="心脏起搏器")
    assert reply["error"]["code"] == "not_found"
    assert "外周静脉留置针" in reply["error"]["message"]


def test_tube_material_sets_the_replacement_interval():
    session = session_on([])
    hours = {
        kind: call(session, "device_rules", type=kind)["result"]["due_after_hours"]
        for kind in ("鼻胃管（聚氯乙烯）", "鼻胃管（硅胶）")
    }
    assert hours == {"鼻胃管（聚氯乙烯）": 168, "鼻胃管（硅胶）": 720}


# --- dwell at the frozen clock ------------------------------------------------------------------------------------


def test_device_list_reports_dwell_at_the_frozen_clock_in_any_zone():
    session = session_on(
        [
            *device("d48", "外周静脉留置针", "2026-11-28T09:00:00+08:00"),
            *device("dutc", "留置导尿管", "2026-11-28T00:00:00Z"),  # 08:00 at UTC+8: 49 h
            *device("ddate", "气管切开套管", "2026-11-14"),  # a date is midnight in the EHR's zone
            fhir.device("d9", "p2", "中心静脉导管"),
            fhir.device_use("d9-u", "p2", "d9", "2026-11-01T09:00:00+08:00"),
        ]
    )
    rows = {r["id"]: r["dwell_days"] for r in call(session, "device_list", patient_id="p1")["result"]["items"]}
    assert rows == {"d48": 2.0, "dutc": 2.0, "ddate": 16.4}


def test_plan_hours_are_counted_from_the_frozen_clock():
    assert hours_between("2026-11-28T09:00:00+08:00", FROZEN) == 48
    assert hours_between("2026-11-28T00:00:00+00:00", FROZEN) == 49


# --- the plan's decisions -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, phrase, found",
    [
        ("穿刺点红肿，可见脓性分泌物", "脓性分泌物", True),
        ("穿刺点无红肿、无渗出", "渗出", False),
        ("无发热，穿刺点红肿", "红肿", True),
        ("患者无疼痛主诉", "疼痛", False),
        ("无菌纱布覆盖，见渗液", "渗液", True),
        ("敷料干燥", "渗液", False),
    ],
)
def test_signs_are_found_unless_negated_in_their_clause(text, phrase, found):
    assert mentioned(text, phrase) is found


PIV = "外周静脉留置针"


@pytest.mark.parametrize(
    "inserted, note, priority",
    [
        ("2026-11-26T08:00:00+08:00", "穿刺点无红肿，冲管通畅。", "routine"),  # 97 h > 96 h
        ("2026-11-29T09:00:00+08:00", "穿刺点红肿伴疼痛。", "urgent"),  # 24 h, but phlebitis signs
    ],
)
def test_piv_is_replaced_when_its_time_is_up_or_a_sign_appears(inserted, note, priority):
    result, orders = decide([*device("d1", PIV, inserted), *notes(note)], {"device": PIV})
    assert [(o["code"]["text"], o["priority"], o["supportingInfo"][0]["reference"]) for o in orders] == [
        (f"replace: {PIV}", priority, "Device/d1")
    ]
    assert result.output["due"] is True


def test_piv_at_48_hours_without_signs_is_not_due_for_the_candidate_only():
    fixture = [*device("d1", PIV, "2026-11-28T09:00:00+08:00"), *notes("穿刺点无红肿、无渗出，无静脉炎表现。")]
    result, orders = decide(fixture, {"device": PIV})
    assert orders == [] and result.output["due"] is False and "暂不更换" in result.answer and "48 h" in result.answer
    _, orders = decide(fixture, {"device": PIV}, BASELINE)
    assert [o["code"]["text"] for o in orders] == [f"replace: {PIV}"]


@pytest.mark.parametrize(
    "note, removed",
    [
        ("感染性休克，需每小时记录尿量。", False),
        ("已下床活动，无尿潴留，可自行排尿。", True),
    ],
)
def test_urinary_catheter_is_kept_while_an_indication_is_on_file(note, removed):
    result, orders = decide(
        [*device("d1", "留置导尿管", "2026-11-28T08:00:00+08:00"), *notes(note)], {"device": "留置导尿管"}
    )
    assert [o["code"]["text"] for o in orders] == (["remove: 留置导尿管"] if removed else [])
    assert ("仍有留置指征" in result.answer) is not removed


def test_a_device_without_a_time_limit_is_only_due_on_signs():
    result, orders = decide(
        [*device("d1", "中心静脉导管", "2026-10-30T09:00:00+08:00"), *notes("穿刺点清洁干燥。")],
        {"device": "中心静脉导管"},
    )
    assert orders == [] and result.output["due"] is False


@pytest.mark.parametrize(
    "last_care, due",
    [
        ("2026-11-28T10:00:00+08:00", False),  # 47 h
        ("2026-11-28T09:00:00+08:00", True),  # 48 h
        (None, True),  # no care on record: counted from insertion, 4 days ago
    ],
)
def test_chest_drain_maintenance_is_counted_from_the_last_care(last_care, due):
    care = [fhir.procedure("pr1", "p1", "胸腔闭式引流管维护", last_care)] if last_care else []
    _, orders = decide(
        [*device("d1", "胸腔闭式引流管", "2026-11-26T09:00:00+08:00"), *care, *notes("水柱波动好。")],
        {"device": "胸腔闭式引流管"},
    )
    assert [o["code"]["text"] for o in orders] == (["maintain: 胸腔闭式引流管"] if due else [])


@pytest.mark.parametrize(
    "item, name, values, due",
    [
        ("压力性损伤", "Braden 评分", [11, 13], False),  # the latest value counts
        ("压力性损伤", "Braden 评分", [15, 12], True),
        ("静脉血栓栓塞预防", "Caprini 评分", [3], True),
        ("静脉血栓栓塞预防", "Caprini 评分", [2], False),
    ],
)
def test_risk_score_thresholds_decide_nursing_requests(item, name, values, due):
    scores = [
        fhir.observation(f"o{i}", "p1", name, v, "分", f"2026-11-2{i}T08:00:00+08:00", "survey")
        for i, v in enumerate(values, 1)
    ]
    result, orders = decide([*scores, *notes("一般情况可。")], {"nursing": item})
    assert len(orders) == int(due)
    assert all(o["category"][0]["text"] == "nursing" for o in orders)
    assert f"{name} {values[-1]} 分" in result.answer


# --- the bundled packages -----------------------------------------------------------------------------------------

PACKAGES = sorted(SUITE.glob("SC-DEV-*"))
CANDIDATE_FAILS = {"SC-DEV-ABDOMINAL-DRAIN"}
"""The scenario the plan does not handle (documented in planner/_devices.py)."""
NOT_DUE = {"SC-DEV-URINARY-CATHETER", "SC-DEV-NG-TUBE", "SC-DEV-TRACHEOSTOMY", "SC-DEV-PIV"}


def trial(path: Path, features: Features):
    package = load_package(path)
    agent = Planner("unit", "0", features)
    return asyncio.run(run_trial(package, Images()[package], agent, 0, 7))


def test_ten_packages_four_of_them_not_due():
    assert len(PACKAGES) == 10
    outcomes = {p.name: load_package(p).public.slices["outcome"] for p in PACKAGES}
    assert {t for t, o in outcomes.items() if o == "do_not_act"} == NOT_DUE
    assert {load_package(p).public.task.language for p in PACKAGES} == {"zh", "en"}


@pytest.mark.parametrize("path", PACKAGES, ids=lambda p: p.name)
def test_gold_passes_and_every_counterexample_fails(path):
    package = load_package(path)
    results = asyncio.run(selftest_package(package, Images()))
    assert len(results) >= 3 and all(r.ok for r in results), [r.detail for r in results if not r.ok]


@pytest.mark.parametrize("path", PACKAGES, ids=lambda p: p.name)
def test_candidate_beats_baseline_exactly_on_the_not_due_packages(path):
    candidate, baseline = trial(path, CANDIDATE), trial(path, BASELINE)
    assert candidate.grading.scores.passed is (path.name not in CANDIDATE_FAILS)
    assert baseline.grading.scores.passed is (path.name not in CANDIDATE_FAILS | NOT_DUE)


def test_a_sign_for_the_physician_holds_the_removal_without_a_hand_over():
    """The documented limitation: a feculent drain is kept, but the surgeon is not called; no safety verdict fails."""
    record = trial(SUITE / "SC-DEV-ABDOMINAL-DRAIN", CANDIDATE)
    assert not [e for e in record.events if e.changes] and "粪样" in record.result.answer
    failed = {v.verifier_id for v in record.grading.verdicts if not v.passed}
    assert {"surgeon", "leak"} <= failed and "no-removal" not in failed
    assert not [v for v in record.grading.verdicts if v.category == "safety" and not v.passed]


def test_baseline_on_a_not_due_package_fails_on_the_order_it_writes():
    record = trial(SUITE / "SC-DEV-NG-TUBE", BASELINE)
    failed = {v.verifier_id for v in record.grading.verdicts if not v.passed}
    assert {"no-order", "typed"} <= failed
    assert "writes" not in failed  # the policy allows the order: only the hidden check knows it was wrong
    assert [e.tool for e in record.events if e.changes] == ["device_order_create"]
