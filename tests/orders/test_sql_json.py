"""Pages whose JSON PostgreSQL writes (``orders/order_json.py``) answer byte for byte as the
pages rendered from rows in Python (``order_rows.py``), on data that fills every field
(``rich.py``: answers with options, a seat, print logs, check-ins, fees and a position
canceled, payments and refunds with gift card details, a customer, every order state) and an
order of non-ASCII text, quotes, control characters and nested JSON; with every flag, the
orderings, filters, searches and pages (``count``, ``next``, ``previous``, past the end).

Each URL is read twice: as served, then with the database's JSON turned off (``_in_sql``),
and the bodies must be equal. Where the page cannot be written by the database (``pdf_data``,
``include=`` / ``exclude=``, ``O/orders/``) both reads take the Python path, which the test
checks too.
"""

from __future__ import annotations

import httpx
import pytest

from admit.orders import listed
from tests.factories import Factory, World, auth
from tests.json_paths import Paths, compare
from tests.orders import helpers as oh
from tests.orders import rich

FLAGS = (
    "",
    "?include_canceled_positions=true",
    "?include_canceled_fees=true",
    "?include_canceled_positions=true&include_canceled_fees=true",
)
ORDER_VARIANTS = (
    "",
    "ordering=-code",
    "ordering=status,-datetime",
    "ordering=-last_modified",
    "page_size=2",
    "page_size=2&page=2",
    "page_size=3&page=3",
    "page_size=3&page=9",
    "status__in=p,N",
    "status=n",
    "search=ada",
    "search=Zoë",
    "email=nobody@example.org",
    "testmode=false",
)
POSITION_VARIANTS = (
    "",
    "ordering=-attendee_name",
    "ordering=order__code,-positionid",
    "page_size=4&page=2",
    "page_size=4&page=99",
    "has_checkin=true",
    "order__status=p",
    "search=Zoë",
)


async def test_database_json_is_the_python_json(
    client: httpx.AsyncClient,
    world: World,
    factory: Factory,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if not database_url.startswith("postgresql"):
        pytest.skip("the database writes JSON on PostgreSQL only")
    h = auth(world.admin)
    codes, _ = await rich.seed(client, world, factory)
    odd_item = await oh.item(factory, world.event, "7.10")
    body = {
        "email": "zoë@example.org",
        "comment": 'He said "hi" \\ back\n\ttab \x01 ctrl ✓ 日本',
        "invoice_address": {"name": "Zoë Ünïcode", "company": "A, B: C", "street": "x"},
        "api_meta": {"nested": {"list": [1, "two", None, True, 2.5]}, "k": "é"},
        "positions": [
            {
                "item": odd_item.id,
                "attendee_name": 'Zoë "Q" \\ 日本',
                "company": "Ñ",
                "price": "7.10",
            }
        ],
    }
    odd = await rich.post(client, h, oh.url(world), body)
    assert odd["code"]
    paths = Paths(monkeypatch, listed)
    base = oh.url(world)
    served = 0
    for flags in FLAGS:
        sep = "&" if flags else "?"
        for variant in ORDER_VARIANTS:
            url = base + flags + (sep + variant if variant else "")
            served += await compare(client, h, paths, url) == 200
        for code in (*codes, odd["code"]):
            assert await compare(client, h, paths, f"{base}{code}/{flags}") == 200
        positions = oh.url(world, "orderpositions/")
        for variant in POSITION_VARIANTS:
            url = positions + flags + (sep + variant if variant else "")
            served += await compare(client, h, paths, url) == 200
    assert served >= 70
    # The database wrote each of those lists (twice per URL: the first of the two reads).
    assert paths.in_sql >= served
    before = paths.in_sql
    for url in (
        base + "?pdf_data=true",
        base + "?include=code&include=positions.id",
        base + "?exclude=positions",
        oh.url(world, "orderpositions/") + "?pdf_data=true",
        f"/api/v1/organizers/{world.org.slug}/orders/",
    ):
        assert await compare(client, h, paths, url) == 200
    assert paths.in_sql == before  # those take the Python path
