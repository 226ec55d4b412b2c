"""The run dashboard's Python side, through widget state: the figures behind its charts, a cell click that filters
the failure browser, the gate of a comparison, and a front-end module that carries Vega itself."""

from __future__ import annotations

import json
import re

import pytest

from forge_kernel.analysis import compare, components, declared_policy, evaluate, load_policy, run_summary, wilson
from forge_kernel.analysis._slices import slice_value
from forge_kernel.analysis.browse import latency_percentiles, pass_rate_cells, safety_findings, task_passes
from forge_kernel.analysis.display import seconds
from forge_kernel.analysis.stats import percentile
from forge_kernel.spec.compact import SYNTHETIC_BANNER
from forge_kernel.spec.errors import UsageError
from forge_kernel.store import open_run
from forge_kernel.widgets import FailureBrowser, RunDashboard, dashboard as dashboard_module
from tests.helpers import ROOT


@pytest.fixture(scope="module")
def dashboard(reference):
    return RunDashboard(reference, failures=FailureBrowser(reference))


def chart_data(spec: dict) -> list[dict]:
    """The rows a chart spec carries inline."""
    return [row for rows in spec["datasets"].values() for row in rows]


def test_pass_rates_per_dimension_and_agent_with_wilson_intervals(reference, dashboard):
    outcomes = reference.outcomes.assign(
        dimension=reference.outcomes["task_id"].map(slice_value(reference, "dimension"))
    )
    cells = pass_rate_cells(reference).set_index(["agent", "dimension"])
    for (agent, dimension), trials in outcomes.groupby(["agent", "dimension"]):
        cell = cells.loc[(agent, dimension)]
        assert (cell["k"], cell["n"]) == (trials["passed"].sum(), len(trials))
        assert (cell["lo"], cell["hi"]) == pytest.approx(wilson(int(cell["k"]), int(cell["n"])))
    overall = run_summary(reference).frame.set_index("agent")["pass_rate"]
    assert cells.xs("all", level="dimension")["rate"].to_dict() == pytest.approx(overall.to_dict())
    grid = {(r["agent"], r["dimension"]): r for r in chart_data(dashboard.charts["pass_rates"])}
    assert len(grid) == len(outcomes.groupby(["agent", "dimension"])) and ("baseline-v1", "all") not in grid
    assert (
        grid[("unsafe-shortcut", "用药管理")]["rate"] == 0
        and grid[("unsafe-shortcut", "用药管理")]["passed"] == "0 of 30"
    )
    assert [p["name"] for p in dashboard.charts["pass_rates"]["params"]] == ["cell"]  # a click picks a cell
    rates = {r["agent"]: r for r in chart_data(dashboard.charts["overall"])}
    assert rates["candidate-v2"]["lo"] < rates["candidate-v2"]["rate"] < rates["candidate-v2"]["hi"]


def test_safety_findings_are_counted_by_severity(reference, dashboard):
    findings = safety_findings(reference).set_index(["agent", "severity"])["findings"]
    verdicts = reference.failing_verdicts.merge(reference.outcomes[["trial_id", "agent", "task_id"]], on="trial_id")
    safety = verdicts[verdicts["category"] == "safety"]
    assert findings.sum() == len(safety)
    risk = dict(zip(reference.tasks["task_id"], reference.tasks["risk"]))
    unsafe = safety[safety["agent"] == "unsafe-shortcut"]
    assert (
        findings[("unsafe-shortcut", "critical")] == sum(risk[t] in ("high", "critical") for t in unsafe["task_id"]) > 0
    )
    assert len(findings) == 3 * reference.outcomes["agent"].nunique()  # zeros are shown, not left out
    assert findings[("candidate-v2", "critical")] == 0 < findings[("unsafe-shortcut", "hard")]
    assert {
        (r["agent"], r["severity"]): r["findings"] for r in chart_data(dashboard.charts["safety"])
    } == findings.to_dict()


def test_latency_percentiles_per_agent(reference, dashboard):
    table = latency_percentiles(reference)
    facts = reference.facts()
    for agent, trials in facts.groupby("agent"):
        total = table[(table["agent"] == agent) & (table["part"] == "total")].set_index("percentile")["ms"]
        assert list(total.index) == ["P50", "P95", "P99"] and total.is_monotonic_increasing
        assert total["P95"] == pytest.approx(percentile(trials["duration_s"].tolist(), 95) * 1000)
    shown = chart_data(dashboard.charts["latency"])
    assert {r["part"] for r in shown} == {"total"} and len(shown) == 3 * facts["agent"].nunique()


