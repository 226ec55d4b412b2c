"""Reviewer sign-off: Ed25519 signatures over a release folder; any change to what they cover is named."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization

from forge_kernel.cli import main
from forge_kernel.engine import RunSpec, execute
from forge_kernel.report._approved import approved_releases, last_approved
from forge_kernel.report.signoff import differences, link, private_key, show_signoff
from forge_kernel.report.signoff_section import STATE_START, render, render_state
from forge_kernel.spec import canonical_json
from tests.helpers import delete_trial, signoff_argv

ROOT = Path(__file__).resolve().parents[2]
TASKS = ["SC-MED-GOUT-FLARE", "SC-MED-ASTHMA-ACUTE"]
ROLES = ["clinician", "engineer"]
UNSIGNED: dict = {"signatures": []}


@pytest.fixture(scope="module")
def built_release(tmp_path_factory) -> Path:
    """A release folder over two small real runs, with stand-in report files: each with the first screen's sign-off
    state and the sign-off section (in the notebook, inside a JSON string)."""
    folder = tmp_path_factory.mktemp("releases") / "r1"
    for label, agent in (("baseline", "baseline-v1"), ("candidate", "candidate-v2")):
        spec = RunSpec(suite=[str(ROOT / "task_packages/superclue" / t) for t in TASKS], agents=[agent], trials=2)
        asyncio.run(execute(spec, folder / "runs" / label, progress=False))
    top, end = render_state(UNSIGNED, ROLES), render(UNSIGNED)
    (folder / "release.ipynb").write_text(json.dumps({"cells": [], "outputs": [top, "report", end]}), encoding="utf-8")
    (folder / "release.html").write_text(f"<html>{top}report{end}</html>", encoding="utf-8")
    (folder / "r1.yaml").write_text("release: r1\n", encoding="utf-8")
    record = {
        "parameters": "r1.yaml",
        "runs": {"baseline": "runs/baseline", "candidate": "runs/candidate"},
        "agents": {"baseline": "baseline-v1", "candidate": "candidate-v2"},
        "roles": ROLES,
    }
    (folder / "release.json").write_text(json.dumps(record), encoding="utf-8")
    return folder


@pytest.fixture
def release(built_release, tmp_path) -> Path:
    folder = tmp_path / "r1"
    shutil.copytree(built_release, folder)
    return folder


def forge(*argv):
    return CliRunner().invoke(main, [str(a) for a in argv])


def keys(tmp_path, *reviewers) -> Path:
    """A folder of the reviewers' public keys; each private key at tmp_path/<name>.key."""
    trusted = tmp_path / "trusted"
    trusted.mkdir(exist_ok=True)
    for name in reviewers:
        assert forge("keygen", "--reviewer", name, "--out", tmp_path / f"{name}.key").exit_code == 0
        shutil.copy(tmp_path / f"{name}.key.pub", trusted / f"{name}.pub")
    return trusted


def sign(release, tmp_path, name, role, decision="approve", comment="checked the safety gates"):
    result = forge(*signoff_argv(release, tmp_path, name, role, decision, comment))
    assert result.exit_code == 0, result.output
    return result


def withdraw(release, tmp_path, name, number, key=None):
    return forge(
        "signoff",
        release,
        "--reviewer",
        name,
        "--key",
        tmp_path / f"{key or name}.key",
        "--decision",
        "withdraw",
        "--withdraws",
        number,
    )


def verify(release, trusted, *options):
    return forge("verify", release, "--trusted", trusted, *options)


def fails(result) -> list[str]:
    """The problem lines of forge verify, with the signing times taken out."""
    return [line for line in verdicts(result) if line.startswith("FAIL")]


def verdicts(result) -> list[str]:
    """The ok and FAIL lines of forge verify, with the signing times taken out."""
    return [re.sub(r" at \S+\)", ")", line) for line in result.output.splitlines() if line.startswith(("ok", "FAIL"))]


def signatures(release) -> dict:
    return json.loads((release / "signoff.json").read_text())


def rewrite(release, signoff):
    """Write an edited signoff.json and re-render the page's sign-off region from it, as anyone with the folder can."""
    (release / "signoff.json").write_text(json.dumps(signoff), encoding="utf-8")
    show_signoff(release, signoff)


