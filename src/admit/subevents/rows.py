"""How the dates of an event series render for GETs (see ``kit/resources/render.py``): the same JSON
as ``subevent_to_read`` through ``SubEventOut``, for ``E/subevents/`` (the event's slug from
the URL) and ``O/subevents/`` (each date's event slug selected with it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import select

from admit.kit.resources.render import Nested, Rows
from admit.models import Event, SubEvent, SubEventItem, SubEventItemVariation
from admit.subevents.schemas import ItemOverrideOut, SubEventOut, VariationOverrideOut


def _finish(row: dict[str, Any], _parent: Any, _extra: Mapping[str, Any]) -> None:
    row["meta_data"] = dict(row["meta_data"] or {})
    row["seat_category_mapping"] = dict(row["seat_category_mapping"] or {})


def _finish_in_event(row: dict[str, Any], parent: Any, extra: Mapping[str, Any]) -> None:
    row["event"] = extra["event_slug"]
    _finish(row, parent, extra)


_OVERRIDES = (
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
)

# ``E/subevents/``: every date is the URL's event's.
SUBEVENT_ROWS = Rows(
    SubEventOut, SubEvent, computed=("event",), children=_OVERRIDES, finish=_finish_in_event
)

_EVENT_SLUG = (
    select(Event.slug)
    .where(Event.id == SubEvent.event_id)
    .correlate_except(Event)  # O/subevents/ joins the events itself
    .scalar_subquery()
)
# ``O/subevents/``: dates of several events.
ORGANIZER_SUBEVENT_ROWS = Rows(
    SubEventOut, SubEvent, columns={"event": _EVENT_SLUG}, children=_OVERRIDES, finish=_finish
)
