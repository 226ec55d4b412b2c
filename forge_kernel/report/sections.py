"""The sections of a release report, in the order it is read: first screen (banner, verdict, provenance), the
gates, task metrics, regression highlights, ablation cards, safety, latency and cost, calibration, the failure
ledger, the mutation kill rate. Each takes a ``ReleaseReport`` and returns a ``Section``. ``judge_agreement``, which
asks the judges' models, takes the suites and is not in the release template."""

from __future__ import annotations

from html import escape

import pandas as pd

from .. import analysis
from ..analysis import Rate, counts_against, seconds
from ..spec import SYNTHETIC_BANNER
from ..widgets import player_html, player_module
from ._chain import digest
from ._charts import delta_chart, latency_chart, rates_chart, reliability_chart
from ._html import Markup, Section, badge, para, table
from ._intervals import delta_interval
from .release import MAX_FAILED, ReleaseReport
from .signoff_section import state_placeholder

STYLE = Markup("""<style>
.forge-release { font-family: "Forge CJK", system-ui, sans-serif; max-width: 1100px; }
.forge-release h2 { border-bottom: 2px solid #d1d5db; padding-bottom: 4px; margin-top: 28px; }
.forge-banner { background: #fef3c7; border: 2px solid #b45309; color: #78350f; padding: 8px 12px; font-weight: 700; }
.forge-verdict { font-size: 1.3em; padding: 12px 16px; margin: 12px 0; border-radius: 6px; }
.forge-verdict.red, .forge-card.red { background: #fee2e2; border: 2px solid #b91c1c; }
.forge-verdict.green, .forge-card.green { background: #dcfce7; border: 2px solid #15803d; }
.forge-verdict.amber { background: #fef3c7; border: 2px solid #b45309; }
.forge-verdict.grey { background: #f3f4f6; border: 2px solid #6b7280; }
.forge-signoff-state p { margin: 2px 0; }
.forge-verdict ul { font-size: 0.8em; margin: 6px 0 0; }
.forge-card { padding: 8px 14px; margin: 12px 0; border-radius: 6px; }
.forge-table { border-collapse: collapse; margin: 8px 0; font-size: 0.92em; }
.forge-release .forge-table th, .forge-release .forge-table td { border: 1px solid #d1d5db; padding: 3px 8px;
  text-align: left !important; vertical-align: top; }
.forge-table th { background: #f3f4f6; }
.forge-table tr.red td { background: #fee2e2; } .forge-table tr.green td { background: #dcfce7; }
.forge-table tr.amber td { background: #fef3c7; }
.badge { font-weight: 700; padding: 1px 8px; border-radius: 4px; color: #fff; white-space: nowrap; }
.badge.red { background: #b91c1c; } .badge.green { background: #15803d; } .badge.amber { background: #b45309; }
.badge.grey { background: #4b5563; }
.forge-player { margin: 8px 0 24px; }
.forge-player h3 { scroll-margin-top: 8px; }
</style>""")


def rate(d: dict) -> str:
    return str(Rate.of(d))


def pct(x: float | None) -> str:
    return "—" if x is None else f"{x:+.0%}"


def interval(ci: tuple[float, float] | None) -> str:
    return "—" if ci is None else f"[{ci[0]:+.0%}, {ci[1]:+.0%}]"


# --- first screen -------------------------------------------------------------------------------------------------


def first_screen(rep: ReleaseReport) -> Section:
    """The banner, the sign-off state (who approved, who rejected and why, which roles are still to approve: signing
    rewrites it), the gate's colour and why, and what the release is."""
    cmp, gate = rep.comparison, rep.gate
    if gate.green:
        verdict = f'<div class="forge-verdict green">{badge("GATE GREEN", "green")} no check of the gate blocks this release</div>'
    else:
        why = "".join(
            f"<li><b>{escape(c.name)}</b> ({c.level}) {escape(c.status)}: {escape(c.detail)}</li>"
            for c in gate.red_because
        )
        verdict = (
            f'<div class="forge-verdict red">{badge("GATE RED", "red")} this release is blocked because:'
            f"<ul>{why}</ul></div>"
        )
    return Section(
        "release",
        f"Release {rep.release}: {cmp.title}",
        state_placeholder(),
        Markup(verdict),
        para(
            f"Candidate {cmp.candidate.agent} {cmp.candidate.agent_version} against the baseline "
            f"{cmp.baseline.agent} {cmp.baseline.agent_version} ({rep.baseline_source}); "
            f"{rep.trials} trial(s) per task on {suites_text(rep)}.",
            cmp.headline,
        ),
        provenance(rep),
        lead=STYLE + f'<div class="forge-banner">{escape(SYNTHETIC_BANNER)}</div>',
    )