def entry(key_file, statement) -> dict:
    """A signature entry over ``statement`` by the key in ``key_file``, made without forge signoff and its checks."""
    key = private_key(key_file)
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return {
        "statement": statement,
        "key": base64.b64encode(raw).decode(),
        "signature": base64.b64encode(key.sign(canonical_json(statement).encode())).decode(),
    }


def signed(release, tmp_path) -> Path:
    trusted = keys(tmp_path, "wen", "ada")
    sign(release, tmp_path, "wen", "clinician")
    sign(release, tmp_path, "ada", "engineer")
    return trusted


def unchain(release, tmp_path):
    """Sign-off as it was before the chain: each statement re-signed by its reviewer's key without ``follows``."""
    signoff = signatures(release)
    signoff["signatures"] = [
        entry(
            tmp_path / f"{e['statement']['reviewer']}.key", {k: v for k, v in e["statement"].items() if k != "follows"}
        )
        for e in signoff["signatures"]
    ]
    rewrite(release, signoff)


def test_keygen_writes_a_private_key_for_its_owner_alone_and_never_overwrites(tmp_path):
    result = forge("keygen", "--reviewer", "wen", "--out", tmp_path / "wen.key")
    assert result.exit_code == 0
    assert stat.S_IMODE((tmp_path / "wen.key").stat().st_mode) == 0o600
    assert (tmp_path / "wen.key.pub").read_text().startswith("forge-ed25519 ")
    assert "PRIVATE" not in result.output
    again = forge("keygen", "--reviewer", "wen", "--out", tmp_path / "wen.key")
    assert again.exit_code == 2 and again.output.strip().endswith("exists; a key is never overwritten")


def test_a_release_signed_by_every_role_verifies_and_keys_stay_out_of_it(release, tmp_path):
    trusted = signed(release, tmp_path)
    result = verify(release, trusted)
    assert result.exit_code == 0, result.output
    assert verdicts(result) == ["ok    #1 wen (clinician, approve)", "ok    #2 ada (engineer, approve)"]
    assert result.output.endswith(f"{release}: verified\n")
    private = (tmp_path / "wen.key").read_text().splitlines()[1]
    assert not any(private in p.read_text(errors="ignore") for p in release.rglob("*") if p.is_file())


@pytest.mark.parametrize("name", ["release.ipynb", "release.html", "r1.yaml"])
def test_a_changed_file_is_named(release, tmp_path, name):
    trusted = signed(release, tmp_path)
    with open(release / name, "a", encoding="utf-8") as f:
        f.write(" ")
    result = verify(release, trusted)
    assert result.exit_code == 1
    assert f"{name} changed" in result.output and "NOT verified" in result.output


def test_a_changed_trial_in_a_run_store_is_named(release, tmp_path):
    trusted = signed(release, tmp_path)
    con = sqlite3.connect(release / "runs/candidate/run.sqlite")
    with con:
        con.execute(
            "UPDATE verdict_rows SET passed = 1 - passed WHERE trial_id = "
            "(SELECT trial_id FROM trials WHERE task_id = ? AND trial = 1)",
            (TASKS[1],),
        )
    con.close()
    result = verify(release, trusted)
    assert result.exit_code == 1
    assert f"run candidate: trial {TASKS[1]}/candidate-v2/1 changed" in result.output
    assert "run baseline" not in result.output


def store_tables() -> list[str]:
    """Every table a run store has, from sqlite_master of its schema."""
    db = sqlite3.connect(":memory:")
    db.executescript((ROOT / "forge_kernel/store/schema.sql").read_text(encoding="utf-8"))
    return sorted(name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))


