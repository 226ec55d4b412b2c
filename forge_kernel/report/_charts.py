"""The report's Altair charts, rendered offline to SVG (vl-convert) and inlined as ``data:`` images."""

from __future__ import annotations

import base64
from html import escape

import altair as alt
import vl_convert

from ..widgets import CHART_FONTS, svg_with_font

RED, GREEN, AMBER, BLUE, GREY, PURPLE = "#b91c1c", "#15803d", "#b45309", "#1d4ed8", "#6b7280", "#6d28d9"
PART_COLOURS = {"agent's own": BLUE, "model": PURPLE, "tool": AMBER}


def inline(chart: alt.TopLevelMixin, alt_text: str) -> str:
    """The chart as an ``<img class="forge-chart">`` whose source is an SVG ``data:`` URL: nothing is fetched. Its text
    is in the dashboard's fonts, the shipped Chinese font first, which the SVG carries cut to its own characters (an
    image sees none of the page's fonts)."""
    svg = svg_with_font(vl_convert.vegalite_to_svg(chart.to_dict(), config={"font": CHART_FONTS}))
    data = base64.b64encode(svg.encode()).decode()
    return f'<img class="forge-chart" alt="{escape(alt_text)}" src="data:image/svg+xml;base64,{data}">'


def rates_chart(rows: list[dict], title: str) -> str:
    """Strict task pass rate with its Wilson 95% interval, per slice value and side: rows of
    ``{value, side, rate, lo, hi, n}``."""
    base = alt.Chart(alt.Data(values=rows)).encode(
        y=alt.Y("value:N", title=None),
        yOffset="side:N",
        color=alt.Color("side:N", scale=alt.Scale(range=[GREY, BLUE]), title=None),
    )
    bars = base.mark_bar(height=8).encode(
        x=alt.X("rate:Q", title="tasks passing every trial", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        tooltip=["value:N", "side:N", "rate:Q", "n:Q"],
    )
    whiskers = base.mark_rule(color="black").encode(x="lo:Q", x2="hi:Q")
    return inline((bars + whiskers).properties(title=title, width=420), title)


def latency_chart(rows: list[dict]) -> str:
    """Seconds per trial at P50 / P95, split into the agent's own, model and tool time, per side: rows of
    ``{side, percentile, part, seconds}``."""
    parts = [p for p in PART_COLOURS if any(r["part"] == p for r in rows)]
    chart = (
        alt.Chart(alt.Data(values=rows))
        .mark_bar()
        .encode(
            x=alt.X("seconds:Q", title="seconds per trial"),
            y=alt.Y("side:N", title=None),
            color=alt.Color(
                "part:N", scale=alt.Scale(domain=parts, range=[PART_COLOURS[p] for p in parts]), title=None
            ),
            row=alt.Row("percentile:N", title=None),
        )
        .properties(width=420, title="Latency, decomposed")
    )
    return inline(chart, "latency by side, percentile and part")


def reliability_chart(rows: list[dict]) -> str:
    """Observed pass rate against stated confidence per bin: rows of ``{side, confidence, observed, count}``."""
    diagonal = (
        alt.Chart(alt.Data(values=[{"x": 0, "y": 0}, {"x": 1, "y": 1}]))
        .mark_line(color=GREY, strokeDash=[4, 4])
        .encode(x="x:Q", y="y:Q")
    )
    points = (
        alt.Chart(alt.Data(values=rows))
        .mark_line(point=True)
        .encode(
            x=alt.X("confidence:Q", scale=alt.Scale(domain=[0, 1]), title="stated confidence"),
            y=alt.Y("observed:Q", scale=alt.Scale(domain=[0, 1]), title="observed pass rate"),
            color=alt.Color("side:N", scale=alt.Scale(range=[GREY, BLUE]), title=None),
        )
    )
    return inline((diagonal + points).properties(width=300, height=300, title="Calibration"), "reliability diagram")


def delta_chart(rows: list[dict], title: str) -> str:
    """An ablation's change in strict task pass rate per slice value with its 95% interval, red where removing
    the component costs: rows of ``{label, delta, lo, hi}``."""
    base = alt.Chart(alt.Data(values=rows)).encode(y=alt.Y("label:N", title=None, sort=None))
    bars = base.mark_bar().encode(
        x=alt.X("delta:Q", title="change when the component is removed", axis=alt.Axis(format="+%")),
        color=alt.condition(alt.datum.delta < 0, alt.value(RED), alt.value(GREEN)),
    )
    whiskers = base.mark_rule(color="black").encode(x="lo:Q", x2="hi:Q")
    return inline((bars + whiskers).properties(width=420, title=title), title)
