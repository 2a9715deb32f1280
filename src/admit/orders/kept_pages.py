"""The order, position and check-in list pages that integrations and scanners poll, answered
from kept pages (``kit/pagecache.py``) while nothing they show changed.

These lists are rendered by their routes (not in the lane): a lane handler checks the
caller exactly as the route does, proves a kept page still holds and answers it, or lets the
route render and keeps what it answered. What such a page shows moves one of three things,
all probed in one statement:

- the stamp of an order of the event (``orders.last_modified``, moved by triggers for every
  change to the order, its positions, fees, payments, refunds, answers and successful
  check-ins, ``models/order_stamp.py``) at or after the page's bound;
- the event's deletion stamp (an order deleted, ``models/deletion_stamp.py``);
- the event's catalog stamp (products, questions and check-in lists: a question's
  identifier, a list's products), compared for equality.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from admit.checkin.access import READ as CHECKIN_READ
from admit.kit.changestamp import event_pages
from admit.kit.context import AnyEventPermission, EventAccess, lane_context
from admit.kit.fastlane import Handler, LaneRequest
from admit.kit.pagecache import Filling, PageCache, cacheable, look, page_key
from admit.kit.routing import API_PREFIX
from admit.models import Order
from admit.orders.routes import READ as ORDERS_READ

ORDER_PAGES = event_pages(Order.last_modified)


def kept_list(access: EventAccess, allowed: Collection[str] = ()) -> Handler:
    """A lane handler for a list route of ``access`` whose pages ``ORDER_PAGES`` validates;
    query parameters other than paging and ``allowed`` go the route's way unkept."""

    async def handler(request: LaneRequest) -> Any:
        cache: PageCache = request.scope["app"].state.page_cache
        if not cache.enabled or not cacheable(request, allowed):
            return None
        async with lane_context(request.scope, access, request.params) as ctx:
            if ctx is None:
                return None  # the route gives the 401/403
            key = page_key(request.scope, ctx.principal)
            params = {"event_id": ctx.event.id}  # type: ignore[attr-defined]
            lookup = await look(cache, ctx.session, key, ORDER_PAGES, params)
        if lookup.answer is not None:
            return lookup.answer
        return Filling(cache, lookup, request.scope["app"].framework)

    return handler


_E = f"{API_PREFIX}/organizers/{{organizer}}/events/{{event}}"
# (path template, the route's access check, query parameters kept beside paging): filters
# whose answer depends on the rows alone, not on the clock.
KEPT_LISTS: tuple[tuple[str, EventAccess, tuple[str, ...]], ...] = (
    (
        f"{_E}/orders/",
        EventAccess(ORDERS_READ),
        ("status", "testmode", "include_canceled_positions", "include_canceled_fees"),
    ),
    (f"{_E}/orderpositions/", EventAccess(ORDERS_READ), ()),
    (f"{_E}/checkinlists/{{id}}/positions/", AnyEventPermission(*CHECKIN_READ), ()),
)
