"""Reviewer sign-off of a release: Ed25519 signatures over a canonical manifest of everything the report rests on.

A release folder holds ``release.ipynb``, ``release.html``, ``parameters.yaml`` and ``release.json`` (what it was
built from: the parameters file and the run stores, by path relative to the folder, and the roles whose approval it
needs). The
manifest lists a digest of each file and, per run store, one of its schema, one of each table and one per trial
(with its events, scores and verdicts), so a failed verification names the file, the table or the trial that
changed. Private keys are read from their file only when signing and never written anywhere else.

Signatures live in ``signoff.json`` beside them as one append-only chain: each statement covers the manifest's
digest and ``follows``, the digest of the whole entry before it (``null`` for the first), so removing, moving or
changing one breaks the link of the next. A signature is never taken back by deleting it, only by a later
withdrawal (``withdraws``: its number) signed by the same reviewer, role and key. A chain cannot show that its
newest entries were cut off: ``forge signoff`` prints the head (length and last digest) and ``forge verify --head``
fails when the chain no longer holds it. ``release.html`` and ``release.ipynb`` are covered without their sign-off
regions (the first screen's state and the section at the end), which signing rewrites from ``signoff.json`` and
verifying checks (``signoff_section.py``). ``forge verify`` judges each signature once: one that fails a check counts
for nothing. Digests, keys and the chain's links are in ``_chain.py``, which that section reads too.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sqlite3
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Annotated, Any, Literal, Required

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from pydantic import ConfigDict, StringConstraints, TypeAdapter, ValidationError
from typing_extensions import TypedDict  # pydantic reads typing's TypedDict only from Python 3.12

from ..spec import SpecError, canonical_json
from ..store import RunStore
from ._chain import PublicKey, chain_head, decision_text, digest, link, sha256, standing
from .signoff_section import covered, file_shows, with_signoff

HTML = "release.html"
NOTEBOOK = "release.ipynb"
REPORT_FILES = (NOTEBOOK, HTML)
RECORD = "release.json"
SIGNOFF = "signoff.json"
SEVERAL_ROLES = "several_roles_per_reviewer"
"""The field of ``release.json`` (from the release's parameters) that lets one reviewer approve in several roles."""
Decision = Literal["approve", "reject", "withdraw"]
TRIAL_TABLES = ("events", "call_data", "scores", "verdicts", "turns")
"""Tables whose rows belong to one trial, digested with it; every other table of a store is digested whole but
those read through a view of them."""
VIEWED = ("verdict_rows",)
"""The table read through the view ``verdicts`` (since store version 6): digested as that view's rows."""


# --- keys ------------------------------------------------------------------------------------------------------


def keygen(reviewer: str, out: Path) -> PublicKey:
    """Write a new private key to ``out`` (mode 600, never overwritten) and its public line to ``out.pub``."""
    if not reviewer.strip() or "\n" in reviewer:
        raise SpecError("--reviewer", "(value)", "a reviewer's name is one non-empty line")
    private = Ed25519PrivateKey.generate()
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    raw = private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    public = PublicKey(reviewer.strip(), base64.b64encode(raw).decode())
    try:
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise SpecError(out, "(file)", "exists; a key is never overwritten") from None
    with os.fdopen(fd, "wb") as f:
        f.write(pem)
    Path(f"{out}.pub").write_text(public.line + "\n", encoding="utf-8")
    return public


def private_key(path: Path) -> Ed25519PrivateKey:
    """The private key in ``path``, refused when others may read it."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise SpecError(path, "(file)", "no such key file") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise SpecError(
            path, "(mode)", f"{stat.filemode(mode)}: a private key must be readable by its owner alone (chmod 600)"
        )
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except ValueError:
        raise SpecError(path, "(file)", "not a PEM private key") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SpecError(path, "(file)", "not an Ed25519 key")
    return key


def trusted_keys(path: Path) -> list[PublicKey]:
    """Public keys from a file of key lines, or from every ``*.pub`` file of a folder."""
    if not path.exists():
        raise SpecError(path, "(file)", "no such file or folder of trusted keys")
    files = sorted(path.glob("*.pub")) if path.is_dir() else [path]
    return [
        PublicKey.parse(line, f)
        for f in files
        for line in f.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]


# --- what a release rests on -------------------------------------------------------------------------------------


def release_record(folder: Path) -> dict:
    """``release.json`` of a release folder: ``{parameters, runs: {label: path}, roles: [...]}`` and, when one reviewer
    may approve in several roles, ``several_roles_per_reviewer: true``."""
    path = folder / RECORD
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SpecError(path, "(file)", "missing: not a release folder (forge release writes it)") from None
    except json.JSONDecodeError as exc:
        raise SpecError(path, "(file)", f"not JSON: {exc.msg} at line {exc.lineno}") from None
    for name, kind in (("parameters", str), ("runs", dict), ("roles", list)):
        if not isinstance(record.get(name), kind):
            raise SpecError(path, name, f"missing or not a {kind.__name__}")
    return record


def store_digests(run_dir: Path) -> dict:
    """Digests of a run store: its schema (every CREATE statement), each table read from ``sqlite_master`` but the
    trials' (so a table added later is covered too), and each trial with its events, call data, scores, verdicts
    (the view's rows, ``VIEWED``) and model turns (those its store has), keyed ``task/agent/trial``. Rows are
    streamed in order, so a large store is never held in memory."""
    with RunStore.open(run_dir, readonly=True) as store:
        schema = [
            tuple(row)
            for row in store.db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")
            if not row[1].startswith("sqlite_")
        ]
        tables = {
            name: table_digest(store.db, name)
            for kind, name, _, _ in schema
            if kind == "table" and name not in ("trials", *TRIAL_TABLES, *VIEWED)
        }
        present = {name for kind, name, _, _ in schema if kind in ("table", "view")}
        streams = [by_trial(store.db, table) for table in TRIAL_TABLES if table in present]
        heads = [next(stream, None) for stream in streams]
        trials = {}
        for row in store.db.execute("SELECT * FROM trials ORDER BY trial_id"):
            parts: list[Any] = [tuple(row)[1:]]
            for i, stream in enumerate(streams):
                head = heads[i]
                while head is not None and head[0] < row[0]:
                    head = heads[i] = next(stream, None)
                parts.append(head[1] if head is not None and head[0] == row[0] else [])
            trials[f"{row['task_id']}/{row['agent']}/{row['trial']}"] = digest(parts)
    return {"schema": digest(schema), "tables": tables, "trials": trials}


def table_digest(db: sqlite3.Connection, table: str) -> str:
    """A digest of a table's rows, ordered by all their columns."""
    name = '"' + table.replace('"', '""') + '"'
    columns = len(db.execute(f"SELECT * FROM {name} LIMIT 0").description)
    h = hashlib.sha256()
    for row in db.execute(f"SELECT * FROM {name} ORDER BY {', '.join(map(str, range(1, columns + 1)))}"):
        h.update(canonical_json([*map(blob_text, row)]).encode())
    return "sha256:" + h.hexdigest()


def by_trial(db: sqlite3.Connection, table: str) -> Iterator[tuple[int, list[tuple]]]:
    """A per-trial table's rows (without the trial id), one trial at a time in trial-id order."""
    columns = len(db.execute(f"SELECT * FROM {table} LIMIT 0").description)
    rows = db.execute(f"SELECT * FROM {table} ORDER BY {', '.join(map(str, range(1, min(columns, 3) + 1)))}")
    return ((trial_id, [tuple(r)[1:] for r in group]) for trial_id, group in groupby(rows, key=itemgetter(0)))


def blob_text(value):
    return sha256(value) if isinstance(value, bytes) else value


def manifest(folder: Path) -> dict:
    """What a sign-off covers: the report files, the parameters and every run store the report is built on."""
    record = release_record(folder)
    files = {}
    for name in (*REPORT_FILES, RECORD, record["parameters"]):
        path = folder / name
        if not path.is_file():
            raise SpecError(path, "(file)", "missing: the release is not complete")
        files[name] = sha256(covered(name, path.read_bytes()) if name in REPORT_FILES else path.read_bytes())
    return {
        "release": folder.resolve().name,
        "files": files,
        "runs": {label: store_digests(folder / path) for label, path in sorted(record["runs"].items())},
    }


def changes(signed: dict, now: dict) -> list[str]:
    """What differs between a signed manifest and the release as it is, one line each."""
    found = list(differences(signed["files"], now["files"]))
    for label, then in signed["runs"].items():
        current = now["runs"].get(label)
        if current is None:
            found.append(f"run {label} missing")
            continue
        if current["schema"] != then["schema"]:
            found.append(f"run {label}: its schema changed")
        found += [f"run {label}: table {line}" for line in differences(then["tables"], current["tables"])]
        found += [f"run {label}: trial {line}" for line in differences(then["trials"], current["trials"])]
    return found


def differences(then: dict, now: dict) -> Iterator[str]:
    """``NAME changed``, ``NAME removed`` or ``NAME added`` for each name whose digest differs, by name (a run's
    trials are stored in the order they ended, which varies from run to run)."""
    for name in sorted(then):
        if now.get(name) != then[name]:
            yield f"{name} {'changed' if name in now else 'removed'}"
    yield from (f"{name} added" for name in sorted(now) if name not in then)


# --- signing and verifying ------------------------------------------------------------------------------------


class Statement(TypedDict, total=False):
    """What a reviewer signs (``follows`` is missing only in a sign-off from before the chain)."""

    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]
    manifest: Required[str]
    follows: str | None
    reviewer: Required[str]
    role: Required[str]
    decision: Required[Decision]
    comment: Required[str]
    time: Required[str]
    withdraws: int


class Entry(TypedDict):
    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]
    statement: Statement
    key: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9+/]{43}=$")]
    """The reviewer's Ed25519 public key, base64."""
    signature: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9+/]{86}==$")]


