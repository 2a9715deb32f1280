"""Bar charts drawn on the server as SVG: readable without JavaScript, no charting script,
nothing a Content-Security-Policy without ``unsafe-inline`` would block (presentation
attributes only, no ``style``). Each chart names itself for screen readers and comes with
its numbers as a table on the page."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

WIDTH, HEIGHT = 640, 240
LEFT, RIGHT, TOP, BOTTOM = 52, 8, 14, 34
MAX_BARS = 120  # the newest buckets beyond this are kept (a long presale: the last 4 months)


@dataclass(frozen=True)
class Point:
    label: str
    value: int


def filled(
    counts: dict[dt.datetime, int], step: dt.timedelta, fmt: str, limit: int = MAX_BARS
) -> list[Point]:
    """Consecutive buckets from the first to the last one counted, empty ones as 0, so the
    bars stand on a true time axis; at most ``limit`` (the newest)."""
    if not counts:
        return []
    first, last = min(counts), max(counts)
    n = int((last - first) / step) + 1
    start = first if n <= limit else last - step * (limit - 1)
    points = []
    moment = start
    while moment <= last:
        points.append(Point(moment.strftime(fmt), counts.get(moment, 0)))
        moment += step
    return points


def _nice_max(value: int) -> int:
    """The axis top: 2, 4, 6, 8 or 10 times a power of ten at or above ``value``, so the
    middle line is a whole number too."""
    magnitude = 1
    while True:
        for factor in (2, 4, 6, 8, 10):
            if value <= factor * magnitude:
                return factor * magnitude
        magnitude *= 10


def bar_chart(chart_id: str, title: str, points: Sequence[Point], unit: str) -> Markup:
    """An SVG bar chart of ``points`` (``unit`` names what is counted)."""
    total = sum(p.value for p in points)
    summary = f"{total} {unit} in {len(points)} periods" if points else f"No {unit} yet"
    parts = [
        f'<svg class="chart" id="{escape(chart_id)}" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'role="img" aria-labelledby="{escape(chart_id)}-t {escape(chart_id)}-d" '
        'preserveAspectRatio="xMidYMid meet" xmlns="http://www.w3.org/2000/svg">',
        f'<title id="{escape(chart_id)}-t">{escape(title)}</title>',
        f'<desc id="{escape(chart_id)}-d">{escape(summary)}</desc>',
    ]
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    base = TOP + plot_h
    top = _nice_max(max((p.value for p in points), default=0))
    for fraction in (0, 0.5, 1) if total else (0,):
        y = base - plot_h * fraction
        parts.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
            f'<text x="{LEFT - 8}" y="{y + 6:.1f}" text-anchor="end" class="axis">'
            f"{round(top * fraction)}</text>"
        )
    if total:
        slot = plot_w / len(points)
        bar = min(max(slot * 0.75, 1.0), 48.0)  # one day is a bar, not a wall
        for i, point in enumerate(points):
            h = plot_h * point.value / top
            x = LEFT + i * slot + (slot - bar) / 2
            parts.append(
                f'<rect x="{x:.1f}" y="{base - h:.1f}" width="{bar:.1f}" height="{h:.1f}" '
                f'class="bar"><title>{escape(point.label)}: {point.value}</title></rect>'
            )
        if len(points) == 1:  # under its bar
            parts.append(
                f'<text x="{LEFT + plot_w / 2:.1f}" y="{HEIGHT - 6}" text-anchor="middle" '
                f'class="axis">{escape(points[0].label)}</text>'
            )
        else:
            parts.append(
                f'<text x="{LEFT}" y="{HEIGHT - 6}" class="axis">{escape(points[0].label)}</text>'
            )
        if len(points) > 1:
            parts.append(
                f'<text x="{WIDTH - RIGHT}" y="{HEIGHT - 6}" text-anchor="end" class="axis">'
                f"{escape(points[-1].label)}</text>"
            )
    else:
        parts.append(
            f'<text x="{LEFT + plot_w / 2}" y="{TOP + plot_h / 2}" text-anchor="middle" '
            f'class="axis">{escape(summary)}</text>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))
