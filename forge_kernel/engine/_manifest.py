"""The run manifest: provenance of a run (code, packages, agents, seeds, host, times)."""

from __future__ import annotations

import platform
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

CODE_DIR = Path(__file__).resolve().parents[2]


def code_state() -> dict:
    """The git commit of the code and whether the work tree differs from it."""

    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(["git", "-C", str(CODE_DIR), *args], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return out.stdout.strip() if out.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no") if commit else None
    return {"commit": commit, "dirty": bool(status) if commit else None}


def forge_version() -> str:
    try:
        return version("medagent-forge")
    except PackageNotFoundError:
        return "unknown"


def build_manifest(run_id: str, spec: dict, packages: dict[str, str], agents: list[dict], started_at: str) -> dict:
    """Everything needed to say what produced a run."""
    return {
        "run_id": run_id,
        "spec": spec,
        "code": code_state(),
        "forge_version": forge_version(),
        "packages": packages,
        "agents": agents,
        "started_at": started_at,
        "host": {"hostname": platform.node(), "platform": platform.platform(), "python": sys.version.split()[0]},
    }
