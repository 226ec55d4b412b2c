"""The last approved release of a folder of releases: the baseline a new release is compared with by default."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..spec import SpecError
from .signoff import RECORD, SIGNOFF, read_signoff, release_record, trusted_keys, verify


@dataclass(frozen=True)
class Approved:
    """A release that verifies: where its candidate's run is, which agent, and when it was last approved."""

    folder: Path
    run: Path
    agent: str
    approved_at: str


def approved_releases(releases: Path, keys: Path) -> list[Approved]:
    """Every release folder under ``releases`` whose sign-off verifies with ``keys`` by forge verify's rules (the whole
    chain, no rejection standing, every role approved; a sign-off from before the chain never does), oldest approval
    first."""
    trusted = trusted_keys(keys) if keys.exists() else []
    found = []
    for folder in sorted(p for p in releases.iterdir() if (p / RECORD).is_file() and (p / SIGNOFF).is_file()):
        if not trusted or not verify(folder, trusted).ok:
            continue
        record = release_record(folder)
        times = [s["statement"]["time"] for s in read_signoff(folder)["signatures"]]
        agent = record.get("agents", {}).get("candidate")
        if agent and "candidate" in record["runs"]:
            found.append(Approved(folder, (folder / record["runs"]["candidate"]).resolve(), agent, max(times)))
    return sorted(found, key=lambda a: a.approved_at)


def last_approved(releases: Path, keys: Path, parameters: Path, exclude: str) -> Approved:
    """The newest approved release other than ``exclude``; a SpecError naming the parameters file when none is."""
    found = [a for a in approved_releases(releases, keys) if a.folder.name != exclude]
    if not found:
        raise SpecError(
            parameters,
            "baseline",
            f"last-approved: no release in {releases} is signed and verifies "
            f"with the keys in {keys}; name a baseline agent instead",
        )
    return found[-1]
