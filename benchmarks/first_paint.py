"""Benchmark 14: the run dashboard's first paint in a fresh kernel (SYNTHETIC data only).

    .venv/bin/python benchmarks/first_paint.py          # 5 fresh kernels; writes RESULTS.md §14
    .venv/bin/python benchmarks/first_paint.py --quick  # 2 fresh kernels; writes nothing

Notebook 01's cells, as Lab sends them, each in a fresh IPython kernel started in notebooks/ (the sample run made
once beforehand, untimed, and the dashboard's Vega bundle built once, as after any first use): the cell that opens the
sample run, then the dashboard cell. Timed from the dashboard cell's request: until its output (the widgets' state
has gone to the page before it: what the browser paints), and until the charts' specs reach the page. The baseline,
in the same run: the same cell with the charts drawn before anything is shown (``_charts`` imported first, as the
dashboard did before). Goal: a first paint under 3 s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path
from time import perf_counter

from results import ROOT, calibration, git_state, write_section

OPEN = "from forge_kernel.widgets import sample_run\nrun = sample_run({folder!r}, progress=False)"
DASHBOARD = """{first}import ipywidgets as widgets

from forge_kernel.widgets import FailureBrowser, RunDashboard

failures = FailureBrowser(run)
dashboard = RunDashboard(run, failures=failures)
widgets.VBox([dashboard, failures])"""


def timed_cell(client, code: str, charts: bool = False) -> dict[str, float]:
    """Seconds from the request to the cell's output, to its end and (``charts``) to the charts' arrival."""
    started = perf_counter()
    msg_id = client.execute(code)
    seen: dict[str, float] = {}
    while "idle" not in seen or (charts and "charts" not in seen):
        message = client.get_iopub_msg(timeout=120)
        if message["parent_header"].get("msg_id") != msg_id and message["msg_type"] != "comm_msg":
            continue
        kind, content, at = message["msg_type"], message["content"], perf_counter() - started
        if kind == "error":
            raise RuntimeError("\n".join(content["traceback"]))
        if kind in ("display_data", "execute_result"):
            seen.setdefault("output", at)
        state = content.get("data", {}).get("state", {}) if kind in ("comm_open", "comm_msg") else {}
        if state.get("charts"):
            seen.setdefault("charts", at)
        if kind == "status" and content["execution_state"] == "idle":
            seen["idle"] = at
    return seen


def fresh_kernel(folder: Path, charts_first: bool) -> dict[str, float]:
    """One fresh kernel: the run opened, then the dashboard cell timed."""
    from jupyter_client.manager import start_new_kernel

    started = perf_counter()
    manager, client = start_new_kernel(kernel_name="python3", cwd=str(ROOT / "notebooks"))
    try:
        ready = perf_counter() - started
        opened = timed_cell(client, OPEN.format(folder=str(folder)))["idle"]
        cell = timed_cell(
            client, DASHBOARD.format(first="import forge_kernel.widgets._charts\n" if charts_first else ""), charts=True
        )
        return {"kernel": ready, "open": opened, **cell}
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 fresh kernels each way; writes nothing")
    args = parser.parse_args()
    repeats = 2 if args.quick else 5
    sys.path.insert(0, str(ROOT))
    from forge_kernel.widgets import sample_run
    from forge_kernel.widgets.dashboard import dashboard_esm

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "run"
        sample_run(folder, progress=False)
        dashboard_esm()
        rows = {
            charts_first: [fresh_kernel(folder, charts_first) for _ in range(repeats)] for charts_first in (True, False)
        }
    median = {
        charts_first: {k: statistics.median(r[k] for r in runs) for k in runs[0]} for charts_first, runs in rows.items()
    }
    before, after = median[True], median[False]
    text = f"""## 14. The dashboard's first paint in a fresh kernel

`benchmarks/first_paint.py` ({git_state()}; Python loop calibration {calibration():.2f} s). Notebook 01's dashboard
cell in a fresh kernel, after the cell that opens the sample run ({repeats} kernels each way, medians, seconds
from the cell's request):

| the dashboard cell | kernel start | opening the run | first paint (output sent) | charts sent |
|---|---:|---:|---:|---:|
| charts drawn first (Altair imported in the cell, the old way; baseline) | {before["kernel"]:.2f} | {before["open"]:.2f} | {before["output"]:.2f} | {before["charts"]:.2f} |
| charts drawn once the cell has shown the dashboard | {after["kernel"]:.2f} | {after["open"]:.2f} | {after["output"]:.2f} | {after["charts"]:.2f} |

First paint: {after["output"]:.2f} s against {before["output"]:.2f} s, a ratio of
{after["output"] / before["output"]:.2f} (goal: under 3 s). The charts come {after["charts"] - after["output"]:.2f} s
after it; most of that is importing Altair (its JSON Schema validator builds a grammar at import). The browser's
own drawing adds a fraction of a second (tests/browser/test_lab_notebooks.py).
"""
    print(text)
    if not args.quick:
        write_section("first_paint.py", text)


if __name__ == "__main__":
    main()