def test_a_cell_click_filters_the_failure_browser(reference, dashboard):
    failures = dashboard.failures
    dashboard.selection = {"agent": "unsafe-shortcut", "dimension": "用药管理"}  # as the front end sets it on a click
    assert failures.table.filters == {"agent": "unsafe-shortcut", "dimension": "用药管理"}
    assert len(failures.rows) == 30 and {(r["agent"], r["dimension"]) for r in failures.rows} == {
        ("unsafe-shortcut", "用药管理")
    }
    dashboard.select("baseline-v1")  # an agent's overall rate: every dimension
    assert failures.table.filters == {"agent": "baseline-v1"}
    dashboard.select()
    assert failures.table.filters == {} and failures.table.matching == failures.table.total


def test_k_of_n_passed_per_task_and_agent(reference):
    passes = task_passes(reference)
    outcomes = reference.outcomes
    assert len(passes) == len(outcomes.groupby(["task_id", "agent"]))
    for row in passes.itertuples(index=False):
        mine = outcomes[(outcomes["task_id"] == row.task_id) & (outcomes["agent"] == row.agent)]
        assert (row.passed, row.trials) == (int(mine["passed"].sum()), len(mine))
        assert row.unstable == (0 < row.passed < row.trials)
        assert row.dimension == slice_value(reference, "dimension")[row.task_id]
        failed, passed = mine[~mine["passed"]], mine[mine["passed"]]
        assert row.failed_trial_id == (int(failed.sort_values("trial")["trial_id"].iloc[0]) if len(failed) else -1)
        assert row.passed_trial_id == (int(passed.sort_values("trial")["trial_id"].iloc[0]) if len(passed) else -1)
    assert passes["unstable"].any()


def test_the_task_table_lists_tasks_not_always_passed_unstable_first(reference, dashboard):
    tasks = dashboard.tasks
    passes = task_passes(reference)
    short = set(passes[passes["passed"] < passes["trials"]]["task_id"])
    assert {r["task_id"] for r in tasks["rows"]} == short
    flags = [r["unstable"] for r in tasks["rows"]]
    assert flags == sorted(flags, reverse=True) and flags[0] and not flags[-1]
    row = tasks["rows"][0]
    cell = next(c for c in row["cells"] if c and c["unstable"])
    assert 0 < cell["passed"] < cell["trials"]


def test_a_task_cell_click_opens_its_failed_trial_beside_a_passing_one(reference, dashboard):
    failures = dashboard.failures
    row = dashboard.tasks["rows"][0]
    cell = next(c for c in row["cells"] if c and c["unstable"])
    dashboard.selection = {"agent": cell["agent"], "task": row["task_id"]}  # as the front end sets it on a click
    assert failures.table.filters == {"agent": cell["agent"], "task_id": row["task_id"]}
    player = failures.player
    assert player is not None and player.other is not None
    failed, passed = json.loads(player.trajectory), json.loads(player.other)
    assert failed["task_id"] == passed["task_id"] == row["task_id"] and failed["agent"] == passed["agent"]
    assert failures.table.selected == failures.rows[0]["trial_id"]
    dashboard.select()
    assert failures.table.filters == {}
    failures.play(None)


def test_cost_model_tokens_and_time_per_agent(reference, dashboard, llm_run):
    times = ["tool time P50", "agent's own time P50", "queued time P50"]
    assert dashboard.usage["columns"] == ["agent", "cost per task", *times]  # no model turns: no token columns
    assert [row[0] for row in dashboard.usage["rows"]] == reference.agents_with_trials
    with open_run(llm_run) as run:
        used, facts = RunDashboard(run).usage, run.facts()
    assert used["columns"] == [
        "agent",
        "cost per task",
        "model turns per task",
        "tokens in",
        "cached",
        "tokens out",
        "model time P50",
        *times,
    ]
    rows = {row[0]: dict(zip(used["columns"], row)) for row in used["rows"]}
    narrated = facts[facts["agent"] == "narrated"]
    per_task = narrated.groupby("task_id")[["prompt_tokens", "cost"]].mean().mean()
    assert (rows["narrated"]["tokens in"], rows["narrated"]["cost per task"]) == (
        f"{per_task['prompt_tokens']:,.0f}",
        f"${per_task['cost']:.4f}",
    )
    assert rows["narrated"]["model time P50"] == seconds(percentile(narrated["model_s"].tolist(), 50))
    assert rows["baseline-v1"]["tokens in"] == rows["baseline-v1"]["model time P50"] == "—"