class SignoffFile(TypedDict):
    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]
    manifests: dict[str, dict]
    signatures: list[Entry]


SIGNOFF_FILE = TypeAdapter(SignoffFile)


def read_signoff(folder: Path) -> dict:
    """``signoff.json`` of a release folder (empty when there is none); a malformed one is a SpecError naming the
    field."""
    path = folder / SIGNOFF
    if not path.exists():
        return {"manifests": {}, "signatures": []}
    try:
        return dict(SIGNOFF_FILE.validate_json(path.read_bytes()))
    except ValidationError as exc:
        raise SpecError.from_validation(path, exc) from None


UNCHAINED = "signed before signatures were chained; move it aside and sign the release again"


def unchained(signatures: list[dict]) -> bool:
    return any("follows" not in entry["statement"] for entry in signatures)


def intact(signatures: list[dict]) -> list[dict]:
    """The signatures up to the first one that does not follow the entry before it."""
    for n, entry in enumerate(signatures):
        if entry["statement"].get("follows", "unchained") != link(signatures[:n]):
            return signatures[:n]
    return signatures


def withdrawal_refused(signed: dict[int, dict], statement: dict, key: str) -> str | None:
    """Why a withdrawal cannot follow the signatures ``signed`` (by number), or None: it withdraws an approval or
    rejection still standing, signed by the same reviewer, in the same role, with the same key."""
    n = statement["withdraws"]
    target = standing(signed).get(n)
    if target is None:
        return f"withdraws #{n}, which is not an approval or rejection standing before it"
    was = target["statement"]
    if (was["reviewer"], was["role"], target["key"]) != (statement["reviewer"], statement["role"], key):
        fingerprint = PublicKey(was["reviewer"], target["key"]).fingerprint
        return (
            f"withdraws #{n}, signed by {was['reviewer']} ({was['role']}) with key {fingerprint}: only that "
            "reviewer, role and key withdraw it"
        )
    return None