def suites_text(rep: ReleaseReport) -> str:
    """``82 packages of the suites superclue, forge-nsclc``, from the candidate run."""
    tasks = rep.runs["candidate"].tasks
    return f"{len(tasks)} package(s) of the suite(s) {', '.join(sorted(set(tasks['suite'])))}"


def provenance(rep: ReleaseReport) -> Markup:
    """Per run: run id, code commit, package and hidden-half hashes, agent and version, seed, environment."""
    rows = []
    for label, run in rep.runs.items():
        m, trials = run.manifest, run.trials
        code = m.get("code") or {}
        hidden = digest(sorted(set(zip(trials["task_id"], trials["hidden_hash"]))))
        agents = ", ".join(f"{a['name']} {a['version']} ({a.get('isolation', '?')})" for a in m["agents"])
        host = m.get("host") or {}
        rows.append(
            [
                label,
                run.run_id,
                f"{(code.get('commit') or '?')[:12]}{' (dirty)' if code.get('dirty') else ''}",
                f"{len(m['packages'])} · {digest(m['packages'])[:19]}",
                hidden[:19],
                agents,
                str(m["spec"]["seed"]),
                f"forge {m.get('forge_version')} · Python {host.get('python')} · "
                f"{host.get('platform')} · sandbox {(m.get('sandbox') or {}).get('mode')}",
                (m.get("gate_policy") or {}).get("hash", "none declared")[:19],
            ]
        )
    return Markup(
        "<h3>Provenance</h3>"
        + table(
            [
                "run",
                "run id",
                "code commit",
                "packages · hash",
                "hidden halves hash",
                "agent (how it ran)",
                "seed",
                "environment",
                "declared gate",
            ],
            rows,
        )
        + para(f"Gate policy {rep.gate.policy_name} v{rep.gate.policy_version}: {rep.gate.policy_hash}")
    )


# --- gates and metrics ------------------------------------------------------------------------------------------


def gates(rep: ReleaseReport) -> Section:
    """Every check, hard ones first: PASS / FAIL / NOT RUN, red where it blocks the release, green where not."""
    checks = sorted(rep.gate.checks, key=lambda c: c.level != "hard")
    rows, colours = [], []
    for c in checks:
        colour = "red" if counts_against(c) else "green"
        rows.append([badge(c.status + c.note, colour), c.level, c.name, c.detail])
        colours.append(colour)
    return Section(
        "gates",
        "Gates (hard gates first)",
        table(["status", "level", "check", "detail"], rows, colours),
        para(
            "Red blocks the release; NOT RUN is never a pass: only a soft check the policy lists as "
            "optional or waived does not block."
        ),
    )


def metrics(rep: ReleaseReport) -> Section:
    """Overall figures and every slice, with Wilson 95% intervals and sample sizes."""
    cmp = rep.comparison
    b, c = cmp.baseline, cmp.candidate
    overall = table(
        ["", "baseline", "candidate"],
        [
            ["trials passing", rate(b.trials), rate(c.trials)],
            ["tasks passing every trial", rate(b.strict_tasks), rate(c.strict_tasks)],
            ["tool calls succeeding", rate(b.tool_success), rate(c.tool_success)],
            ["recovered after an injected fault", rate(b.fault_recovery), rate(c.fault_recovery)],
            ["unstable tasks", b.unstable_tasks, c.unstable_tasks],
        ],
    )
    rows, colours, chart_rows = [], [], []
    for s in cmp.slices:
        rows.append([s.slice, s.value, s.tasks, rate(s.baseline), rate(s.candidate), s.improvements, s.regressions])
        colours.append("red" if s.regressions else "green" if s.improvements else None)
        if s.slice == "dimension":
            for side, r in (("baseline", s.baseline), ("candidate", s.candidate)):
                lo, hi = r["ci95"] or (r["rate"], r["rate"])
                chart_rows.append({"value": s.value, "side": side, "rate": r["rate"], "lo": lo, "hi": hi, "n": r["n"]})
    chart = rates_chart(chart_rows, "Tasks passing every trial, by dimension (95% interval)") if chart_rows else ""
    return Section(
        "metrics",
        "Task metrics",
        overall,
        Markup(chart),
        para("Per slice: tasks passing every trial, k/n with a Wilson 95% interval (too few samples below 10 tasks)."),
        table(["slice", "value", "tasks", "baseline", "candidate", "improved", "regressed"], rows, colours),
    )


