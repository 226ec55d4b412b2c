"""The run dashboard's charts, as Altair (Vega-Lite) specs: pass rates per dimension and agent, each agent's pass
rate with its Wilson interval, safety findings by severity, latency percentiles. Data is inlined; nothing is
fetched when they render.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from ..analysis import SEVERITIES
from ._fonts import CHART_FONTS

"""The charts' fonts: the shipped Chinese font first (the widget's style sheet declares it; a static page's SVG carries
its own, ``_fonts.svg_with_font``)."""
SEVERITY_COLOURS = ("#7a0916", "#e0632b", "#f3c34b")
"""critical, hard, soft."""
PERCENT = ".0%"


def configured(chart: alt.TopLevelMixin) -> dict:
    """A chart's spec with the dashboard's fonts and no border, ready for vega-embed."""
    return (
        chart.configure(font=CHART_FONTS)
        .configure_view(strokeWidth=0)
        .configure_axis(labelFontSize=12, titleFontSize=12, labelLimit=220)
        .configure_legend(labelFontSize=12, titleFontSize=12)
        .to_dict()
    )


def with_interval_text(cells: pd.DataFrame) -> pd.DataFrame:
    """Cells with the text a reader sees: ``passed`` (k of n) and ``interval`` (Wilson 95%)."""
    return cells.assign(
        passed=[f"{k} of {n}" for k, n in zip(cells["k"], cells["n"])],
        interval=[f"{lo:.0%} to {hi:.0%}" for lo, hi in zip(cells["lo"], cells["hi"])],
    )


def pass_rate_grid(cells: pd.DataFrame, by: str = "dimension") -> dict:
    """A cell per agent and dimension, coloured by pass rate, labelled with it; a click picks the cell."""
    data = with_interval_text(cells[cells[by] != "all"])
    pick = alt.selection_point(name="cell", fields=["agent", by], on="click", clear="dblclick")
    base = alt.Chart(data).encode(
        x=alt.X(f"{by}:N", title=None, axis=alt.Axis(orient="top", labelAngle=0)), y=alt.Y("agent:N", title=None)
    )
    tiles = (
        base.mark_rect(cornerRadius=3, cursor="pointer")
        .encode(
            color=alt.Color(
                "rate:Q",
                title="pass rate",
                scale=alt.Scale(domain=[0, 1], scheme="redyellowgreen"),
                legend=alt.Legend(format=PERCENT, orient="right"),
            ),
            stroke=alt.condition(pick, alt.value("#1b1f24"), alt.value("#ffffff")),
            strokeWidth=alt.condition(pick, alt.value(2.5), alt.value(1)),
            tooltip=[
                alt.Tooltip("agent:N"),
                alt.Tooltip(f"{by}:N"),
                alt.Tooltip("passed:N", title="trials passed"),
                alt.Tooltip("rate:Q", format=PERCENT, title="pass rate"),
                alt.Tooltip("interval:N", title="Wilson 95% interval"),
            ],
        )
        .add_params(pick)
    )
    labels = base.mark_text(fontSize=12, fontWeight="bold", cursor="pointer").encode(
        text=alt.Text("rate:Q", format=PERCENT),
        color=alt.condition("datum.rate < 0.3 || datum.rate > 0.85", alt.value("#ffffff"), alt.value("#1b1f24")),
    )
    width = 74 * max(1, data[by].nunique())
    return configured((tiles + labels).properties(width=width, height=30 * max(1, data["agent"].nunique())))


def overall_rates(cells: pd.DataFrame, by: str = "dimension") -> dict:
    """Each agent's pass rate over every trial, with its Wilson 95% interval as a bar."""
    data = with_interval_text(cells[cells[by] == "all"])
    base = alt.Chart(data).encode(y=alt.Y("agent:N", title=None))
    tooltip = [
        alt.Tooltip("agent:N"),
        alt.Tooltip("passed:N", title="trials passed"),
        alt.Tooltip("rate:Q", format=PERCENT, title="pass rate"),
        alt.Tooltip("interval:N", title="Wilson 95% interval"),
    ]
    axis = alt.X(
        "lo:Q",
        title="pass rate, with its Wilson 95% interval",
        scale=alt.Scale(domain=[0, 1]),
        axis=alt.Axis(format=PERCENT),
    )
    rule = base.mark_rule(strokeWidth=3, color="#8c96a3").encode(x=axis, x2="hi:Q", tooltip=tooltip)
    point = base.mark_point(filled=True, size=90, color="#1f6feb", cursor="pointer").encode(x="rate:Q", tooltip=tooltip)
    text = base.mark_text(align="left", dx=8, dy=-9, fontSize=11).encode(
        x="rate:Q", text=alt.Text("rate:Q", format=PERCENT)
    )
    return configured((rule + point + text).properties(width=360, height=30 * max(1, len(data))))


def safety_bars(findings: pd.DataFrame) -> dict:
    """Failing safety verdicts per agent, stacked by severity (counts, never a rate)."""
    ranked = findings.assign(severity_rank=findings["severity"].map(SEVERITIES.index))
    bars = (
        alt.Chart(ranked)
        .mark_bar()
        .encode(
            x=alt.X("sum(findings):Q", title="failing safety verdicts", axis=alt.Axis(tickMinStep=1)),
            y=alt.Y("agent:N", title=None),
            color=alt.Color(
                "severity:N", title="severity", scale=alt.Scale(domain=list(SEVERITIES), range=list(SEVERITY_COLOURS))
            ),
            order=alt.Order("severity_rank:Q"),
            tooltip=[alt.Tooltip("agent:N"), alt.Tooltip("severity:N"), alt.Tooltip("findings:Q")],
        )
    )
    return configured(bars.properties(width=360, height=30 * max(1, findings["agent"].nunique())))


def latency_points(latency: pd.DataFrame) -> dict:
    """Trial duration percentiles per agent (milliseconds, log scale)."""
    data = latency[latency["part"] == "total"]
    base = alt.Chart(data).encode(y=alt.Y("agent:N", title=None))
    line = base.mark_rule(color="#c4cad2").encode(x="min(ms):Q", x2="max(ms):Q")
    points = base.mark_point(filled=True, size=80).encode(
        x=alt.X("ms:Q", title="trial duration (ms)", scale=alt.Scale(type="log")),
        color=alt.Color(
            "percentile:N",
            title="percentile",
            sort=["P50", "P95", "P99"],
            scale=alt.Scale(range=["#1f6feb", "#e0632b", "#7a0916"]),
        ),
        tooltip=[
            alt.Tooltip("agent:N"),
            alt.Tooltip("percentile:N"),
            alt.Tooltip("ms:Q", format=".1f", title="ms"),
            alt.Tooltip("trials:Q"),
        ],
    )
    return configured((line + points).properties(width=360, height=30 * max(1, data["agent"].nunique())))