def several_roles(approvals: list[dict]) -> list[tuple[set, str]]:
    """Each reviewer who approves in more than one role among ``approvals`` (entries): their names and keys, and the
    problem. A name and every key it signed with are one reviewer, so are two names signing with one key."""
    people: list[tuple[set, set]] = []
    for entry in approvals:
        ids = {("name", entry["statement"]["reviewer"]), ("key", entry["key"])}
        joined = [p for p in people if p[0] & ids]
        people = [p for p in people if not p[0] & ids] + [
            (ids.union(*(p[0] for p in joined)), {entry["statement"]["role"]}.union(*(p[1] for p in joined)))
        ]
    return [
        (
            ids,
            f"{' / '.join(sorted(name for kind, name in ids if kind == 'name'))} approves as "
            f"{' and '.join(sorted(roles))}: one reviewer (a name, or a key under any name) approves in one "
            f"role unless the release's parameters set {SEVERAL_ROLES}",
        )
        for ids, roles in people
        if len(roles) > 1
    ]


def refuse(folder: Path, signatures: list[dict], statement: dict, key: str) -> None:
    """A SpecError when ``statement``, by ``key``, may not follow ``signatures``: a withdrawal of what it cannot
    withdraw, or an approval in a second role by one reviewer where the release allows one."""
    signed = dict(enumerate(signatures, 1))
    if statement["decision"] == "withdraw" and (refused := withdrawal_refused(signed, statement, key)):
        raise SpecError(folder / SIGNOFF, "--withdraws", refused)
    if statement["decision"] == "approve" and release_record(folder).get(SEVERAL_ROLES) is not True:
        approvals = [e for e in standing(signed).values() if e["statement"]["decision"] == "approve"]
        if problem := second_role(approvals, {"statement": statement, "key": key}):
            raise SpecError(folder / RECORD, SEVERAL_ROLES, problem)


