"""EHR layer: image indexes, copy-on-write views, JSON-Patch changes, diffs and replay (synthetic data only)."""

from __future__ import annotations

import copy
import random
from datetime import UTC, datetime, timedelta, timezone

import pytest

from forge_kernel.ehr import EHRImage, EHRView, Timeline, fhir
from forge_kernel.ehr.patch import apply_op, escape, resource_key, revert_op

TZ8 = timezone(timedelta(hours=8))
NOW = datetime(2026, 11, 30, 9, 0, tzinfo=TZ8)
LOINC = "http://loinc.org"


def ts(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def sbp(oid: str, pid: str, value: float, time: str) -> dict:
    """A systolic blood pressure whose code, display and text all differ."""
    obs = fhir.observation(oid, pid, "收缩压", value, "mmHg", time, category="vital-signs")
    obs["code"] = {
        "text": "收缩压",
        "coding": [{"system": LOINC, "code": "8480-6", "display": "Systolic blood pressure"}],
    }
    return obs


@pytest.fixture
def resources() -> list[dict]:
    return [
        fhir.patient("p1", "测试甲", "female", "1970-05-01", "MRN-1"),
        fhir.patient("p2", "测试乙", "male", "1980-01-01", "MRN-2"),
        sbp("o-late", "p1", 150, "2026-11-29T08:00:00+08:00"),
        sbp("o-early", "p1", 130, "2026-11-01T08:00:00+08:00"),
        fhir.observation("o-hr", "p1", "心率", 88, "/min", "2026-11-15T08:00:00+08:00", "vital-signs", "8867-4"),
        sbp("o-other", "p2", 170, "2026-11-20T08:00:00+08:00"),
        fhir.condition("c1", "p1", "胃溃疡", "2026-10-01"),
        fhir.allergy("a1", "p1", "青霉素", "皮疹", "2010-01-01"),
        fhir.family_history("f1", "p1", "母亲", "高血压"),
    ]


@pytest.fixture
def image(resources) -> EHRImage:
    return EHRImage(resources, NOW)


def ids(found) -> list[str]:
    return [r["id"] for r in found]


# --- image indexes ------------------------------------------------------------------------------------------------


def test_search_by_patient_and_type_is_scoped_and_oldest_first(image):
    view = EHRView(image)
    assert ids(view.search("p1", "Observation")) == ["o-early", "o-hr", "o-late"]
    assert ids(view.search("p2", "Observation")) == ["o-other"]
    assert ids(view.search("p1", "Condition")) == ["c1"]
    assert view.search("p2", "Condition") == []
    assert view.search("nobody", "Observation") == []
    assert image.patient_ids == ["p1", "p2"]


@pytest.mark.parametrize("code", ["8480-6", "Systolic blood pressure", "SYSTOLIC BLOOD PRESSURE", "收缩压"])
def test_search_by_code_matches_code_display_and_text_case_insensitively(image, code):
    assert ids(EHRView(image).search("p1", "Observation", code=code)) == ["o-early", "o-late"]


def test_search_by_code_excludes_other_concepts_and_patients(image):
    view = EHRView(image)
    assert ids(view.search("p1", "Observation", code="8867-4")) == ["o-hr"]
    assert view.search("p1", "Observation", code="2345-7") == []
    assert ids(view.search("p2", "Observation", code="8480-6")) == ["o-other"]


def test_time_window_respects_time_zones_and_is_inclusive():
    """The same local hour in different zones is a different instant; values without a zone use the image's zone."""
    rows = [
        ("utc", "2026-11-30T00:30:00Z"),  # 08:30 +08:00: inside
        ("tokyo", "2026-11-30T09:30:00+09:00"),  # 08:30 +08:00: inside (equal instant to utc)
        ("utc-5", "2026-11-29T19:45:00-05:00"),  # 08:45 +08:00: inside
        ("naive", "2026-11-30T02:00:00"),  # read as +08:00 -> 02:00 +08:00: outside (as UTC it would be inside)
        ("date-only", "2026-11-30"),  # midnight +08:00: outside (as UTC midnight it would be inside)
        ("berlin", "2026-11-30T02:00:00+01:00"),  # 09:00 +08:00: exactly `until`, inside
        ("late", "2026-11-30T01:00:01Z"),  # 09:00:01 +08:00: outside
        ("start", "2026-11-30T08:00:00+08:00"),  # exactly `since`, inside
    ]
    image = EHRImage(
        [
            fhir.patient("p1", "甲", "female", "1970-01-01", "M1"),
            *(fhir.observation(oid, "p1", "体温", 37.0, "Cel", t) for oid, t in rows),
        ],
        NOW,
    )
    since, until = ts("2026-11-30T08:00:00+08:00"), ts("2026-11-30T09:00:00+08:00")
    found = set(ids(EHRView(image).search("p1", "Observation", since=since, until=until)))
    assert found == {"utc", "tokyo", "utc-5", "berlin", "start"}


def test_time_window_with_only_one_bound(image):
    view = EHRView(image)
    mid = ts("2026-11-15T08:00:00+08:00")
    assert ids(view.search("p1", "Observation", since=mid)) == ["o-hr", "o-late"]
    assert ids(view.search("p1", "Observation", until=mid)) == ["o-early", "o-hr"]


def test_resources_without_a_date_are_found_only_without_a_window(image):
    view = EHRView(image)
    assert ids(view.search("p1", "FamilyMemberHistory")) == ["f1"]
    assert view.search("p1", "FamilyMemberHistory", since=0.0) == []
    assert view.search("p1", "FamilyMemberHistory", until=ts("2100-01-01T00:00:00+00:00")) == []


def test_search_over_a_thousand_observations_matches_brute_force():
    rng = random.Random(7)
    codes = [
        ("8480-6", "Systolic blood pressure", "收缩压"),
        ("8867-4", "Heart rate", "心率"),
        ("2345-7", "Glucose", "血糖"),
    ]
    zones = [UTC, TZ8, timezone(timedelta(hours=-5)), timezone(timedelta(hours=5, minutes=30))]
    start = datetime(2026, 1, 1, tzinfo=UTC)
    resources = [
        fhir.patient("p1", "甲", "female", "1970-01-01", "M1"),
        fhir.patient("p2", "乙", "male", "1971-01-01", "M2"),
    ]
    for i in range(1500):
        code, display, text = rng.choice(codes)
        moment = (start + timedelta(minutes=rng.randrange(0, 300 * 24 * 60))).astimezone(rng.choice(zones))
        obs = fhir.observation(
            f"o{i}", rng.choice(["p1", "p1", "p1", "p2"]), text, rng.randint(50, 200), "x", moment.isoformat()
        )
        obs["code"]["coding"] = [{"system": LOINC, "code": code, "display": display}]
        resources.append(obs)
    rng.shuffle(resources)
    image = EHRImage(resources, NOW)
    view = EHRView(image)
    assert len(view.search("p1", "Observation")) > 1000

    since, until = ts("2026-03-10T00:00:00+08:00"), ts("2026-07-01T12:00:00-05:00")

    def brute(query: str) -> list[str]:
        hits = []
        for r in resources:
            if r["resourceType"] != "Observation" or r["subject"]["reference"] != "Patient/p1":
                continue
            concept = r["code"]
            names = {concept["text"].lower()} | {c[k].lower() for c in concept["coding"] for k in ("code", "display")}
            when = datetime.fromisoformat(r["effectiveDateTime"]).timestamp()
            if query.lower() in names and since <= when <= until:
                hits.append((when, r["id"]))
        return [rid for _, rid in sorted(hits)]

    for query in ("8480-6", "heart RATE", "血糖"):
        expected = brute(query)
        assert expected, "the window should catch some records"
        found = view.search("p1", "Observation", since=since, until=until, code=query)
        assert sorted(ids(found)) == sorted(expected)
        times = [datetime.fromisoformat(r["effectiveDateTime"]).timestamp() for r in found]
        assert times == sorted(times)


# --- copy-on-write views ------------------------------------------------------------------------------------------


def test_a_write_in_one_view_is_invisible_to_the_image_and_other_views(image):
    snapshot = copy.deepcopy(image.resources)
    a, b = EHRView(image), EHRView(image)
    new = a.create(sbp("o-new", "p1", 140, "2026-11-30T08:30:00+08:00"))
    changed = copy.deepcopy(a.get("Observation", "o-late"))
    changed["valueQuantity"]["value"] = 999
    a.update(changed)

    assert a.get("Observation", "o-new") == new
    assert a.get("Observation", "o-late")["valueQuantity"]["value"] == 999
    assert "o-new" in ids(a.search("p1", "Observation", code="8480-6"))
    assert b.get("Observation", "o-new") is None
    assert b.get("Observation", "o-late")["valueQuantity"]["value"] == 150
    assert "o-new" not in ids(b.search("p1", "Observation"))
    assert image.resources == snapshot
    assert ("Observation", "o-new") not in image.resources


def test_create_copies_its_input(image):
    view = EHRView(image)
    draft = sbp("o-new", "p1", 140, "2026-11-30T08:30:00+08:00")
    view.create(draft)
    draft["valueQuantity"]["value"] = 1
    assert view.get("Observation", "o-new")["valueQuantity"]["value"] == 140


def test_create_assigns_deterministic_ids_and_refuses_duplicates(image):
    first, second = EHRView(image), EHRView(image)
    made = [v.create(fhir.service_request(None, "p1", "心电图", NOW.isoformat())) for v in (first, second)]
    assert made[0]["id"] == made[1]["id"]
    assert first.create(fhir.service_request(None, "p1", "胃镜", NOW.isoformat()))["id"] != made[0]["id"]
    with pytest.raises(ValueError):
        first.create(sbp("o-late", "p1", 1, "2026-11-30"))
    with pytest.raises(KeyError):
        first.update(sbp("o-missing", "p1", 1, "2026-11-30"))


def test_create_emits_one_add_op_attributed_to_the_current_step(image):
    view = EHRView(image)
    view.step = 3
    created = view.create(fhir.service_request("s1", "p1", "心电图", NOW.isoformat()))
    assert view.changes == [(3, {"op": "add", "path": "/ServiceRequest/s1", "value": created})]


def test_update_emits_ops_with_replaced_values(image):
    view = EHRView(image)
    view.step = 2
    new = copy.deepcopy(image.resources[("Observation", "o-late")])
    new["valueQuantity"]["value"] = 155
    new["note"] = [{"text": "复测"}]
    del new["category"]
    view.update(new)
    ops = {op["path"]: op for step, op in view.changes}
    assert {step for step, _ in view.changes} == {2}
    assert ops == {
        "/Observation/o-late/valueQuantity/value": {
            "op": "replace",
            "path": "/Observation/o-late/valueQuantity/value",
            "value": 155,
            "replaced": 150,
        },
        "/Observation/o-late/note": {"op": "add", "path": "/Observation/o-late/note", "value": [{"text": "复测"}]},
        "/Observation/o-late/category": {
            "op": "remove",
            "path": "/Observation/o-late/category",
            "replaced": image.resources[("Observation", "o-late")]["category"],
        },
    }


def test_update_with_no_change_emits_nothing(image):
    view = EHRView(image)
    view.update(copy.deepcopy(image.resources[("Condition", "c1")]))
    assert view.changes == []


def test_search_after_update_uses_the_updated_code_and_time(image):
    """An update that moves a resource to another code or time must move it in searches of that view."""
    view = EHRView(image)
    moved = copy.deepcopy(image.resources[("Observation", "o-early")])
    moved["code"] = fhir.concept("Heart rate", "8867-4", LOINC)
    moved["effectiveDateTime"] = "2026-11-29T12:00:00+08:00"
    view.update(moved)
    assert ids(view.search("p1", "Observation", code="8480-6")) == ["o-late"]
    assert ids(view.search("p1", "Observation", code="8867-4")) == ["o-hr", "o-early"]
    assert ids(view.search("p1", "Observation", until=ts("2026-11-20T00:00:00+08:00"))) == ["o-hr"]
    assert ids(view.search("p1", "Observation")) == ["o-hr", "o-late", "o-early"]
    assert ids(EHRView(image).search("p1", "Observation", code="8480-6")) == ["o-early", "o-late"]


# --- the timeline: state at a step, diffs; replay -----------------------------------------------------------------------------------


def scripted_writes(image: EHRImage) -> EHRView:
    """Step 1 creates s1; step 2 changes o-late's value; step 3 changes s1's status; step 4 drops o-late's category."""
    view = EHRView(image)
    view.step = 1
    view.create(fhir.service_request("s1", "p1", "心电图", NOW.isoformat()))
    view.step = 2
    obs = copy.deepcopy(view.get("Observation", "o-late"))
    obs["valueQuantity"]["value"] = 155
    view.update(obs)
    view.step = 3
    req = copy.deepcopy(view.get("ServiceRequest", "s1"))
    req["status"] = "revoked"
    view.update(req)
    view.step = 4
    obs = copy.deepcopy(view.get("Observation", "o-late"))
    del obs["category"]
    view.update(obs)
    return view


def by_key(diffs) -> dict:
    return {(d.rtype, d.rid): d for d in diffs}


def timeline(image: EHRImage, view: EHRView) -> Timeline:
    return Timeline.of(view.changes, image.resources.get)


def test_resource_at_each_step(image):
    view = scripted_writes(image)
    key_s, key_o = ("ServiceRequest", "s1"), ("Observation", "o-late")
    assert timeline(image, view).resource(key_s, 0) is None
    assert timeline(image, view).resource(key_s, 1)["status"] == "active"
    assert timeline(image, view).resource(key_s, 2)["status"] == "active"
    assert timeline(image, view).resource(key_s, 3)["status"] == "revoked"
    assert timeline(image, view).resource(key_o, 0) == image.resources[key_o]
    assert timeline(image, view).resource(key_o, 1)["valueQuantity"]["value"] == 150
    assert timeline(image, view).resource(key_o, 2)["valueQuantity"]["value"] == 155
    assert "category" in timeline(image, view).resource(key_o, 3)
    assert timeline(image, view).resource(key_o, 4) == view.get(*key_o)
    assert timeline(image, view).resource(("Condition", "c1"), 4) == image.resources[("Condition", "c1")]
    assert image.resources[key_o]["valueQuantity"]["value"] == 150  # the timeline must not mutate the image


def test_state_diff_from_start_to_end(image):
    view = scripted_writes(image)
    diffs = by_key(timeline(image, view).diff(0, 4))
    assert set(diffs) == {("ServiceRequest", "s1"), ("Observation", "o-late")}
    added = diffs[("ServiceRequest", "s1")]
    assert added.status == "added"
    assert [(f.path, f.before) for f in added.fields] == [("/", None)]
    assert added.fields[0].after == view.get("ServiceRequest", "s1")
    changed = diffs[("Observation", "o-late")]
    assert changed.status == "changed"
    fields = {f.path: (f.before, f.after) for f in changed.fields}
    assert fields == {
        "/valueQuantity/value": (150, 155),
        "/category": (image.resources[("Observation", "o-late")]["category"], None),
    }


def test_state_diff_between_middle_steps(image):
    view = scripted_writes(image)
    diffs = by_key(timeline(image, view).diff(1, 3))
    s1 = diffs[("ServiceRequest", "s1")]
    assert s1.status == "changed"
    assert [(f.path, f.before, f.after) for f in s1.fields] == [("/status", "active", "revoked")]
    assert [(f.path, f.before, f.after) for f in diffs[("Observation", "o-late")].fields] == [
        ("/valueQuantity/value", 150, 155)
    ]
    only_last = by_key(timeline(image, view).diff(3, 4))
    assert list(only_last) == [("Observation", "o-late")]
    assert [f.path for f in only_last[("Observation", "o-late")].fields] == ["/category"]
    assert timeline(image, view).diff(2, 2) == []


def test_state_diff_backwards_reverses_the_change(image):
    view = scripted_writes(image)
    diffs = by_key(timeline(image, view).diff(4, 0))
    assert diffs[("ServiceRequest", "s1")].status == "removed"
    fields = {f.path: (f.before, f.after) for f in diffs[("Observation", "o-late")].fields}
    assert fields["/valueQuantity/value"] == (155, 150)


def test_state_diff_skips_a_resource_changed_and_changed_back(image):
    view = EHRView(image)
    original = image.resources[("Condition", "c1")]
    for step, status in ((1, "resolved"), (2, "active")):
        view.step = step
        changed = copy.deepcopy(original)
        changed["clinicalStatus"]["text"] = status
        view.update(changed)
    assert timeline(image, view).diff(0, 2) == []
    assert len(timeline(image, view).diff(0, 1)) == 1


def test_replay_rebuilds_the_same_final_state(image):
    live = scripted_writes(image)
    rebuilt = EHRView(image)
    rebuilt.replay(list(live.changes))
    assert rebuilt.changes == live.changes
    for key in [*image.resources, ("ServiceRequest", "s1")]:
        assert rebuilt.get(*key) == live.get(*key)
    for rtype in ("ServiceRequest", "Observation", "Condition"):
        assert rebuilt.search("p1", rtype) == live.search("p1", rtype)
    assert list(rebuilt.touched()) == list(live.touched())
    assert EHRView(image).get("ServiceRequest", "s1") is None


def test_reverting_every_change_restores_the_initial_state(image):
    view = scripted_writes(image)
    doc = {"Observation": {"o-late": copy.deepcopy(image.resources[("Observation", "o-late")])}, "ServiceRequest": {}}
    for _, op in view.changes:
        apply_op(doc, op)
    assert doc["Observation"]["o-late"] == view.get("Observation", "o-late")
    for _, op in reversed(view.changes):
        revert_op(doc, op)
    assert doc == {"Observation": {"o-late": image.resources[("Observation", "o-late")]}, "ServiceRequest": {}}


def test_ids_with_slash_and_tilde_survive_patch_paths(image):
    view = EHRView(image)
    view.create(fhir.service_request("a/b~c", "p1", "心电图", NOW.isoformat()))
    ((_, op),) = view.changes
    assert op["path"] == "/ServiceRequest/" + escape("a/b~c") == "/ServiceRequest/a~1b~0c"
    assert resource_key(op["path"]) == ("ServiceRequest", "a/b~c")
    rebuilt = EHRView(image)
    rebuilt.replay(view.changes)
    assert rebuilt.get("ServiceRequest", "a/b~c")["code"]["text"] == "心电图"


def test_create_after_replay_does_not_reuse_a_replayed_id():
    image = EHRImage([fhir.patient("p1", "甲", "female", "1970-01-01", "M1")], NOW)
    first = EHRView(image)
    first.step = 1
    made = first.create(fhir.task(None, "p1", "follow-up", "repeat ANC", NOW.isoformat()))
    rebuilt = EHRView(image)
    rebuilt.replay(first.changes)
    again = rebuilt.create(fhir.task(None, "p1", "follow-up", "second", NOW.isoformat()))
    assert again["id"] != made["id"]
    assert len(rebuilt.search("p1", "Task")) == 2


def test_the_state_at_a_step_shows_what_the_trial_wrote_and_falls_through_to_the_rest(image):
    view = scripted_writes(image)
    line = timeline(image, view)
    assert line.touched == [("ServiceRequest", "s1"), ("Observation", "o-late")]
    assert line.last_step == 4
    at_1 = line.state(1)
    assert set(at_1.touched()) == {("ServiceRequest", "s1")}
    assert at_1[("Observation", "o-late")] == image.resources[("Observation", "o-late")]
    assert at_1.get(("Condition", "nope")) is None
    with pytest.raises(KeyError):
        line.state(0)[("ServiceRequest", "s1")]
    assert line.state(4).touched()[("Observation", "o-late")] == view.get("Observation", "o-late")
