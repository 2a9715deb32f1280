"""Which layout a ticket is drawn with.

In order: the layout the request names (``override_layout``); the layout assigned to the
position's product for the sales channel (``override_channel``, else the order's channel);
the event's default layout; else the built-in layout below (no background, A4), so that an
event without any layout still prints usable tickets.
"""

from __future__ import annotations

from typing import Any

from admit.models import TicketLayout
from admit.tickets.loading import Batch, PositionData

BUILTIN_NAME = "Built-in layout"

# The reference's layout format (see layout_format.py), in mm on A4 portrait.
BUILTIN_LAYOUT: list[dict[str, Any]] = [
    {"type": "textarea", "left": 15, "bottom": 265, "width": 180, "content": "event_name",
     "fontsize": 22, "bold": True},
    {"type": "textarea", "left": 15, "bottom": 257, "width": 180, "content": "event_begin",
     "fontsize": 12},
    {"type": "textarea", "left": 15, "bottom": 252, "width": 110, "content": "event_location",
     "fontsize": 11, "downward": True},
    {"type": "textarea", "left": 15, "bottom": 222, "width": 110, "content": "attendee_name",
     "fontsize": 18, "bold": True},
    {"type": "textarea", "left": 15, "bottom": 213, "width": 110, "content": "itemvar",
     "fontsize": 13},
    {"type": "textarea", "left": 15, "bottom": 206, "width": 110, "content": "price",
     "fontsize": 12},
    {"type": "textarea", "left": 15, "bottom": 199, "width": 110, "content": "seat",
     "fontsize": 12},
    {"type": "textarea", "left": 15, "bottom": 188, "width": 110, "content": "other",
     "text": "Order {order}-{positionid}", "fontsize": 11},
    {"type": "barcodearea", "left": 135, "bottom": 190, "size": 60, "content": "secret"},
    {"type": "textarea", "left": 135, "bottom": 185, "width": 60, "content": "secret",
     "fontsize": 7, "align": "center", "fontfamily": "Cascadia Mono"},
]  # fmt: skip


def layout_for(
    batch: Batch,
    data: PositionData,
    *,
    override_channel: str | None = None,
    override_layout: int | None = None,
) -> TicketLayout | None:
    """The layout of ``data``'s ticket; None means the built-in one. ``override_layout``
    must be one of the batch's layouts (loaded with ``layout_ids``)."""
    if override_layout is not None:
        return batch.layouts[override_layout]
    channel = override_channel or data.order.sales_channel
    assigned = batch.assignments.get((data.item.id, channel))
    if assigned is not None and assigned in batch.layouts:
        return batch.layouts[assigned]
    if batch.default_layout is not None:
        return batch.layouts[batch.default_layout]
    return None
