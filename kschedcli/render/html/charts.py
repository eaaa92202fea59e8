"""The report's charts: Vega-Lite specifications built with Altair and rendered to static SVG by
vl-convert (Vega's own renderer, bundled in the wheel with its fonts: nothing is fetched). Both are
the optional extra `ksched[report]`; `require()` says so in one line when they are missing.

Colours are colour-blind safe: utilization on viridis (perceptually uniform, readable in grey),
categories on the Okabe-Ito palette."""

from __future__ import annotations

import copy
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


def spec_of(chart: Any, datasets: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The chart's Vega-Lite specification with its data (named datasets, added to the plain
    dictionary: Altair would copy and check every row)."""
    spec = chart.to_dict(validate=False)
    spec["datasets"] = datasets
    return spec


def to_svg(spec: dict[str, Any]) -> str:
    """The specification as one static <svg> element (Vega's SVG renderer; text escaped by it)."""
    import vl_convert

    svg = vl_convert.vegalite_to_svg(spec)
    # the renderer writes marks, text and paths; a report with anything active in it is refused
    lowered = svg.lower()
    if "<script" in lowered or "<foreignobject" in lowered or "href=" in lowered.replace("xmlns:xlink=", ""):
        raise ValueError("the chart renderer wrote active content into an SVG")
    return svg.replace("<svg ", '<svg role="img" focusable="false" ', 1)


def heatmaps(panels: list[tuple[str, list[dict[str, Any]]]], columns: list[str], *, fit: bool = False) -> dict:
    """Small multiples, one heatmap per panel (title, cells), wrapped in rows of three, drawn as one
    chart. A cell: `row`, `column`, `ratio` (requested / allocatable); with fit, each row also has a
    `the pod` cell whose `fit` is one of FIT_STATES. One rect per cell, rows in the cells' order.
    The rects carry no ARIA label each: the figure's data table is their text alternative."""
    import altair as alt

    # one panel built with Altair, the others its copies with their own title and data: Altair
    # copies a whole concatenation at every step of building it
    one = _heatmap(alt, columns, fit).configure_view(stroke=None).to_dict(validate=False)
    top = {k: one.pop(k) for k in ("$schema", "config") if k in one}
    specs = []
    for i, (title, _) in enumerate(panels):
        panel = copy.deepcopy(one)
        panel["data"] = {"name": f"p{i}"}
        panel["title"] = {"text": title, "anchor": "start", "fontSize": 12, "limit": 0}
        specs.append(panel)
    spec = {**top, "concat": specs, "columns": 3, "spacing": 24} if len(specs) > 1 else {**top, **specs[0]}
    spec["datasets"] = {f"p{i}": cells for i, (_, cells) in enumerate(panels)}
    return spec


def _heatmap(alt: Any, columns: list[str], fit: bool) -> Any:
    # rows in the data's order (sort=None): a list of names to sort by would be copied by every
    # Altair call building the chart
    x = alt.X(
        "column:N",
        title=None,
        sort=(["the pod"] if fit else []) + columns,
        axis=alt.Axis(orient="top", labelAngle=0, labelLimit=0, domain=False, ticks=False),
    )
    # labelLimit 0: names whole, and no text measured to cut them (the costliest part of drawing)
    y_axis = alt.Axis(labelLimit=0, labelOverlap=False, domain=False, ticks=False)
    heat = (
        alt.Chart()
        .transform_filter("isValid(datum.ratio)")
        .mark_rect(stroke="white", strokeWidth=0.5, aria=False)
        .encode(
            x=x,
            y=alt.Y("row:N", title=None, sort=None, axis=y_axis),
            color=alt.Color(
                "ratio:Q",
                title="requested / allocatable",
                scale=alt.Scale(scheme="viridis", domain=[0, 1], clamp=True),
                legend=alt.Legend(format="%", orient="bottom", gradientLength=160),
            ),
        )
    )
    layers = [heat]
    if fit:
        marks = (
            alt.Chart()
            .transform_filter("isValid(datum.fit)")
            .mark_rect(stroke="#555", strokeWidth=0.5, aria=False)
            .encode(
                x=x,
                y=alt.Y("row:N", title=None, sort=None, axis=y_axis),
                fill=alt.Fill(
                    "fit:N",
                    title="the pod",
                    scale=alt.Scale(domain=FIT_STATES, range=FIT_COLOURS),
                    legend=alt.Legend(orient="bottom"),
                ),
            )
        )
        layers = [marks, heat]
    return alt.layer(*layers, data=alt.NamedData("p0")).properties(width=alt.Step(52), height=alt.Step(CELL))


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
) -> dict:
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
    chart = alt.layer(*layers, data=alt.NamedData("bars")).properties(
        title=alt.Title(title, anchor="start", fontSize=12, limit=900),
        width=360,
        height={"step": 12, "for": "position"} if series is not None and not stacked else alt.Step(18),
        description=title,
    )
    return spec_of(chart.configure_view(stroke=None), {"bars": values})