@pytest.mark.parametrize("table", store_tables())
def test_each_table_of_a_run_store_changed_is_named(release, tmp_path, table):
    trusted = signed(release, tmp_path)
    con = sqlite3.connect(release / "runs/candidate/run.sqlite")
    assert sorted(n for (n,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")) == store_tables()
    columns = con.execute(f"PRAGMA table_info({table})").fetchall()
    key = ", ".join(c[1] for c in sorted(columns, key=lambda c: c[5]) if c[5])
    if table == "turns":  # no agent of the fixture reports model turns: one is slipped in
        with con:
            con.execute("INSERT INTO turns VALUES (1, 1, 0, 'forged', '[]', 'stop', NULL, 1, 1, 0, 0, 1, '[]', NULL)")
    first = con.execute(f"SELECT {key} FROM {table} ORDER BY {key} LIMIT 1").fetchone()
    assert first is not None, f"{table} is empty in the fixture"
    with con:
        changed = con.execute(
            f"UPDATE {table} SET {[c[1] for c in columns if not c[5]][-1]} = 'changed' "
            f"WHERE ({key}) = ({', '.join('?' * len(first))})",
            first,
        ).rowcount
    assert changed == 1
    if table in ("trials", "events", "call_data", "scores", "verdict_rows", "turns"):
        trial = con.execute(
            "SELECT task_id || '/' || agent || '/' || trial FROM trials WHERE trial_id = ?", first[:1]
        ).fetchone()[0]
        expected = f"run candidate: trial {trial} changed"
    else:
        expected = f"run candidate: table {table} changed"
    if table == "verdict_texts":  # a verdict's text is read by every trial whose verdicts say it
        expected += "".join(
            f"; run candidate: trial {trial} changed"
            for (trial,) in con.execute(
                "SELECT DISTINCT task_id || '/' || agent || '/' || trial FROM trials JOIN verdict_rows "
                "USING (trial_id) WHERE text_id = ? ORDER BY 1",
                first[:1],
            )
        )
    con.close()
    result = verify(release, trusted)
    assert result.exit_code == 1
    assert verdicts(result) == [
        f"FAIL  #1 wen (clinician, approve): {expected}",
        f"FAIL  #2 ada (engineer, approve): {expected}",
        "FAIL  no approval in the role clinician",
        "FAIL  no approval in the role engineer",
    ]


def test_a_changed_schema_is_named(release, tmp_path):
    trusted = signed(release, tmp_path)
    con = sqlite3.connect(release / "runs/baseline/run.sqlite")
    with con:
        con.execute("CREATE INDEX extra ON gradings (kind)")
    con.close()
    result = verify(release, trusted)
    assert [line.split(": ", 1)[1] for line in fails(result)[:2]] == ["run baseline: its schema changed"] * 2
    con = sqlite3.connect(release / "runs/baseline/run.sqlite")
    with con:
        con.execute("CREATE TABLE notes (note TEXT)")
    con.close()
    assert result.exit_code == 1 and "run baseline: table notes added" in verify(release, trusted).output


def test_a_removed_trial_is_named(release, tmp_path):
    trusted = signed(release, tmp_path)
    con = sqlite3.connect(release / "runs/baseline/run.sqlite")
    with con:
        trial_id = con.execute("SELECT trial_id FROM trials WHERE task_id = ? AND trial = 0", (TASKS[0],)).fetchone()[0]
        delete_trial(con, trial_id)
    con.close()
    assert f"run baseline: trial {TASKS[0]}/baseline-v1/0 removed" in verify(release, trusted).output


def test_a_signature_over_another_statement_fails(release, tmp_path):
    trusted = keys(tmp_path, "wen", "ada")
    sign(release, tmp_path, "wen", "clinician", decision="reject")
    sign(release, tmp_path, "ada", "engineer")
    signoff = json.loads((release / "signoff.json").read_text())
    signoff["signatures"][0]["statement"]["decision"] = "approve"
    (release / "signoff.json").write_text(json.dumps(signoff))
    result = verify(release, trusted)
    assert result.exit_code == 1 and "the signature does not match its statement" in result.output


def test_a_manifest_rewritten_to_match_a_change_fails(release, tmp_path):
    trusted = signed(release, tmp_path)
    (release / "release.html").write_text("<html>other</html>", encoding="utf-8")
    signoff = json.loads((release / "signoff.json").read_text())
    for covered in signoff["manifests"].values():
        covered["files"]["release.html"] = "sha256:" + __import__("hashlib").sha256(b"<html>other</html>").hexdigest()
    (release / "signoff.json").write_text(json.dumps(signoff))
    result = verify(release, trusted)
    assert result.exit_code == 1 and "the signed manifest in signoff.json was altered" in result.output


def test_untrusted_keys_missing_roles_and_rejections_fail(release, tmp_path):
    trusted = keys(tmp_path, "wen", "ada", "eve")
    sign(release, tmp_path, "wen", "clinician")
    result = verify(release, trusted)
    assert result.exit_code == 1 and "no approval in the role engineer" in result.output

    forge(
        "signoff",
        release,
        "--reviewer",
        "ada",
        "--role",
        "engineer",
        "--key",
        tmp_path / "eve.key",
        "--decision",
        "approve",
    )  # eve's key under ada's name
    result = verify(release, trusted)
    assert result.exit_code == 1 and "is not a trusted key of ada" in result.output

    result = forge("verify", release)
    assert result.exit_code == 1 and "is not a trusted key of wen" in result.output

    release2 = tmp_path / "r2"
    shutil.copytree(release, release2)
    (release2 / "signoff.json").unlink()
    sign(release2, tmp_path, "wen", "clinician")
    sign(release2, tmp_path, "ada", "engineer", decision="reject")
    result = verify(release2, trusted)
    assert result.exit_code == 1 and "rejected: checked the safety gates" in result.output


def test_bad_input_is_one_line_and_exit_2(release, tmp_path):
    keys(tmp_path, "wen")
    (tmp_path / "wen.key").chmod(0o644)
    result = forge(
        "signoff",
        release,
        "--reviewer",
        "wen",
        "--role",
        "clinician",
        "--key",
        tmp_path / "wen.key",
        "--decision",
        "approve",
    )
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1
    assert "wen.key: (mode): -rw-r--r--: a private key must be readable by its owner alone" in result.output
    (release / "release.json").write_text("{")
    result = verify(release, tmp_path / "trusted")
    assert result.exit_code == 2 and "release.json: (file): not JSON" in result.output


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda s: s["signatures"][0].pop("key"), "signatures.0.key: Field required"),
        (lambda s: s["signatures"][0].update(key="not base64!"), "signatures.0.key: String should match pattern"),
        (lambda s: s["signatures"][1]["statement"].update(decision="shrug"), "signatures.1.statement.decision: Input"),
        (lambda s: s["signatures"][1]["statement"].update(extra=1), "signatures.1.statement.extra: unknown field"),
        (lambda s: s.update(signatures={}), "signatures: Input should be a valid array"),
    ],
    ids=["no key", "bad key", "bad decision", "unknown field", "not a list"],
)
def test_a_damaged_signoff_file_is_one_line_and_exit_2(release, tmp_path, damage, message):
    trusted = signed(release, tmp_path)
    signoff = signatures(release)
    damage(signoff)
    (release / "signoff.json").write_text(json.dumps(signoff))
    for result in (
        verify(release, trusted),
        forge(
            "signoff",
            release,
            "--reviewer",
            "wen",
            "--role",
            "clinician",
            "--key",
            tmp_path / "wen.key",
            "--decision",
            "approve",
        ),
    ):
        assert result.exit_code == 2 and len(result.output.splitlines()) == 1, result.output
        assert result.output.startswith(f"{release / 'signoff.json'}: {message}"), result.output