def second_role(approvals: list[dict], entry: dict) -> str | None:
    """Why the approval ``entry`` makes a reviewer of ``approvals`` approve in a second role, or None."""
    for ids, problem in several_roles([*approvals, entry]):
        if ("key", entry["key"]) in ids:
            return problem
    return None


def sign(
    folder: Path,
    reviewer: str,
    role: str,
    key_file: Path,
    decision: Decision,
    comment: str = "",
    withdraws: int | None = None,
) -> dict:
    """Sign the release as it is now, after the last signature of ``signoff.json``; returns the sign-off as written.

    A withdrawal names the number of the signature it withdraws; its role is that signature's unless given."""
    key = private_key(key_file)
    raw = base64.b64encode(
        key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    ).decode()
    signoff = read_signoff(folder)
    signatures = signoff["signatures"]
    if len(intact(signatures)) < len(signatures):
        raise SpecError(
            folder / SIGNOFF,
            "(file)",
            UNCHAINED
            if unchained(signatures)
            else "its chain is broken (forge verify names where); it cannot be signed further",
        )
    if (decision == "withdraw") != (withdraws is not None):
        raise SpecError(
            "--withdraws", "(value)", "the number of the signature withdrawn, with --decision withdraw only"
        )
    if withdraws is not None:  # a withdrawal, as checked above
        role = role or (signatures[withdraws - 1]["statement"]["role"] if 0 < withdraws <= len(signatures) else "")
    elif not role:
        raise SpecError("--role", "(value)", "required to approve or reject")
    covered = manifest(folder)
    statement: dict[str, Any] = {
        "manifest": digest(covered),
        "follows": link(signatures),
        "reviewer": reviewer,
        "role": role,
        "decision": decision,
        "comment": comment,
        "time": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    if withdraws is not None:
        statement["withdraws"] = withdraws
    refuse(folder, signatures, statement, raw)
    signoff["manifests"][statement["manifest"]] = covered
    signatures.append(
        {
            "statement": statement,
            "key": raw,
            "signature": base64.b64encode(key.sign(canonical_json(statement).encode())).decode(),
        }
    )
    (folder / SIGNOFF).write_text(json.dumps(signoff, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    show_signoff(folder, signoff)
    return signoff


def show_signoff(folder: Path, signoff: dict) -> None:
    """Rewrite the sign-off regions of the page and the notebook (the first-screen state and the section at the
    end) from ``signoff``: nothing a signature covers changes."""
    roles = release_record(folder)["roles"]
    for name in REPORT_FILES:
        path = folder / name
        path.write_text(with_signoff(path.read_text(encoding="utf-8"), signoff, roles, name), encoding="utf-8")


@dataclass
class Checked:
    """One signature as ``forge verify`` found it: ``#n reviewer (role, decision at time)``, what is wrong with it
    (nothing: it holds), and a note on one that holds but no longer counts (withdrawn)."""

    line: str
    problems: list[str] = field(default_factory=list)
    note: str = ""

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class Verification:
    """The outcome of ``forge verify``: each signature checked, the problems of the release as a whole (the roles
    without an approval among them), those roles, and the head verified."""

    signatures: list[Checked]
    problems: list[str]
    missing: list[str]
    head: str

    @property
    def ok(self) -> bool:
        return not self.problems and all(s.ok for s in self.signatures)


def verify(folder: Path, trusted: list[PublicKey], head: str | None = None) -> Verification:
    """Every signature valid, by a trusted key of its reviewer, over the release as it is and following the entry
    before it; no rejection standing; every role the release needs approved; ``head``, when given, in the chain; the
    report's sign-off regions showing ``signoff.json``. A signature that fails any check counts for nothing."""
    signoff, now, record = read_signoff(folder), manifest(folder), release_record(folder)
    signatures = signoff["signatures"]
    if unchained(signatures):
        return Verification([], [f"{SIGNOFF}: {UNCHAINED}"], [], "unchained")
    chain = intact(signatures)
    problems = [
        f"{name}: its sign-off state or section does not show the signatures in {SIGNOFF}"
        for name in REPORT_FILES
        if not file_shows((folder / name).read_text(encoding="utf-8", errors="replace"), signoff, record["roles"], name)
    ]
    if not signatures:
        problems.append("not signed")
    if head is not None and head not in map(digest, chain):
        problems.append(f"--head {head}: not in the chain; a signature was removed or replaced since it was pinned")
    checked = [Checked(who(n, entry)) for n, entry in enumerate(signatures, 1)]
    for later in checked[len(chain) :]:
        later.problems.append(
            "follows a signature that is missing, moved or changed"
            if later is checked[len(chain)]
            else f"not checked: the chain breaks at #{len(chain) + 1}"
        )
    signed: dict[int, dict] = {}
    for n, entry in enumerate(chain, 1):
        checked[n - 1].problems += signature_problems(entry, trusted, signoff["manifests"], now, signed)
        if checked[n - 1].ok:
            signed[n] = entry
    approvals = decisions(signed, checked, record.get(SEVERAL_ROLES) is True)
    approved_roles = {entry["statement"]["role"] for entry in approvals}
    missing = [role for role in record["roles"] if role not in approved_roles]
    problems += [f"no approval in the role {role}" for role in missing]
    return Verification(checked, problems, missing, chain_head(chain))


def signature_problems(entry: dict, trusted: list[PublicKey], manifests: dict, now: dict, signed: dict) -> list[str]:
    """What is wrong with one signature of the chain: its statement, its key, its manifest, what changed since, or
    a withdrawal of what it cannot withdraw (after the signatures ``signed`` that hold)."""
    statement = entry["statement"]
    key = PublicKey(statement["reviewer"], entry["key"])
    if not key.verifies(entry["signature"], canonical_json(statement).encode()):
        return ["the signature does not match its statement"]
    if key not in trusted:
        return [f"key {key.fingerprint} is not a trusted key of {statement['reviewer']}"]
    covered = manifests.get(statement["manifest"])
    if covered is None or digest(covered) != statement["manifest"]:
        return [f"the signed manifest in {SIGNOFF} was altered"]
    found = changes(covered, now)
    if statement["decision"] == "withdraw" and (refused := withdrawal_refused(signed, statement, entry["key"])):
        found.append(refused)
    return found


def decisions(signed: dict[int, dict], checked: list[Checked], several: bool) -> list[dict]:
    """The approvals that count among the signatures that hold (``signed``, by number); notes each withdrawn one, and
    fails a standing rejection and, unless ``several``, a reviewer's approval in a second role."""
    stand = standing(signed)
    withdrawn_by = {e["statement"]["withdraws"]: n for n, e in signed.items() if "withdraws" in e["statement"]}
    approvals: list[dict] = []
    for n, entry in signed.items():
        statement, found = entry["statement"], checked[n - 1]
        if n in withdrawn_by:
            found.note = f"withdrawn by #{withdrawn_by[n]}, no longer counts"
        elif n not in stand:  # a withdrawal
            continue
        elif statement["decision"] == "reject":
            found.problems.append(f"rejected{': ' + statement['comment'] if statement['comment'] else ''}")
        elif not several and (problem := second_role(approvals, entry)):
            found.problems.append(problem)
        else:
            approvals.append(entry)
    return approvals


def who(n: int, entry: dict) -> str:
    statement = entry["statement"]
    return f"#{n} {statement['reviewer']} ({statement['role']}, {decision_text(statement)} at {statement['time']})"
