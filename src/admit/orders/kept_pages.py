"""The order, position and check-in list pages that integrations and scanners poll, answered
from kept pages (``kit/stamps/pagecache.py``) while nothing they show changed.

These lists are rendered by their routes (not in the lane): a lane handler
(``kit.stamps.pagecache.kept_route``) checks the caller exactly as the route does, proves a kept
page still holds and answers it, or lets the route render and keeps what it answered. What such a
page shows moves one of three things, all probed in one statement:

- the stamp of an order of the event (``orders.last_modified``, moved by triggers for every
  change to the order, its positions, fees, payments, refunds, answers and successful
  check-ins, ``models/order_stamp.py``) at or after the page's bound;
- the event's deletion stamp (an order deleted, ``models/deletion_stamp.py``);
- the event's catalog stamp (products, questions and check-in lists: a question's
  identifier, a list's products), compared for equality.
"""

from __future__ import annotations

from admit.checkin.access import READ as CHECKIN_READ
from admit.kit.http.context import AnyEventPermission, EventAccess
from admit.kit.http.routing import API_PREFIX
from admit.kit.resources.fields import EXCLUDE, INCLUDE
from admit.kit.stamps.catalog import event_pages
from admit.models import Order
from admit.orders.routes import READ as ORDERS_READ

ORDER_PAGES = event_pages(Order.last_modified)
# ``include=`` / ``exclude=`` narrow what a page shows, not which rows: such pages are kept
# too, each selection as its own page (the key holds the whole query string).
SHAPING = (INCLUDE, EXCLUDE)


_E = f"{API_PREFIX}/organizers/{{organizer}}/events/{{event}}"
# (path template, the route's access check, query parameters kept beside paging: filters
# whose answer depends on the rows alone, not on the clock); served by
# ``kit.stamps.pagecache.kept_route`` with ``ORDER_PAGES``.
KEPT_LISTS: tuple[tuple[str, EventAccess, tuple[str, ...]], ...] = (
    (
        f"{_E}/orders/",
        EventAccess(ORDERS_READ),
        ("status", "testmode", "include_canceled_positions", "include_canceled_fees", *SHAPING),
    ),
    (f"{_E}/orderpositions/", EventAccess(ORDERS_READ), SHAPING),
    (f"{_E}/checkinlists/{{id}}/positions/", AnyEventPermission(*CHECKIN_READ), ()),
)