def test_signing_shows_every_signature_in_the_html_and_a_forged_section_is_named(release, tmp_path):
    trusted = signed(release, tmp_path)
    page = (release / "release.html").read_text(encoding="utf-8")
    assert page.count("checked the safety gates") == 2 and "wen" in page and "ada" in page
    assert verify(release, trusted).exit_code == 0  # the first signature still holds after the second rewrote it
    (release / "release.html").write_text(page.replace(">approve<", ">reject<", 1), encoding="utf-8")
    result = verify(release, trusted)
    assert result.exit_code == 1
    assert "release.html: its sign-off state or section does not show the signatures in signoff.json" in result.output
    assert "release.html changed" not in result.output  # the report itself is as signed


@pytest.mark.parametrize("attack, broken", [("delete", "#2"), ("replace", "#3")])
def test_a_rejection_deleted_or_replaced_breaks_the_chain_at_the_signature_after_it(release, tmp_path, attack, broken):
    trusted = keys(tmp_path, "wen", "eve", "ada")
    sign(release, tmp_path, "wen", "clinician")
    sign(release, tmp_path, "eve", "clinician", decision="reject")
    sign(release, tmp_path, "ada", "engineer")
    assert fails(verify(release, trusted)) == ["FAIL  #2 eve (clinician, reject): rejected: checked the safety gates"]
    signoff = signatures(release)
    if attack == "delete":
        del signoff["signatures"][1]
    else:  # by another trusted key, over the same manifest and link
        signoff["signatures"][1] = entry(
            tmp_path / "wen.key", {**signoff["signatures"][1]["statement"], "reviewer": "wen", "decision": "approve"}
        )
    rewrite(release, signoff)
    result = verify(release, trusted)
    assert result.exit_code == 1
    assert fails(result) == [
        f"FAIL  {broken} ada (engineer, approve): follows a signature that is missing, moved or changed",
        "FAIL  no approval in the role engineer",
    ]