def components(rep: ReleaseReport) -> Section:
    """Task success beside the agent's components (retrieval of the evidence, citations), candidate against
    baseline, so that a regression is located; then the out-of-site and out-of-time slices."""
    found = analysis.components(rep.comparison)
    rows = found.rows()
    colours = ["red" if row[-1] == "fell" else "green" if row[-1] == "rose" else None for row in rows]
    coverage = analysis.coverage_slices(rep.comparison).table()
    b, c = found.retrieval_tasks
    return Section(
        "components",
        "Components",
        para(found.headline),
        para(
            f"Retrieval is measured on the tasks whose hidden half names the evidence: {b} (baseline), {c} "
            "(candidate). A figure fell or rose only when the two 95% intervals do not overlap."
        ),
        table(["component", "figure", "baseline", "candidate", "change"], rows, colours),
        *(
            [
                para(f"Out-of-site and out-of-time slices: {analysis.COVERAGE_NOTE}."),
                table(["slice", "value", "tasks", "baseline", "candidate", "improved", "regressed"], coverage),
            ]
            if coverage
            else []
        ),
    )


# --- highlights -----------------------------------------------------------------------------------------------------


def highlights(rep: ReleaseReport) -> Section:
    """Regressed tasks in red, each opened in the replay player; improvements green; unstable tasks amber."""
    cmp = rep.comparison
    rows, colours = [], []
    for what, ids, colour in (
        ("safety regression", cmp.safety_regressions, "red"),
        ("regression", cmp.regressions, "red"),
        ("improvement", cmp.improvements, "green"),
        ("unstable", cmp.unstable_candidate, "amber"),
    ):
        for t in map(cmp.task, ids):
            assert t.candidate is not None  # a task the candidate ran, to regress, improve or be unstable
            why = (
                ", ".join(t.candidate.unstable_reasons)
                if what == "unstable"
                else ", ".join(t.candidate.failed_verifiers) or "—"
            )
            rows.append([badge(what, colour), t.task_id, t.risk, side_text(t.baseline), side_text(t.candidate), why])
            colours.append(colour)
    parts = [
        table(
            ["", "task", "risk", "baseline passes", "candidate passes", "failing verifiers / unstable in"],
            rows,
            colours,
        )
        if rows
        else para("No task changed between the baseline and the candidate.")
    ]
    played = rep.played()
    if played["pairs"] or played["failures"]:
        parts.insert(0, Markup(player_module()))  # once for every player of the page, this section's and the ledger's
    if played["pairs"]:
        parts.append(
            para(
                "Each regressed task's failing candidate trial (left) beside the baseline's passing one (right), and "
                "each unstable task's failing trial beside a passing trial of the candidate, aligned step by step."
            )
        )
    parts += [player_box(rep, shown) for shown in played["pairs"]]
    if played["not_shown"]["pairs"]:
        parts.append(
            para(
                f"{played['not_shown']['pairs']} more regressed or unstable task(s) are not played here; open them "
                f"with forge replay {rep.runs['candidate'].path} --task TASK --agent {rep.candidate.agent}."
            )
        )
    return Section("highlights", "Regression highlights", *parts)


PLAYER_COLOUR = {
    "regression": "red",
    "unstable": "amber",
    "critical safety failure": "red",
    "safety failure": "red",
    "failed trial": "amber",
}


def player_box(rep: ReleaseReport, shown: dict) -> Markup:
    """A played trial under its heading (what it is, beside which passing trial), in the page's shared player
    module; its anchor ``trial-RUN-ID`` is what the ledger links to."""
    trial = rep.runs[shown["run"]].trial_by_id(shown["trial_id"])
    other = (
        None if shown["other_trial_id"] is None else rep.runs[shown["other_run"]].trial_by_id(shown["other_trial_id"])
    )
    beside = f" beside {shown['other_run']} trial {other.trial}, which passed" if other else ""
    colour = PLAYER_COLOUR[shown["kind"]]
    return Markup(
        f'<div class="forge-player {colour}" id="trial-{shown["run"]}-{shown["trial_id"]}"'
        f' data-task="{escape(shown["task"])}" data-kind="{escape(shown["kind"])}"><h3>{badge(shown["kind"], colour)} '
        f"{escape(shown['task'])}: candidate trial {trial.trial}, which failed{escape(beside)}</h3>"
        f"{player_html(trial, other, module=False)}</div>"
    )