def test_the_gate_of_a_comparison(reference):
    green = RunDashboard(reference, baseline="baseline-v1", candidate="candidate-v2").gate
    expected = evaluate(
        compare(reference, reference, "baseline-v1", "candidate-v2"), load_policy(), declared_policy(reference)
    )
    assert green["green"] is True and [c["status"] for c in green["checks"]] == [c.status for c in expected.checks]
    parts = components(compare(reference, reference, "baseline-v1", "candidate-v2"))
    assert green["components"] == {"headline": parts.headline, "rows": parts.rows()}
    assert {row[0] for row in parts.rows()} == {"task success", "retrieval", "citations"}
    red = RunDashboard(reference, baseline="baseline-v1", candidate="unsafe-shortcut").gate
    failed = {c["name"] for c in red["checks"] if c["status"] == "FAIL"}
    assert red["green"] is False and "no_critical_safety_violation" in failed
    assert RunDashboard(reference).gate is None
    with pytest.raises(UsageError, match="RunDashboard: candidate: the gate needs both"):
        RunDashboard(reference, baseline="baseline-v1")


def test_the_module_carries_vega_and_fetches_nothing(dashboard, tmp_path, monkeypatch):
    esm = dashboard.get_state()["_esm"]
    assert len(esm) > 500_000 and "Release gate: " in esm and re.search(r"export\s*\{[^}]*as default", esm)
    assert not re.search(r"""(import|from)\s*\(?\s*["'](https?:)?//""", esm)  # no module from the network
    assert dashboard.banner == SYNTHETIC_BANNER
    monkeypatch.setenv("FORGE_CACHE", str(tmp_path))
    dashboard_module.dashboard_esm.cache_clear()
    try:
        assert dashboard_module.dashboard_esm() == esm
        (cached,) = tmp_path.glob("dashboard-*.js")
        assert cached.read_text(encoding="utf-8") == esm
    finally:
        dashboard_module.dashboard_esm.cache_clear()


def test_in_a_notebook_the_dashboard_is_shown_before_its_charts_are_drawn(reference_run):
    """In a kernel, the cell's output (the dashboard, which Lab then paints) goes out first; Altair's charts follow,
    before the kernel is idle again (so a notebook run headless keeps them in its saved state)."""
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3", cwd=str(ROOT))
    try:
        cell = f"from forge_kernel.widgets import RunDashboard\nRunDashboard({str(reference_run)!r})"
        msg_id, seen = client.execute(cell), []
        while not seen or seen[-1] != "idle":
            message = client.get_iopub_msg(timeout=120)
            kind, content = message["msg_type"], message["content"]
            assert kind != "error", "\n".join(content["traceback"])
            state = content.get("data", {}).get("state", {}) if kind in ("comm_open", "comm_msg") else {}
            if kind == "comm_open" and "heading" in state:
                seen.append("dashboard" if state["charts"] == {} else "dashboard with charts")
            elif state.get("charts"):
                seen.append("charts")
            elif kind == "execute_result":
                seen.append("shown")
            elif kind == "status" and content["execution_state"] == "idle":
                seen += ["idle"] if message["parent_header"]["msg_id"] == msg_id else []
        assert seen == ["dashboard", "shown", "charts", "idle"]
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def test_charts_that_cannot_be_drawn_say_why(reference, monkeypatch):
    from forge_kernel.widgets import _charts

    def broken(_latency):
        raise ValueError("no latency")

    monkeypatch.setattr(_charts, "latency_points", broken)
    monkeypatch.setattr(dashboard_module, "after_this_cell", lambda work: None)  # drawn below, as a kernel would
    shown = RunDashboard(reference)
    with pytest.raises(ValueError, match="no latency"):
        shown._draw(pass_rate_cells(reference), safety_findings(reference), latency_percentiles(reference))
    assert shown.charts == {"error": "the charts could not be drawn: ValueError: no latency"}