def test_reordered_signatures_break_the_chain_at_the_first(release, tmp_path):
    trusted = signed(release, tmp_path)
    signoff = signatures(release)
    signoff["signatures"].reverse()
    rewrite(release, signoff)
    result = verify(release, trusted)
    assert result.exit_code == 1
    assert fails(result)[0] == "FAIL  #1 ada (engineer, approve): follows a signature that is missing, moved or changed"


def test_the_newest_signature_removed_leaves_a_shorter_chain_that_only_a_pinned_head_catches(release, tmp_path):
    trusted = keys(tmp_path, "wen", "ada", "eve")
    sign(release, tmp_path, "wen", "clinician")
    sign(release, tmp_path, "ada", "engineer")
    shorter = verify(release, trusted).output
    printed = sign(release, tmp_path, "eve", "clinician", decision="reject").output
    head = re.search(r"^chain: 3 signatures, head (sha256:[0-9a-f]{64}) ", printed, re.M).group(1)
    assert f"chain: 3 signatures, head {head}\n" in verify(release, trusted, "--head", head).output
    signoff = signatures(release)
    signoff["signatures"].pop()
    rewrite(release, signoff)
    assert verify(release, trusted).exit_code == 0  # the limit of a chain: its newest entries can go unseen
    result = verify(release, trusted, "--head", head)
    assert result.exit_code == 1 and re.search(r"^chain: 2 signatures, head sha256:", result.output, re.M)
    assert fails(result) == [
        f"FAIL  --head {head}: not in the chain; a signature was removed or replaced since it was pinned"
    ]
    assert "chain: 2 signatures" in shorter


def test_a_withdrawal_is_signed_by_the_reviewer_and_key_of_what_it_withdraws(release, tmp_path):
    trusted = keys(tmp_path, "wen", "ada")
    sign(release, tmp_path, "wen", "clinician", decision="reject")
    for name, key in (("ada", "ada"), ("wen", "ada")):
        result = withdraw(release, tmp_path, name, 1, key=key)
        assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1
        assert re.search(
            r"signoff.json: --withdraws: withdraws #1, signed by wen \(clinician\) with key sha256:\w+: "
            "only that reviewer, role and key withdraw it$",
            result.output.strip(),
        ), result.output
    for number in (2, 0):
        assert (
            f"withdraws #{number}, which is not an approval or rejection standing"
            in withdraw(release, tmp_path, "wen", number).output
        )
    sign(release, tmp_path, "ada", "engineer")
    signoff = signatures(release)  # a withdrawal by ada made without forge signoff
    signoff["signatures"].append(
        entry(
            tmp_path / "ada.key",
            {
                **signoff["signatures"][0]["statement"],
                "reviewer": "ada",
                "decision": "withdraw",
                "withdraws": 1,
                "follows": link(signoff["signatures"]),
            },
        )
    )
    rewrite(release, signoff)
    assert [re.sub(r"sha256:\w+", "KEY", line) for line in verdicts(verify(release, trusted))] == [
        "FAIL  #1 wen (clinician, reject): rejected: checked the safety gates",
        "ok    #2 ada (engineer, approve)",
        "FAIL  #3 ada (clinician, withdraw #1): withdraws #1, signed by wen (clinician) with key KEY: only that reviewer, "
        "role and key withdraw it",
        "FAIL  no approval in the role clinician",
    ]


