"""The judges (``judge.rubric``) of the suites a release ran, each against its labelled set: items, observed
agreement and Cohen's kappa with its 95% interval, kept in a cache keyed by the judges' params, model configs and
labelled sets.

``forge release`` fills the cache in a process of its own while the trials run
(``python -m forge_kernel.report.judges CACHE SUITE...``), as it does the kill rate: asking a judge's model about
every item of its set takes a model's time, which the report's notebook does not spend again.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from ..spec import canonical_json, find_packages, load_package


def judge_agreement_rows(suites: list[str], cache: Path | None = None) -> list[dict]:
    """``{name, identity, labelled_set, agreement}`` per judge of the suites' packages (agreement: ``str`` of the
    Kappa, or None without a labelled set); read from ``cache`` when it holds these judges, else asked and kept."""
    from ..analysis import cohens_kappa
    from ..engine import judge_agreements, judges_of

    packages = [load_package(folder) for folder in find_packages(list(suites))]
    key = judges_key(judges_of(packages))
    if cache is not None and cache.is_file():
        kept = json.loads(cache.read_text(encoding="utf-8"))
        if kept.get("key") == key:
            return kept["judges"]
    rows = (
        [
            {
                "name": a.name,
                "identity": a.identity,
                "labelled_set": str(a.labelled_set),
                "agreement": None if a.pairs is None else str(cohens_kappa(a.pairs)),
            }
            for a in judge_agreements(packages)
        ]
        if key != judges_key([])
        else []
    )
    if cache is not None:
        cache.write_text(
            json.dumps({"key": key, "judges": rows}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    return rows


def judges_key(judges: list[tuple[str, Path, Path]]) -> str:
    """The cache key of judges given as (params JSON, model config, labelled set): their texts' digests."""

    def digest(path: Path) -> str:
        return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "missing"

    return canonical_json(sorted([params, digest(model), digest(labelled)] for params, model, labelled in judges))


if __name__ == "__main__":
    judge_agreement_rows(sys.argv[2:], Path(sys.argv[1]))
