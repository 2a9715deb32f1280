"""The server-drawn SVG charts: a true time axis, whole-number grid lines, escaped labels and
nothing a CSP without ``unsafe-inline`` would block."""

from __future__ import annotations

import datetime as dt
import re

from admit.control.chart import Point, _nice_max, bar_chart, filled

DAY = dt.timedelta(days=1)


def test_gaps_are_filled_and_long_ranges_keep_the_newest():
    start = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
    points = filled({start: 2, start + 3 * DAY: 5}, DAY, "%m-%d")
    assert [(p.label, p.value) for p in points] == [
        ("01-01", 2), ("01-02", 0), ("01-03", 0), ("01-04", 5)
    ]  # fmt: skip
    many = filled({start: 1, start + 299 * DAY: 1}, DAY, "%Y-%m-%d", limit=120)
    assert len(many) == 120 and many[-1].value == 1 and many[0].label == "2030-06-30"
    assert filled({}, DAY, "%m-%d") == []


def test_axis_top_has_a_whole_middle():
    assert [_nice_max(v) for v in (0, 1, 3, 5, 7, 11, 45, 61, 950)] == [
        2, 2, 4, 6, 8, 20, 60, 80, 1000
    ]  # fmt: skip


def test_svg_is_labelled_escaped_and_needs_no_inline_style():
    svg = str(bar_chart("c1", "Orders <per> day", [Point("a&b", 3), Point("z", 1)], "orders"))
    assert svg.startswith("<svg") and 'role="img"' in svg
    assert "Orders &lt;per&gt; day" in svg and "a&amp;b: 3" in svg
    assert "4 orders in 2 periods" in svg
    assert "style=" not in svg and "<script" not in svg
    heights = [float(h) for h in re.findall(r'<rect [^>]*height="([\d.]+)"', svg)]
    assert heights[0] == 3 * heights[1]
    empty = str(bar_chart("c2", "Entries", [], "entries"))
    assert "No entries yet" in empty and "<rect" not in empty