def test_a_withdrawn_rejection_no_longer_stands_and_the_page_shows_both(release, tmp_path):
    trusted = keys(tmp_path, "wen", "ada")
    sign(release, tmp_path, "wen", "clinician", decision="reject")
    assert withdraw(release, tmp_path, "wen", 1).output.startswith("wen (clinician) signed withdraw #1 at ")
    assert (
        "withdraws #1, which is not an approval or rejection standing" in withdraw(release, tmp_path, "wen", 1).output
    )
    sign(release, tmp_path, "wen", "clinician")
    sign(release, tmp_path, "ada", "engineer")
    result = verify(release, trusted)
    assert result.exit_code == 0, result.output
    assert verdicts(result) == [
        "ok    #1 wen (clinician, reject): withdrawn by #2, no longer counts",
        "ok    #2 wen (clinician, withdraw #1)",
        "ok    #3 wen (clinician, approve)",
        "ok    #4 ada (engineer, approve)",
    ]
    assert "chain: 4 signatures, head sha256:" in result.output
    page = (release / "release.html").read_text(encoding="utf-8")
    assert '<tr class=""><td>1</td><td>wen</td><td>clinician</td><td>reject (withdrawn by #2)</td>' in page
    assert '<tr class="amber"><td>2</td><td>wen</td><td>clinician</td><td>withdraw #1</td>' in page


def test_a_withdrawn_approval_no_longer_counts(release, tmp_path):
    trusted = signed(release, tmp_path)
    assert withdraw(release, tmp_path, "wen", 1).exit_code == 0
    result = verify(release, trusted)
    assert result.exit_code == 1 and verdicts(result) == [
        "ok    #1 wen (clinician, approve): withdrawn by #3, no longer counts",
        "ok    #2 ada (engineer, approve)",
        "ok    #3 wen (clinician, withdraw #1)",
        "FAIL  no approval in the role clinician",
    ]
    assert result.output.endswith("NOT verified (no approval yet from: clinician)\n")


def test_a_sign_off_from_before_the_chain_does_not_verify_and_is_not_signed_further(release, tmp_path):
    trusted = signed(release, tmp_path)
    unchain(release, tmp_path)
    result = verify(release, trusted)
    assert result.exit_code == 1
    assert fails(result) == [
        "FAIL  signoff.json: signed before signatures were chained; move it aside and sign the release again"
    ]
    result = forge(
        "signoff",
        release,
        "--reviewer",
        "wen",
        "--role",
        "clinician",
        "--key",
        tmp_path / "wen.key",
        "--decision",
        "approve",
    )
    assert result.exit_code == 2 and "signoff.json: (file): signed before signatures were chained" in result.output


def test_one_reviewer_by_name_or_key_approves_in_one_role(release, tmp_path):
    trusted = keys(tmp_path, "wen", "ada")
    assert forge("keygen", "--reviewer", "wen", "--out", tmp_path / "wen2.key").exit_code == 0
    shutil.copy(tmp_path / "wen2.key.pub", trusted / "wen2.pub")
    sign(release, tmp_path, "wen", "clinician")
    for name, key, who in (("wen", "wen", "wen"), ("wendy", "wen", "wen / wendy"), ("wen", "wen2", "wen")):
        result = forge(
            "signoff",
            release,
            "--reviewer",
            name,
            "--role",
            "engineer",
            "--key",
            tmp_path / f"{key}.key",
            "--decision",
            "approve",
        )
        assert result.exit_code == 2 and result.output.strip() == (
            f"{release}/release.json: several_roles_per_reviewer: {who} approves as clinician and engineer: one "
            "reviewer (a name, or a key under any name) approves in one role unless the release's parameters set "
            "several_roles_per_reviewer"
        )
    signoff = signatures(release)  # wen's key approving as engineer under another name, without forge signoff
    signoff["signatures"].append(
        entry(
            tmp_path / "wen.key",
            {
                **signoff["signatures"][0]["statement"],
                "reviewer": "wendy",
                "role": "engineer",
                "follows": link(signoff["signatures"]),
            },
        )
    )
    rewrite(release, signoff)
    (trusted / "wendy.pub").write_text((trusted / "wen.pub").read_text().replace(" wen", " wendy"))
    result = verify(release, trusted)
    assert result.exit_code == 1 and verdicts(result) == [
        "ok    #1 wen (clinician, approve)",
        "FAIL  #2 wendy (engineer, approve): wen / wendy approves as clinician and engineer: one reviewer (a name, or a "
        "key under any name) approves in one role unless the release's parameters set several_roles_per_reviewer",
        "FAIL  no approval in the role engineer",
    ]


