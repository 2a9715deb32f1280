"""How the tickets of a check-in list render (``E/checkinlists/{id}/positions/``, its detail
and ``checkinrpc/search``), declared against ``CheckinPositionOut`` (see
``kit/resources/render.py``).

A ticket is the order position as the position list shows it, with three differences kept
from the scanner's view: only the check-ins on the list (of the ticket's event) are shown,
``attendee_name`` falls back to the name on the ticket it is an add-on to, then to the
invoice address's name, and ``require_attention`` says whether the order, the product or the
variation asks for attention at check-in. No seat, print log or download is shown.

``extra["lists"]`` maps each event id to the list whose check-ins are shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import aliased

from admit.checkin.checkin_out import CheckinPositionOut
from admit.kit.resources.render import Rows
from admit.models import Item, ItemVariation, Order, OrderPosition
from admit.orders.order_rows import ANSWERS, CHECKINS

_Parent = aliased(OrderPosition, name="parent_position")


def _scalar(column: Any, key: Any, ref: Any) -> Any:
    return select(column).where(key == ref).correlate(OrderPosition).scalar_subquery()


def _invoice_name(address: Any) -> str | None:
    return address.get("name") if isinstance(address, dict) else None


def _finish(row: dict[str, Any], _parent: Any, extra: Mapping[str, Any]) -> None:
    if not row["attendee_name"]:
        row["attendee_name"] = (row["__parent_name"] or None) or _invoice_name(row["__invoice"])
    row["attendee_name_parts"] = row["attendee_name_parts"] or {}
    row["plugin_data"] = row["plugin_data"] or {}
    row["downloads"] = []
    row["print_logs"] = []
    shown = extra["lists"][row["__event"]]
    row["checkins"] = [c for c in row["checkins"] if c["list"] == shown]
    if extra["keep_event"]:
        row["__event_id"] = row["__event"]  # for ``expand``, which removes it
    row["require_attention"] = (
        bool(row["__order_attention"])
        or bool(row["__item_attention"])
        or bool(row["__variation_attention"])
    )


CHECKIN_POSITION_ROWS = Rows(
    CheckinPositionOut,
    OrderPosition,
    columns={
        "attendee_name": OrderPosition.attendee_name_cached,
        "order": Order.code,
        # The reference's check-in list positions carry these (a scanner decides offline
        # whether a pending order's ticket is valid, and in which language to greet).
        "order__status": Order.status,
        "order__valid_if_pending": Order.valid_if_pending,
        "order__require_approval": Order.require_approval,
        "order__locale": Order.locale,
    },
    computed=("seat", "downloads", "print_logs", "require_attention"),
    children=(CHECKINS, ANSWERS),
    hidden={
        "__event": OrderPosition.event_id,
        "__parent_name": _scalar(
            _Parent.attendee_name_cached, _Parent.id, OrderPosition.addon_to_id
        ),
        "__invoice": Order.invoice_address,
        "__order_attention": Order.checkin_attention,
        "__item_attention": _scalar(Item.checkin_attention, Item.id, OrderPosition.item_id),
        "__variation_attention": _scalar(
            ItemVariation.checkin_attention, ItemVariation.id, OrderPosition.variation_id
        ),
    },
    omit=("pdf_data",),
    finish=_finish,
)
