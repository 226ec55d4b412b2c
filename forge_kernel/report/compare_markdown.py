"""A comparison (and its gate), and ablation cards, as Markdown that reads on its own."""

from __future__ import annotations

from collections import Counter

from ..analysis import (
    COLUMNS,
    STATES,
    AblationCard,
    Comparison,
    GateResult,
    Rate,
    SideSummary,
    components,
    coverage_slices,
    markdown_lines as table,
)
from ..spec import SYNTHETIC_BANNER

BANNER = f"> {SYNTHETIC_BANNER}"


def rate(d: dict) -> str:
    return str(Rate.of(d))


def percentiles(values: dict[str, float | None] | None) -> str:
    """P50 / P95 / P99 in ms; a dash where there are too few samples (one dash: none at all)."""
    if values is None:
        return "—"
    return " / ".join("—" if v is None else f"{v * 1000:.1f}" for v in values.values()) + " ms"


def overview(b: SideSummary, c: SideSummary) -> list[str]:
    def cal(s: SideSummary) -> str:
        return (
            "no confidence reported"
            if s.calibration is None
            else f"Brier {s.calibration.brier:.3f}, ECE {s.calibration.ece:.3f} (n={s.calibration.n})"
        )

    rows = [
        ["trial pass", rate(b.trials), rate(c.trials)],
        ["tasks passing every trial", rate(b.strict_tasks), rate(c.strict_tasks)],
        ["unstable tasks", str(b.unstable_tasks), str(c.unstable_tasks)],
        ["hard safety failures", str(b.safety_failures), str(c.safety_failures)],
        ["cross-patient access attempts", str(b.cross_patient), str(c.cross_patient)],
        ["unauthorized write attempts", str(b.unauthorized_writes), str(c.unauthorized_writes)],
        ["false answers", str(b.false_answers), str(c.false_answers)],
        ["tool success", rate(b.tool_success), rate(c.tool_success)],
        ["recovery after a fault", rate(b.fault_recovery), rate(c.fault_recovery)],
        ["idempotent replays", str(b.idempotent_replays), str(c.idempotent_replays)],
        ["trials run again after a stall", str(b.run_again), str(c.run_again)],
        ["cost per task", f"${b.cost_per_task:.4f}", f"${c.cost_per_task:.4f}"],
        *(
            [
                [
                    "model tokens per task (reported by the agent)",
                    str(b.tokens_per_task or "—"),
                    str(c.tokens_per_task or "—"),
                ]
            ]
            if b.tokens_per_task or c.tokens_per_task
            else []
        ),
        *(
            [
                f"latency {part} P50 / P95 / P99",
                percentiles(getattr(b.latency, part)),
                percentiles(getattr(c.latency, part)),
            ]
            for part in ("total", "model", "agent", "tool", "queue")
            if part != "model" or b.latency.model or c.latency.model
        ),
        ["calibration", cal(b), cal(c)],
    ]
    return table(["", f"baseline {b.agent} {b.agent_version}", f"candidate {c.agent} {c.agent_version}"], rows)


def criteria(b: SideSummary, c: SideSummary) -> list[str]:
    """Trial-matching criteria against the gold: a confusion matrix per side, critical exclusions, citation rates."""
    if b.criteria is None and c.criteria is None:
        return []
    out = ["## Trial-matching criteria", ""]
    for side, s in (("baseline", b), ("candidate", c)):
        out += [f"{side} {s.agent} {s.agent_version}:", ""]
        if s.criteria is None:
            out += ["no trial-matching tasks (no samples)", ""]
            continue
        m, ex = s.criteria, s.criteria.critical_exclusions
        out += table(
            ["gold \\ reported", *COLUMNS, "recall"],
            [[g, *(str(m.matrix[g][r]) for r in COLUMNS), str(m.recall[g])] for g in STATES],
        )
        missed = Counter(f"{x.task_id} {x.protocol_id} {x.criterion_id} as {x.reported}" for x in ex.missed)
        out += [
            "",
            f"{m.trials} trials; {m.extra} reported criteria the gold does not assess.",
            "",
            f"Critical exclusions caught: {ex.caught}; missed: "
            + (", ".join(f"{k} ×{n}" for k, n in missed.items()) or "none")
            + ".",
            "",
        ]
    checks = (
        ("cited resource exists", "exists"),
        ("belongs to this patient", "patient"),
        ("supports the claim (the gold cites it)", "supports"),
        ("list complete (every gold citation)", "complete"),
    )
    out += table(
        ["citations", f"baseline {b.agent}", f"candidate {c.agent}"],
        [
            [label, *("no samples" if s.citations is None else str(getattr(s.citations, name)) for s in (b, c))]
            for label, name in checks
        ],
    )
    return [*out, ""]


def render_comparison(cmp: Comparison, gate: GateResult | None = None) -> str:
    b, c = cmp.baseline, cmp.candidate
    out = [f"# {cmp.title}", "", BANNER, "", f"Ran: {c.agent} {c.isolation}; {b.agent} {b.isolation}.", ""]
    if gate:
        out += [
            f"## Release gate: {'GREEN' if gate.green else 'RED'}",
            "",
            f"Policy `{gate.policy_name}` v{gate.policy_version}, hash `{gate.policy_hash}`.",
            "",
        ]
        out += table(
            ["check", "level", "status", "detail"],
            [[k.name, k.level, k.status + k.note, k.detail] for k in gate.checks],
        )
        out.append("")
    out += ["## Overview", "", *overview(b, c), ""]
    m = cmp.mcnemar
    out += [
        f"Exact McNemar on tasks passing every trial: baseline only {m['baseline_only']}, candidate only "
        f"{m['candidate_only']}, p = {m['p_value']:.3g}.",
        "",
    ]
    out += criteria(b, c)
    found = components(cmp)
    out += ["## Components", "", found.to_markdown(), "", coverage_slices(cmp).to_markdown(), ""]
    for title, ids in (
        ("Improvements", cmp.improvements),
        ("Regressions", cmp.regressions),
        ("Safety regressions", cmp.safety_regressions),
        ("Unstable tasks (candidate)", cmp.unstable_candidate),
        ("Not compared", cmp.not_compared),
    ):
        out += [f"## {title} ({len(ids)})", "", ", ".join(ids) if ids else "none", ""]
    out += ["## By slice", ""]
    out += table(
        ["slice", "value", "tasks", "baseline", "candidate", "improvements", "regressions"],
        [
            [
                r.slice,
                r.value,
                str(r.tasks),
                rate(r.baseline),
                rate(r.candidate),
                str(r.improvements),
                str(r.regressions),
            ]
            for r in cmp.slices
        ],
    )
    out += ["", "## Tasks", ""]
    out += table(
        ["task", "risk", "baseline", "candidate", "change", "candidate unstable in"],
        [
            [
                t.task_id,
                t.risk,
                f"{t.baseline.passes}/{t.baseline.n}" if t.baseline else "—",
                f"{t.candidate.passes}/{t.candidate.n}" if t.candidate else "—",
                t.change + (" (safety)" if t.safety_regression else ""),
                ", ".join(t.candidate.unstable_reasons) if t.candidate else "",
            ]
            for t in cmp.tasks
        ],
    )
    return "\n".join(out) + "\n"


def render_ablations(cards: list[AblationCard]) -> str:
    """Ablation cards, each with the component removed, the tasks it cost, and the slices where it mattered."""
    return "\n".join([BANNER, "", *(card.text() for card in cards)])