def test_a_release_may_let_one_reviewer_approve_in_several_roles(release, tmp_path):
    record = json.loads((release / "release.json").read_text())
    (release / "release.json").write_text(json.dumps({**record, "several_roles_per_reviewer": True}))
    trusted = keys(tmp_path, "wen")
    sign(release, tmp_path, "wen", "clinician")
    sign(release, tmp_path, "wen", "engineer")
    assert verify(release, trusted).exit_code == 0


def test_names_roles_and_comments_from_signoff_json_are_printed_and_shown_inert(release, tmp_path):
    odd = "\x1b]0;x\x07"
    trusted = keys(tmp_path, "ada")
    assert forge("keygen", "--reviewer", f"wen{odd}", "--out", tmp_path / "wen.key").exit_code == 0
    shutil.copy(tmp_path / "wen.key.pub", trusted / "wen.pub")
    results = [
        forge(
            "signoff",
            release,
            "--reviewer",
            f"wen{odd}",
            "--role",
            f"clinician{odd}",
            "--key",
            tmp_path / "wen.key",
            "--decision",
            "reject",
            "--comment",
            f"<script>alert(1)</script>{odd}",
        ),
        withdraw(release, tmp_path, "ada", 1),
        verify(release, trusted),
    ]
    assert [r.exit_code for r in results] == [0, 2, 1]
    for result in results:
        assert "\x1b" not in result.output and "\x07" not in result.output
        assert "wen\\x1b]0;x\\x07 (clinician\\x1b]0;x\\x07" in result.output
    assert "rejected: <script>alert(1)</script>\\x1b]0;x\\x07\n" in results[2].output
    page = (release / "release.html").read_text(encoding="utf-8")
    region = page[page.index("<!--forge:signoff-->") :]
    assert "<script>" not in region and "\x1b" not in page
    assert "<td>&lt;script&gt;alert(1)&lt;/script&gt;\\x1b]0;x\\x07</td>" in region


def test_last_approved_skips_a_standing_rejection_a_broken_chain_and_an_unchained_sign_off(
    release, built_release, tmp_path
):
    trusted = signed(release, tmp_path)
    keys(tmp_path, "eve")
    for name in ("r2", "r3", "r4"):  # signed after r1: each would be the newer baseline if it verified
        shutil.copytree(built_release, tmp_path / name)
        sign(tmp_path / name, tmp_path, "wen", "clinician")
        if name != "r4":
            sign(tmp_path / name, tmp_path, "eve", "clinician", decision="reject")
        sign(tmp_path / name, tmp_path, "ada", "engineer")
    signoff = signatures(tmp_path / "r3")
    del signoff["signatures"][1]  # the rejection, removed
    rewrite(tmp_path / "r3", signoff)
    unchain(tmp_path / "r4", tmp_path)
    assert [a.folder.name for a in approved_releases(tmp_path, trusted)] == ["r1"]
    assert last_approved(tmp_path, trusted, tmp_path / "r5.yaml", "r5").folder == release


def first_screen(text: str) -> str:
    """The first screen's sign-off state of a page or a stand-in notebook, as HTML, tags taken out."""
    if text.startswith("{"):
        text = json.loads(text)["outputs"][0]
    region = text[text.index(STATE_START) : text.index("<!--/forge:signoff-state-->")]
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", region)).strip()


def test_a_rejection_is_on_the_first_screen_with_who_why_and_the_roles_still_to_approve(release, tmp_path):
    trusted = keys(tmp_path, "wen", "ada")
    assert "NOT SIGNED YET Still to approve: clinician, engineer." in first_screen(
        (release / "release.html").read_text()
    )
    sign(release, tmp_path, "ada", "engineer")
    assert first_screen((release / "release.html").read_text()).startswith(
        "AWAITING SIGN-OFF Approved by ada (engineer). Still to approve: clinician."
    )
    sign(release, tmp_path, "wen", "clinician", decision="reject", comment="the renal dose is not checked")
    page, notebook = (release / "release.html").read_text(), (release / "release.ipynb").read_text()
    assert '<div class="forge-verdict forge-signoff-state red">' in page
    for text in (page, notebook):
        assert first_screen(text) == (
            "REJECTED by wen (clinician): the renal dose is not checked Approved by ada (engineer). Still to approve: "
            "clinician. A reviewer rejected this release: it must not ship while that stands, whatever the gate says."
        )
    result = verify(release, trusted)  # ada's signature still holds: signing rewrote only the sign-off regions
    assert verdicts(result) == [
        "ok    #1 ada (engineer, approve)",
        "FAIL  #2 wen (clinician, reject): rejected: the renal dose is not checked",
        "FAIL  no approval in the role clinician",
    ]
    assert result.output.endswith("NOT verified (no approval yet from: clinician)\n")


