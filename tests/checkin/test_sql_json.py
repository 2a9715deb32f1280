"""A check-in list's tickets written as JSON by PostgreSQL (``checkin/position_json.py``)
answer byte for byte as the pages rendered from rows in Python (``position_rows.py``), on the
rich orders (``tests/orders/rich.py``: check-ins on two lists and a failed one, answers with
options, a canceled position, orders in every state) with attention asked for by an order, a
product and a variation, names falling back to the main ticket's and the invoice address's;
with the lists' orderings, filters, searches and pages. Each URL is read as served, then with
the database's JSON turned off (``_in_sql``); ``expand=`` takes the Python path both times.
"""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy import update

from admit.checkin import positions
from admit.models import Item, Order, OrderPosition
from tests.factories import Factory, World, auth
from tests.json_paths import Paths, compare
from tests.orders import helpers as oh
from tests.orders import rich

VARIANTS = (
    "",
    "?ordering=-last_checked_in",
    "?ordering=order__email,-positionid",
    "?ordering=attendee_name",
    "?page_size=2&page=2",
    "?page_size=2&page=50",
    "?has_checkin=true",
    "?has_checkin=false",
    "?ignore_status=true",
    "?search=ada",
    "?status=p",
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
    codes, lists = await rich.seed(client, world, factory)
    async with factory.sessionmaker() as s:
        await s.execute(update(Order).where(Order.code == codes[1]).values(checkin_attention=True))
        shirt = await s.scalar(
            OrderPosition.__table__.select()
            .with_only_columns(OrderPosition.item_id)
            .where(OrderPosition.addon_to_id.is_not(None))
            .limit(1)
        )
        await s.execute(update(Item).where(Item.id == shirt).values(checkin_attention=True))
        # A name from the invoice address (no name on the ticket, none on a parent).
        await s.execute(
            update(OrderPosition)
            .where(OrderPosition.addon_to_id.is_(None))
            .where(OrderPosition.positionid == 1)
            .where(OrderPosition.order_id == Order.id, Order.code == codes[1])
            .values(attendee_name_cached="")
        )
        await s.commit()
    paths = Paths(monkeypatch, positions)
    served = 0
    for list_id in lists:
        base = oh.url(world, f"checkinlists/{list_id}/positions/")
        for variant in VARIANTS:
            served += await compare(client, h, paths, base + variant) == 200
        page = (await client.get(base, headers=h)).json()
        assert any(r["checkins"] for r in page["results"])
        assert any(r["require_attention"] for r in page["results"])
        assert "Inv Name" in {r["attendee_name"] for r in page["results"]}
    assert served >= 2 * (len(VARIANTS) - 1)
    assert paths.in_sql >= served
    # A list of another kind (first pages are statements kept per kind): one product,
    # pending orders in.
    changed = {"all_products": False, "limit_products": [shirt], "include_pending": True}
    list_url = oh.url(world, f"checkinlists/{lists[1]}/")
    assert (await client.patch(list_url, json=changed, headers=h)).status_code == 200
    base = list_url + "positions/"
    for variant in ("", "?page_size=1", "?ordering=attendee_name"):
        assert await compare(client, h, paths, base + variant) == 200
    page = (await client.get(base, headers=h)).json()
    assert page["count"] and all(r["item"] == shirt for r in page["results"])
    before = paths.in_sql
    url = oh.url(world, f"checkinlists/{lists[0]}/positions/?expand=item")
    assert await compare(client, h, paths, url) == 200
    assert paths.in_sql == before
