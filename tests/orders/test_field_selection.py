"""``include=`` and ``exclude=`` on orders and order positions, lists and details (issue 28;
the reference's semantics: repeatable, dots into nested objects, ``exclude`` wins), also
through kept pages and the fast lane, which must key and answer each selection apart."""

from __future__ import annotations

from typing import Any

from tests.factories import World, auth
from tests.orders import helpers as h
from tests.orders.test_kept_pages import Pages
from tests.orders.test_payments import place


async def _get(client, world: World, url: str) -> Any:
    response = await client.get(url, headers=auth(world.admin))
    assert response.status_code == 200, response.text
    return response.json()


async def _orders(client, world: World, factory) -> tuple[str, int]:
    item = await h.item(factory, world.event, "10.00")
    order = await place(client, world, item.id, 2, status="p", payment_provider="banktransfer")
    return order["code"], order["positions"][0]["id"]


async def test_orders_list_and_detail(client, world: World, factory):
    code, _ = await _orders(client, world, factory)
    full = (await _get(client, world, h.url(world)))["results"][0]
    assert "positions" in full and "downloads" in full["positions"][0]

    body = await _get(client, world, h.url(world, "orders/?include=code&include=status"))
    assert body["count"] == 1 and body["results"] == [{"code": code, "status": "p"}]

    body = await _get(client, world, h.url(world, "orders/?exclude=positions"))
    assert body["results"][0] == {k: v for k, v in full.items() if k != "positions"}

    body = await _get(
        client, world, h.url(world, "orders/?exclude=positions.downloads&exclude=fees")
    )
    order = body["results"][0]
    assert "fees" not in order and "downloads" in order
    assert [set(p) for p in order["positions"]] == [
        set(p) - {"downloads"} for p in full["positions"]
    ]

    # A nested include keeps the parent with only what is named below it; exclude wins.
    body = await _get(
        client,
        world,
        h.url(world, "orders/?include=code&include=positions.secret&include=positions.id"),
    )
    assert body["results"][0] == {
        "code": code,
        "positions": [{"id": p["id"], "secret": p["secret"]} for p in full["positions"]],
    }
    body = await _get(
        client, world, h.url(world, "orders/?include=code&include=status&exclude=status")
    )
    assert body["results"] == [{"code": code}]
    body = await _get(
        client, world, h.url(world, "orders/?exclude=nonsense&exclude=positions.nope")
    )
    assert body["results"][0] == full  # unknown names are ignored

    detail = await _get(client, world, h.url(world, f"orders/{code}/?include=code&include=total"))
    assert detail == {"code": code, "total": "20.00"}
    detail = await _get(client, world, h.url(world, f"orders/{code}/?exclude=positions"))
    assert "positions" not in detail and detail["code"] == code

    organizer = await _get(
        client, world, f"/api/v1/organizers/{world.org.slug}/orders/?include=code"
    )
    assert organizer["results"] == [{"code": code}]


async def test_positions_list_and_detail(client, world: World, factory):
    code, first = await _orders(client, world, factory)
    body = await _get(client, world, h.url(world, "orderpositions/?include=id&include=order"))
    assert {tuple(sorted(p)) for p in body["results"]} == {("id", "order")}
    assert all(p["order"] == code for p in body["results"])
    body = await _get(client, world, h.url(world, "orderpositions/?exclude=checkins"))
    assert all("checkins" not in p and "secret" in p for p in body["results"])
    one = await _get(client, world, h.url(world, f"orderpositions/{first}/?include=secret"))
    assert list(one) == ["secret"]


async def test_each_selection_is_its_own_kept_page(client, world: World, factory, page_cache):
    """The kept pages (fast lane, PostgreSQL) are keyed by the selection: a page kept for one
    selection is never answered for another, and each is answered from the cache in turn."""
    code, _ = await _orders(client, world, factory)
    urls = [
        h.url(world),
        h.url(world, "orders/?include=code&include=status"),
        h.url(world, "orders/?exclude=positions"),
        h.url(world, "orders/?exclude=positions.downloads"),
        h.url(world, "orderpositions/"),
        h.url(world, "orderpositions/?include=id"),
    ]
    pages = Pages(client, world, urls, page_cache)
    kept = await pages.kept()  # every one answered from the cache at least once
    assert kept[1]["results"] == [{"code": code, "status": "p"}]
    assert "positions" not in kept[2]["results"][0] and "positions" in kept[0]["results"][0]
    assert all("downloads" not in p for p in kept[3]["results"][0]["positions"])
    assert all(list(p) == ["id"] for p in kept[5]["results"])
    assert "secret" in kept[4]["results"][0]
    await pages.agree("no change")  # each kept page equals a fresh rendering