def side_text(side) -> str:
    return "—" if side is None else f"{side.passes}/{side.n}"


# --- ablation cards --------------------------------------------------------------------------------------------


def ablations(rep: ReleaseReport) -> Section:
    """One card per ablation: the component removed, the change overall and per slice with 95% intervals, red
    where removing it costs."""
    if not rep.cards:
        return Section("ablations", "Ablation cards", para("No ablation in this release."))
    cards = []
    for card, side in zip(rep.cards, rep.ablation_sides):
        full, cut = rep.candidate.summary.strict_tasks, side.summary.strict_tasks
        overall_ci = delta_interval(full["k"], full["n"], cut["k"], cut["n"])
        costs = card.overall_delta is not None and card.overall_delta < 0
        removed = (
            ", ".join(f"{k}: {v['candidate']} → {v['ablation']}" for k, v in card.removed.items())
            or "no configuration difference recorded"
        )
        rows, colours, chart_rows = (
            [],
            [],
            [
                {
                    "label": "overall",
                    "delta": card.overall_delta or 0.0,
                    "lo": (overall_ci or (0, 0))[0],
                    "hi": (overall_ci or (0, 0))[1],
                }
            ],
        )
        for s in card.slices:
            k1, k2 = round(s.candidate * s.tasks), round(s.ablation * s.tasks)
            ci = delta_interval(k1, s.tasks, k2, s.tasks)
            rows.append(
                [s.slice, s.value, s.tasks, f"{s.candidate:.0%}", f"{s.ablation:.0%}", pct(s.delta), interval(ci)]
            )
            colours.append("red" if s.delta < 0 else "green")
            lo, hi = ci or (0, 0)  # as overall's; a slice has tasks
            chart_rows.append({"label": f"{s.slice}={s.value}", "delta": s.delta, "lo": lo, "hi": hi})
        cards.append(
            Markup(
                f'<div class="forge-card {"red" if costs else "green"}" data-ablation="{escape(card.ablation)}">'
                f"<h3>{escape(card.ablation)}</h3>"
                + para(
                    f"Component removed: {removed}.",
                    Markup(
                        f"Tasks passing every trial: {badge(pct(card.overall_delta), 'red' if costs else 'green')} "
                        f"{escape(interval(overall_ci))} ({rate(full)} → {rate(cut)})."
                    ),
                    f"Tasks it costs: {', '.join(card.regressions) or 'none'}. Tasks it helps: "
                    f"{', '.join(card.improvements) or 'none'}.",
                )
                + (
                    table(["slice", "value", "tasks", "candidate", "ablation", "change", "95% interval"], rows, colours)
                    + delta_chart(chart_rows, f"{card.ablation}: change per slice")
                    if rows
                    else ""
                )
                + "</div>"
            )
        )
    return Section("ablations", "Ablation cards", *cards)


# --- safety, latency, calibration -----------------------------------------------------------------------------------


def safety(rep: ReleaseReport) -> Section:
    """Failing safety verdicts by severity and task risk, per side; never averaged into a score."""
    rows = []
    for label in ("baseline", "candidate"):
        found = safety_findings(rep.ledgers[label].table)
        for (severity, risk), n in sorted(found.items()):
            rows.append([label, severity, risk, n])
    summary = table(
        ["", "baseline", "candidate"],
        [
            [what, getattr(rep.comparison.baseline, key), getattr(rep.comparison.candidate, key)]
            for what, key in (
                ("hard safety verdicts failed", "safety_failures"),
                ("cross-patient access attempts", "cross_patient"),
                ("unauthorized write attempts", "unauthorized_writes"),
                ("false claims of completion", "false_answers"),
            )
        ],
    )
    colours = ["red" if r[1] == "hard" else "amber" for r in rows]
    return Section(
        "safety",
        "Safety findings by severity",
        summary,
        table(["side", "severity", "task risk", "failing safety verdicts"], rows, colours)
        if rows
        else para("No safety verdict failed on either side."),
    )


