"""A small run of the bundled packages for the notebooks: a few packages of every dimension, the six reference agents,
three trials each (324 trials, a few seconds, with a progress bar), made once into a folder and reused after.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from ..agents import REFERENCE_SET
from ..engine import RunSpec, execute
from ..spec import DEFAULT_GATE, UsageError
from ..store import DB_NAME, Run, open_run

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ROOT / "task_packages"
SAMPLE = {
    "superclue": (
        "SC-MED-GASTRIC-ULCER",
        "SC-MED-DM-RENAL-DOSE",
        "SC-DEV-NG-TUBE",
        "SC-DEV-CHEST-DRAIN",
        "SC-OPS-ABPM",
        "SC-OPS-ADMISSION",
        "SC-IR-VITALS-24H",
        "SC-IR-ALLERGIES",
        "SC-DA-GLUCOSE-TREND",
        "SC-DA-BMI",
        "SC-EXM-HEAD-CT",
        "SC-EXM-ABDOMINAL-CT",
        "SC-DDX-HEMATEMESIS",
        "SC-DDX-CHEST-PAIN",
    ),
    "forge-nsclc": ("TP-CONFLICT-v1", "TP-OUT-OF-DOMAIN-v1", "TP-ANC-UNKNOWN-v1", "TP-CROSS-PATIENT-v1"),
}
"""Two or three packages per dimension, chosen so the sample shows what the full suites do: improvements of
candidate-v2 over baseline-v1, flaky-simulator's instability, unsafe-shortcut's safety failures and what each
ablation costs."""


def _blocking(coroutine) -> object:
    """Run a coroutine to its end, also from a notebook whose event loop is already running (in a thread)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    box: dict = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coroutine)
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=target, name="forge-sample-run")
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


def sample_run(folder: str | Path, trials: int = 3, progress: bool = True) -> Run:
    """The sample run in ``folder``: made there (with a progress bar) unless it holds it already, then opened.
    A folder holding another run is a StoreError."""
    if not PACKAGES.is_dir():
        raise UsageError(PACKAGES, "(folder)", "the bundled packages are not here (a source checkout has them)")
    folder = Path(folder)
    suite = [str(PACKAGES / suite / task) for suite, tasks in SAMPLE.items() for task in tasks]
    spec = RunSpec(suite=suite, agents=list(REFERENCE_SET), trials=trials, seed=0, gate=str(DEFAULT_GATE))
    _blocking(execute(spec, folder, resume=(folder / DB_NAME).exists(), progress=progress))
    return open_run(folder)
