"""Item and voucher list pages whose JSON PostgreSQL writes (``catalog/items/item_json.py``,
``vouchers/voucher_json.py``) answer byte for byte as the pages rendered from rows in Python
(``rows.py``), on the rich catalog of ``tests/kit/test_render_parity.py`` (variations with
their own prices, channels and meta data, add-ons, bundles, a picture, a tax rule, membership
types, i18n names, vouchers with and without budgets) plus rows of odd values: quotes,
backslashes, control characters and non-ASCII text in names, an empty internal name, meta
data whose keys sort differently as JSONB and as Python, nested JSON, program times, a
voucher holding a seat.

Each URL is read twice: as served (the database's JSON), then with it turned off
(``rendered._in_sql``), with the kept pages off so that both reads are rendered.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import httpx
import pytest
from sqlalchemy import select

from admit.kit.resources import rendered
from admit.kit.stamps.pagecache import PageCache
from admit.models import Event, Item, ItemVariation, Voucher
from tests.factories import Factory, World, auth
from tests.json_paths import Paths, compare
from tests.kit.test_render_parity import E, S, _organizer, _seed
from tests.seating import helpers as seating

ODD = 'He said "hi" \\ back\n\ttab \x01 ctrl \x7f ✓ 日本 </script>'
ITEM_VARIANTS = (
    "",
    "?ordering=-position",
    "?ordering=id",
    "?page_size=2",
    "?page_size=2&page=2",
    "?page_size=3&page=99",
    "?active=true",
    "?active=false",
    "?admission=true",
    "?free_price=true",
    "?search=Ticket",
    "?search=日本",
    "?tax_rate=19.00",
    "?tax_rate=0",
    "?include=id&exclude=name",  # not offered by these lists: ignored by both paths
)
VOUCHER_VARIANTS = (
    "",
    "?ordering=-code",
    "?ordering=valid_until",
    "?ordering=-value",
    "?page_size=2&page=2",
    "?page_size=2&page=9",
    "?tag=press",
    "?tag=日本",
    "?price_mode=set",
    "?block_quota=false",
    "?value=12.50",
)


async def _odd_rows(client: httpx.AsyncClient, h: dict[str, str], factory: Factory) -> None:
    """Rows with the values the two paths could write differently."""
    stalls = await client.get(f"{E}/items/?search=Ticket", headers=h)
    ticket_id = stalls.json()["results"][0]["id"]
    r = await client.post(
        f"{E}/items/",
        json={
            "name": {"en": ODD, "de": "Grüße"},
            "default_price": "0.5",
            "internal_name": "",
            "program_times": [
                {"start": "2030-05-01T09:00:00Z", "end": "2030-05-01T11:30:00Z"},
                {"start": "2030-05-02T11:00:00+02:00", "end": "2030-05-02T12:00:00+02:00"},
            ],
            "variations": [{"value": {"en": ODD}, "default_price": "0"}],
        },
        headers=h,
    )
    assert r.status_code == 201, r.text
    odd_id, variation_id = r.json()["id"], r.json()["variations"][0]["id"]
    async with factory.sessionmaker() as session:
        odd = await session.get(Item, odd_id)
        assert odd is not None
        # Keys that JSONB orders by length first, Python by code point; nested values.
        odd.meta_data = {"zz": "1", "b": ODD, "Ä": "x", "a": "", "size": "S"}
        odd.limit_sales_channels = []
        odd.all_sales_channels = False
        odd.description = {"en": ODD, "ja": "日本語"}
        variation = await session.get(ItemVariation, variation_id)
        assert variation is not None
        variation.meta_data = {"color": "grün", "aa": "2"}
        variation.limit_sales_channels = ["web", "box_office"]
        variation.all_sales_channels = False
        variation.available_from = dt.datetime(2030, 1, 1, 12, 0, 0, 500, tzinfo=dt.UTC)
        event = (await session.scalars(select(Event).where(Event.slug == "summit"))).one()
        # Declared defaults with odd keys and text.
        event.item_meta_properties = {"color": "blue", "size": "", "émoji": ODD}
        await session.commit()
    r = await client.post(
        f"{E}/vouchers/batch_create/",
        json=[
            {"code": "ODD-0001", "comment": ODD, "tag": "日本", "value": "0.1", "budget": "0"},
            {"code": "ITEM-0002", "item": ticket_id, "price_mode": "percent", "value": "100"},
        ],
        headers=h,
    )
    assert r.status_code == 201, r.text
    async with factory.sessionmaker() as session:
        for voucher in await session.scalars(select(Voucher).where(Voucher.code == "ODD-0001")):
            voucher.valid_until = dt.datetime(2031, 2, 3, 4, 5, 6, tzinfo=dt.UTC)
            voucher.budget_used = Decimal("0.05")
        await session.commit()


async def _seat_voucher(
    client: httpx.AsyncClient, h: dict[str, str], factory: Factory, world: World
) -> None:
    stalls = await seating.ticket(factory, world.event)
    await seating.seated_event(factory, world.event, {"Stalls": stalls.id, "Balcony": None})
    r = await client.post(
        f"{E}/vouchers/", json={"seat": "1-1", "item": stalls.id, "code": "SEAT11"}, headers=h
    )
    assert r.status_code == 201, r.text


async def test_database_json_is_the_python_json(
    client: httpx.AsyncClient,
    clean_app: object,
    world: World,
    factory: Factory,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if not database_url.startswith("postgresql"):
        pytest.skip("the database writes JSON on PostgreSQL only")
    cache: PageCache = clean_app.state.page_cache  # type: ignore[attr-defined]
    monkeypatch.setattr(cache, "limit", 0)  # every read renders
    h = auth(world.admin)
    await _organizer(client, h, factory, world)
    await _seed(client, h)
    await _seat_voucher(client, h, factory, world)
    await _odd_rows(client, h, factory)
    paths = Paths(monkeypatch, rendered)
    served = 0
    for base in (E, S):
        for variant in ITEM_VARIANTS:
            served += await compare(client, h, paths, f"{base}/items/{variant}") == 200
        for variant in VOUCHER_VARIANTS:
            served += await compare(client, h, paths, f"{base}/vouchers/{variant}") == 200
    assert served >= 40
    # Every list read above (two reads per URL) asked for the database's JSON once.
    assert paths.in_sql >= served
    full = (await client.get(f"{E}/items/", headers=h)).json()["results"]
    assert any(i["variations"] and i["addons"] and i["bundles"] for i in full)
    assert any(i["picture"] and i["require_membership_types"] for i in full) or any(
        i["picture"] for i in full
    )
    assert any(i["program_times"] and i["meta_data"].get("émoji") == ODD for i in full)
    vouchers = (await client.get(f"{E}/vouchers/", headers=h)).json()["results"]
    assert {"1-1", None} <= {v["seat"] for v in vouchers}
    assert any(v["budget"] is None for v in vouchers) and any(v["budget"] for v in vouchers)