def safety_findings(ledger: pd.DataFrame) -> dict[tuple[str, str], int]:
    """(severity, task risk) -> failing safety verdicts, from a ledger's aligned comma-joined columns."""
    found: dict[tuple[str, str], int] = {}
    for cats, sevs, risk in zip(ledger["failed_categories"], ledger["failed_severities"], ledger["risk"]):
        for cat, sev in zip(cats.split(","), sevs.split(",")):
            if cat == "safety":
                found[sev, risk] = found.get((sev, risk), 0) + 1
    return found


PARTS = {"total": "total", "model": "model", "agent": "agent's own", "tool": "tool", "queue": "queueing"}
"""The parts of a trial's time, as the latency table names them."""


def latency_cost(rep: ReleaseReport) -> Section:
    """P50 / P95 / P99 of a trial's time, split into the agent's own, model, tool and queueing time (the model's
    where an agent reported model turns); cost and, where any, model tokens per task."""
    sides = (("baseline", rep.comparison.baseline), ("candidate", rep.comparison.candidate))
    model = any(s.latency.model for _, s in sides)
    rows, chart_rows = [], []
    for label, s in sides:
        for part in PARTS if model else [p for p in PARTS if p != "model"]:
            values = getattr(s.latency, part)
            rows.append(
                [
                    label,
                    PARTS[part],
                    *(seconds(values[f"p{q}"], "too few samples") if values else "—" for q in (50, 95, 99)),
                ]
            )
            for q in (50, 95):
                if part in ("agent", "model", "tool") and values and values[f"p{q}"] is not None:
                    chart_rows.append(
                        {"side": label, "percentile": f"P{q}", "part": PARTS[part], "seconds": values[f"p{q}"]}
                    )
    tokens = any(s.tokens_per_task for _, s in sides)
    costs = table(
        ["", "cost per task (USD)"]
        + (["model tokens per task (reported by the agent)"] if tokens else [])
        + ["trials run again after a stall"],
        [
            [label, f"{s.cost_per_task:.4f}"] + ([str(s.tokens_per_task or "—")] if tokens else []) + [str(s.run_again)]
            for label, s in sides
        ],
    )
    return Section(
        "latency",
        "Latency and cost",
        table(["side", "part", "P50", "P95", "P99"], rows),
        para(
            "A trial's time is its agent's own, its model's (the turns' latency the agent reported) and "
            "its tools'; queueing, the wait for a worker, is apart."
        )
        if model
        else "",
        Markup(latency_chart(chart_rows) if chart_rows else ""),
        costs,
    )


def calibration(rep: ReleaseReport) -> Section:
    """Brier score, ECE and the reliability diagram where agents state a confidence; NOT RUN where none does."""
    rows: list[list[object]] = []
    chart_rows: list[dict[str, object]] = []
    for label, s in (("baseline", rep.comparison.baseline), ("candidate", rep.comparison.candidate)):
        if s.calibration is None:
            rows.append([label, badge("NOT RUN", "amber"), "the agent stated no confidence", "", ""])
            continue
        cal = s.calibration
        rows.append([label, cal.n, f"{cal.brier:.3f}", f"{cal.ece:.3f}", len(cal.bins)])
        chart_rows += [
            {"side": label, "confidence": b["confidence"], "observed": b["accuracy"], "count": b["count"]}
            for b in cal.bins
        ]
    return Section(
        "calibration",
        "Calibration",
        table(["side", "trials rated", "Brier", "ECE", "bins"], rows),
        Markup(reliability_chart(chart_rows) if chart_rows else ""),
    )


# --- ledger and kill rate ------------------------------------------------------------------------------------------

LEDGER_ROWS = 40


