"""The report's charts: Vega-Lite specifications built with Altair and rendered to static SVG by
vl-convert (Vega's own renderer, bundled in the wheel with its fonts: nothing is fetched). Both are
the optional extra `ksched[report]`; `require()` says so in one line when they are missing.

Colours are colour-blind safe: utilization on viridis (perceptually uniform, readable in grey),
categories on the Okabe-Ito palette."""

from __future__ import annotations

from typing import Any

from ...errors import InputError

EXTRA_MISSING = "needs the charting extra: pip install 'ksched[report]' (Altair and vl-convert-python)"

# Okabe & Ito's colour-blind-safe palette
OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
FIT_STATES = ["selected", "feasible", "filtered", "not in this run"]
FIT_COLOURS = ["#D55E00", "#009E73", "#BBBBBB", "#FFFFFF"]
LABEL_LIMIT = 430  # px: a 60-character node name whole on an axis
CELL = 13  # px per heatmap row


def require() -> None:
    """Altair and vl-convert importable, else the one line naming the extra (InputError: exit 2)."""
    try:
        import altair  # noqa: F401
        import vl_convert  # noqa: F401
    except ImportError:
        raise InputError(EXTRA_MISSING, field="--report") from None


def to_svg(chart: Any) -> str:
    """The chart as one static <svg> element (Vega's SVG renderer; text escaped by it)."""
    import vl_convert

    svg = vl_convert.vegalite_to_svg(chart.to_dict(validate=False))
    # the renderer writes marks, text and paths; a report with anything active in it is refused
    lowered = svg.lower()
    if "<script" in lowered or "<foreignobject" in lowered or "href=" in lowered.replace("xmlns:xlink=", ""):
        raise ValueError("the chart renderer wrote active content into an SVG")
    return svg.replace("<svg ", '<svg role="img" focusable="false" ', 1)


def heatmap(cells: list[dict[str, Any]], columns: list[str], title: str, *, fit: bool = False) -> Any:
    """Rows of cells (`row`, `column`, `ratio`: requested / allocatable; with fit, a `fit` column
    whose cells carry `fit`, one of FIT_STATES), one rect per cell, in the rows' order."""
    import altair as alt

    order = list(dict.fromkeys(c["row"] for c in cells))
    x = alt.X(
        "column:N",
        title=None,
        sort=(["the pod"] if fit else []) + columns,
        axis=alt.Axis(orient="top", labelAngle=0, labelLimit=120, domain=False, ticks=False),
    )
    y = alt.Y("row:N", title=None, sort=order, axis=alt.Axis(labelLimit=LABEL_LIMIT, domain=False, ticks=False))
    base = alt.Chart().encode(x=x, y=y)
    heat = (
        base.transform_filter("isValid(datum.ratio)")
        .mark_rect(stroke="white", strokeWidth=0.5)
        .encode(
            color=alt.Color(
                "ratio:Q",
                title="requested / allocatable",
                scale=alt.Scale(scheme="viridis", domain=[0, 1], clamp=True),
                legend=alt.Legend(format="%", orient="bottom", gradientLength=160),
            )
        )
    )
    layers = [heat]
    if fit:
        marks = (
            base.transform_filter("isValid(datum.fit)")
            .mark_rect(stroke="#555", strokeWidth=0.5)
            .encode(
                color=alt.Color(
                    "fit:N",
                    title="the pod",
                    scale=alt.Scale(domain=FIT_STATES, range=FIT_COLOURS),
                    legend=alt.Legend(orient="bottom"),
                )
            )
        )
        layers = [marks, heat]
    chart = alt.layer(*layers, data=alt.Data(values=cells)).properties(
        title=alt.Title(title, anchor="start", fontSize=12, limit=900),
        width=alt.Step(56),
        height=alt.Step(CELL),
        description=title,
    )
    if fit:
        chart = chart.resolve_scale(color="independent")
    return chart.configure_view(stroke=None)


def bars(
    values: list[dict[str, Any]],
    *,
    title: str,
    category: str,
    value: str,
    series: str | None = None,
    series_order: list[str] | None = None,
    stacked: bool = False,
    percent: bool = False,
) -> Any:
    """Horizontal bars: one per `category` (in the values' order), or per category and `series`
    (side by side, or stacked), with the value written at the bar's end. `category`, `value`:
    the axes' titles."""
    import altair as alt

    order = list(dict.fromkeys(v["category"] for v in values))
    y = alt.Y("category:N", title=category, sort=order, axis=alt.Axis(labelLimit=LABEL_LIMIT))
    fmt = ".0%" if percent else ",d"
    axis = alt.Axis(format=fmt) if percent else alt.Axis(format=fmt, tickMinStep=1)
    x = alt.X("value:Q", title=value, axis=axis)
    base = alt.Chart().encode(y=y)
    enc: dict[str, Any] = {"x": x}
    if series is not None:
        domain = series_order or list(dict.fromkeys(v["series"] for v in values))
        enc["color"] = alt.Color(
            "series:N",
            title=series,
            scale=alt.Scale(domain=domain, range=OKABE_ITO[: len(domain)]),
            legend=alt.Legend(orient="bottom"),
        )
        if not stacked:
            enc["yOffset"] = alt.YOffset("series:N", sort=domain)
    else:
        enc["color"] = alt.value(OKABE_ITO[0])
    if stacked:
        enc["x"] = alt.X("value:Q", title=value, stack="zero", axis=axis)
    layers = [base.mark_bar().encode(**enc)]
    if not stacked:
        text = {"x": alt.X("value:Q"), "text": alt.Text("value:Q", format=fmt)}
        if series is not None:
            text["yOffset"] = alt.YOffset("series:N", sort=series_order)
        layers.append(base.mark_text(align="left", dx=3, fontSize=10).encode(**text))
    chart = alt.layer(*layers, data=alt.Data(values=values)).properties(
        title=alt.Title(title, anchor="start", fontSize=12, limit=900),
        width=360,
        height={"step": 12, "for": "position"} if series is not None and not stacked else alt.Step(18),
        description=title,
    )
    return chart.configure_view(stroke=None)