def test_the_first_screen_reads_approved_once_every_role_approves_and_a_withdrawn_rejection_no_longer_shows(
    release, tmp_path
):
    keys(tmp_path, "wen", "ada")
    sign(release, tmp_path, "wen", "clinician", decision="reject")
    assert first_screen((release / "release.html").read_text()).startswith("REJECTED by wen (clinician)")
    withdraw(release, tmp_path, "wen", 1)
    sign(release, tmp_path, "wen", "clinician")
    sign(release, tmp_path, "ada", "engineer")
    for name in ("release.html", "release.ipynb"):
        assert first_screen((release / name).read_text()) == "APPROVED Approved by wen (clinician), ada (engineer)."


@pytest.mark.parametrize("name", ["release.html", "release.ipynb"])
def test_a_first_screen_that_hides_a_rejection_is_named(release, tmp_path, name):
    trusted = keys(tmp_path, "wen", "ada")
    sign(release, tmp_path, "ada", "engineer")
    sign(release, tmp_path, "wen", "clinician", decision="reject")
    approving = render_state({"signatures": signatures(release)["signatures"][:1]}, ROLES)
    text = (release / name).read_text()
    hidden = re.sub(
        r"<!--forge:signoff-state-->.*?<!--/forge:signoff-state-->",
        lambda _: json.dumps(approving)[1:-1] if name.endswith(".ipynb") else approving,
        text,
        flags=re.S,
    )
    assert hidden != text and "REJECTED" not in first_screen(hidden)
    (release / name).write_text(hidden)
    result = verify(release, trusted)
    assert result.exit_code == 1
    assert f"FAIL  {name}: its sign-off state or section does not show the signatures in signoff.json" in fails(result)
    assert f"{name} changed" not in result.output  # the report itself is as signed


def test_without_rewriting_the_page_on_signing_a_rejection_stays_off_the_first_screen_and_verify_says_so(
    release, tmp_path, monkeypatch
):
    from forge_kernel.report import signoff as signing

    trusted = keys(tmp_path, "wen")
    monkeypatch.setattr(signing, "show_signoff", lambda folder, signoff: None)  # the mechanism, removed
    sign(release, tmp_path, "wen", "clinician", decision="reject")
    assert first_screen((release / "release.html").read_text()).startswith("NOT SIGNED YET")
    assert [line for line in fails(verify(release, trusted)) if "sign-off state" in line] == [
        f"FAIL  {name}: its sign-off state or section does not show the signatures in signoff.json"
        for name in ("release.ipynb", "release.html")
    ]


def test_a_notebook_from_before_the_first_screen_state_is_signed_as_it_is(release, tmp_path):
    old = json.dumps({"cells": [], "outputs": [render(UNSIGNED)]})
    (release / "release.ipynb").write_text(old)
    trusted = signed(release, tmp_path)
    assert (release / "release.ipynb").read_text() == old  # not rewritten: a signature covers all of it
    assert verify(release, trusted).exit_code == 0
    (release / "release.ipynb").write_text(old.replace("Not signed yet", "Signed"))
    assert "release.ipynb changed" in verify(release, trusted).output


def test_what_changed_is_listed_by_name_whatever_order_the_run_stored_its_trials_in():
    """A run stores its trials in the order they ended, which varies: the lines a verification prints do not."""
    then = {"T/a/1": "h1", "T/a/0": "h0", "T/a/2": "h2"}
    now = {"T/a/3": "h3", "T/a/1": "x1", "T/a/0": "x0"}
    assert list(differences(then, now)) == ["T/a/0 changed", "T/a/1 changed", "T/a/2 removed", "T/a/3 added"]