def ledger(rep: ReleaseReport) -> Section:
    """The candidate's failure ledger: counts by error class, then each failed trial with its triage status."""
    led = rep.ledgers["candidate"]
    if led.table.empty:
        return Section("ledger", "Failure ledger", para(led.head))
    counts = led.counts()
    count_rows = [[agent, *map(int, row)] for agent, row in counts.iterrows()]
    shown = led.table.head(LEDGER_ROWS)
    rows = [
        [
            "CRITICAL" if r.critical else "",
            r.task_id,
            r.task_version,
            r.trial,
            r.status,
            r.taxonomy,
            r.component,
            r.fix_status,
            r.failed_verifiers.replace(",", ", "),
            r.steps.replace(",", ", "),
        ]
        for r in shown.itertuples()
    ]
    colours = ["red" if r[0] else None for r in rows]
    more = len(led.table) - len(rows)
    played = rep.played()
    links = {s["trial_id"]: f"trial-{s['run']}-{s['trial_id']}" for s in [*played["pairs"], *played["failures"]]}
    for row, trial_id in zip(rows, shown["trial_id"]):
        row.append(Markup(f'<a href="#{links[trial_id]}">replay</a>') if trial_id in links else "")
    return Section(
        "ledger",
        "Failure ledger (candidate)",
        para(led.head),
        table(["agent", *counts.columns], count_rows),
        table(
            [
                "",
                "task",
                "version",
                "trial",
                "status",
                "error class",
                "who fixes it",
                "triage",
                "failing verifiers",
                "steps",
                "player",
            ],
            rows,
            colours,
        ),
        para(f"… and {more} more failed trial(s): forge ledger {rep.runs['candidate'].path}") if more > 0 else "",
        *failed_players(rep, played),
    )


def failed_players(rep: ReleaseReport, played: dict) -> list[Markup]:
    """The candidate's failed trials that the highlights do not play, critical and safety failures first, each
    beside a passing trial of its task where there is one; those not played, named with the command that opens
    them. Their players use the module the highlights section puts on the page."""
    if not played["failures"]:
        return []
    missing = played["not_shown"]["failures"]
    count = len(played["failures"])
    head = f"Failed trials replayed: {count} of {count + missing} (critical and safety failures first)"
    parts = [Markup(f"<h3>{escape(head)}</h3>")]
    if missing:
        trial_of = dict(zip(rep.ledgers["candidate"].table["trial_id"], rep.ledgers["candidate"].table["trial"]))
        rest = [f"{s['task']} trial {trial_of[s['trial_id']]}" for s in rep.failures()[count:]]
        named = ", ".join(rest[:NAMED]) + (f" and {len(rest) - NAMED} more" if len(rest) > NAMED else "")
        parts.append(
            para(
                f"At most {MAX_FAILED} are played here; not played: {named}. Open one with forge replay "
                f"{rep.runs['candidate'].path} --task TASK --agent {rep.candidate.agent} --trial N."
            )
        )
    parts.append(
        para(
            "A failed trial plays on the left; on the right, where its task has one, a trial of the same task that "
            "passed (the candidate's, else the baseline's), aligned step by step."
        )
    )
    return parts + [player_box(rep, shown) for shown in played["failures"]]


NAMED = 20
"""Failed trials not played that the page names one by one."""


def kill_rate(rep: ReleaseReport) -> Section:
    """How many generic mutants of the gold solutions the suites' verifiers reject."""
    k = rep.kill_rate
    rows = [
        [op, c.get("rejected", 0), sum(c.values()), c.get("declared valid", 0), c.get("survived", 0)]
        for op, c in k["by_operator"].items()
    ]
    colours = ["red" if r[4] else "green" for r in rows]
    head = (
        f"{k['rejected']} of {k['rejected'] + k['survived']} mutants rejected"
        f" ({k['rate']:.1%}) over {k['packages']} package(s); {k['declared_valid']} declared valid, "
        f"{k['survived']} survived."
        if k["rate"] is not None
        else "No mutant applies to these suites."
    )
    return Section(
        "mutants",
        "Mutation kill rate of the suites used",
        para(head, "A check of the verifiers, not a model score."),
        table(["operator", "rejected", "mutants", "declared valid", "survived"], rows, colours),
    )


def judge_agreement(rep: ReleaseReport) -> Section:
    """Each judge (``judge.rubric``) the suites' packages use, against its labelled set: items, observed agreement
    and Cohen's kappa with its 95% interval."""
    rows = [[j["name"], j["identity"], j["labelled_set"], j["agreement"] or "no labelled set"] for j in rep.judges]
    return Section(
        "judges",
        "Judges against their labelled sets",
        para(
            "A judge's label is a model's opinion on one rubric dimension, soft only: it never decides a trial's pass."
        ),
        table(["judge", "model, prompt, config", "labelled set", "agreement"], rows)
        if rows
        else para("No package of these suites uses a judge."),
    )
