"""What the benchmark scripts share: the machine facts they record, and their own sections of RESULTS.md.

Each script owns one section of RESULTS.md (``benchmarks/run.py`` the header and benchmarks 1-5,
``benchmarks/scale.py`` benchmark 6, ``benchmarks/player.py`` benchmark 7, ``benchmarks/replay.py`` benchmark 8,
``benchmarks/release.py`` benchmark 9, ``benchmarks/timeline.py`` benchmark 10, ``benchmarks/llm.py`` benchmark 11,
``benchmarks/grading.py`` benchmark 12, ``benchmarks/images.py`` benchmark 13, ``benchmarks/first_paint.py``
benchmark 14, ``benchmarks/growth.py`` benchmark 15), marked by an HTML comment, and rewrites only that one.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
from pathlib import Path
from time import perf_counter

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).with_name("RESULTS.md")
ORDER = (
    "run.py",
    "scale.py",
    "player.py",
    "replay.py",
    "release.py",
    "timeline.py",
    "llm.py",
    "grading.py",
    "images.py",
    "first_paint.py",
    "growth.py",
)
"""The sections, in the order the file shows them."""
MARK = re.compile(r"^<!-- section: (\S+) -->\n", re.M)
PROCESS_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
"""The environment of a timed command: Python caches its bytecode, as it does for an installed package (a first,
untimed run writes the caches)."""


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def calibration() -> float:
    """Seconds for a fixed pure-Python loop: how fast this machine runs Python today."""
    started, total = perf_counter(), 0
    for i in range(10_000_000):
        total += i
    return perf_counter() - started


def git_state() -> str:
    def git(*args):
        out = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)
        return out.stdout.strip() if out.returncode == 0 else ""

    commit = git("rev-parse", "--short", "HEAD")
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", "forge_kernel")
    return f"{commit or 'unknown'}{' + uncommitted changes in forge_kernel/' if dirty else ''}"


def sections(text: str) -> dict[str, str]:
    """Section name -> its text; a file without marks is all ``run.py``'s."""
    parts = MARK.split(text)
    found = {ORDER[0]: parts[0]} if parts[0].strip() else {}
    found.update(zip(parts[1::2], parts[2::2]))
    return found


def write_section(name: str, text: str, path: Path = RESULTS) -> None:
    """Replace (or add) one script's section of RESULTS.md, keeping the others."""
    found = sections(path.read_text(encoding="utf-8")) if path.is_file() else {}
    found[name] = text
    path.write_text(
        "\n".join(f"<!-- section: {n} -->\n{found[n].rstrip()}\n" for n in ORDER if n in found), encoding="utf-8"
    )


def publish(name: str, text: str, quick: bool) -> None:
    """Print a script's section; unless ``quick``, write it to RESULTS.md too."""
    print(text)
    if not quick:
        write_section(name, text)
        print("wrote its section of benchmarks/RESULTS.md")
