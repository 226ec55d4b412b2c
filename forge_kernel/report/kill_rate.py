"""The mutation kill rate of the suites a release ran: how many generic mutants of the gold solutions their
verifiers reject (``forge selftest --mutants``), kept in a cache keyed by the packages' hashes.

``forge release`` fills the cache in a process of its own while the trials run
(``python -m forge_kernel.report.kill_rate CACHE SUITE...``); the report reads it, keyed by the hashes its
candidate run recorded, and computes it only when the cache holds other packages.
"""

from __future__ import annotations

import asyncio
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..spec import canonical_json, find_packages, load_package


def packages_key(hashes) -> str:
    """The cache key of a set of packages: their content hashes, sorted."""
    return canonical_json(sorted(hashes))


def mutation_kill_rate(suites: list[str], cache: Path | None = None, hashes=None) -> dict:
    """``{key, packages, mutants, rejected, declared_valid, survived, wrongly_rejected, rate, by_operator}`` over
    every package of the suites; read from ``cache`` when it holds the packages whose ``hashes`` are given (or
    those found in the suites), else computed and written there."""
    packages = None
    if hashes is None:
        packages = [load_package(folder) for folder in find_packages(list(suites))]
        hashes = [p.package_hash for p in packages]
    key = packages_key(hashes)
    if cache is not None and cache.is_file():
        kept = json.loads(cache.read_text(encoding="utf-8"))
        if kept.get("key") == key:
            return kept
    if packages is None:
        packages = [load_package(folder) for folder in find_packages(list(suites))]
    result = {"key": packages_key(p.package_hash for p in packages), **in_thread(count_mutants(packages))}
    if cache is not None:
        cache.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return result


def in_thread(coro):
    """Run a coroutine to its end in a thread of its own (a notebook's kernel already runs an event loop)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


async def count_mutants(packages) -> dict:
    """The packages' mutants graded and counted by status, per operator; operators whose mutants must pass are left
    out (a kill rate counts what must be rejected)."""
    from ..engine import Images, mutation_test, operator_totals
    from ..verify import MUST_PASS

    images = Images()
    reports = [await mutation_test(p, images) for p in packages]
    by_operator = {op: dict(c) for op, c in operator_totals(reports).items() if c and op not in MUST_PASS}
    totals = {
        status: sum(c.get(status, 0) for c in by_operator.values())
        for status in ("rejected", "declared valid", "survived", "declared valid, rejected")
    }
    judged = totals["rejected"] + totals["survived"]
    return {
        "packages": len(packages),
        "mutants": sum(totals.values()),
        "rejected": totals["rejected"],
        "declared_valid": totals["declared valid"],
        "survived": totals["survived"],
        "wrongly_rejected": totals["declared valid, rejected"],
        "rate": totals["rejected"] / judged if judged else None,
        "by_operator": by_operator,
    }


if __name__ == "__main__":
    mutation_kill_rate(sys.argv[2:], Path(sys.argv[1]))
