"""How the dates of an event series render for GETs (see ``kit/render.py``): the same JSON
as ``subevent_to_read`` through ``SubEventOut``, for ``E/subevents/`` and ``O/subevents/``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import select

from admit.kit.render import Nested, Rows
from admit.models import Event, SubEvent, SubEventItem, SubEventItemVariation
from admit.subevents.schemas import ItemOverrideOut, SubEventOut, VariationOverrideOut


def _finish_subevent(row: dict[str, Any], _parent: Any, _extra: Mapping[str, Any]) -> None:
    row["meta_data"] = dict(row["meta_data"] or {})
    row["seat_category_mapping"] = dict(row["seat_category_mapping"] or {})


_EVENT_SLUG = (
    select(Event.slug)
    .where(Event.id == SubEvent.event_id)
    .correlate_except(Event)  # O/subevents/ joins the events itself
    .scalar_subquery()
)

SUBEVENT_ROWS = Rows(
    SubEventOut,
    SubEvent,
    columns={"event": _EVENT_SLUG},
    children=(
        Nested.of(
            SubEvent.item_overrides,
            Rows(ItemOverrideOut, SubEventItem),
            name="item_price_overrides",
            probe=True,
        ),
        Nested.of(
            SubEvent.variation_overrides,
            Rows(VariationOverrideOut, SubEventItemVariation),
            name="variation_price_overrides",
            probe=True,
        ),
    ),
    finish=_finish_subevent,
)
