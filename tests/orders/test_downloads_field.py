"""``downloads`` of orders and positions list exactly the ticket PDFs their URLs serve, and
``pdf_data=true`` adds each position's ticket variables; both for a whole page in a fixed
number of statements."""

from __future__ import annotations

import pytest

from admit.tickets.variables import TEXT_VARIABLES
from tests.checkin.helpers import addon
from tests.factories import World, auth
from tests.orders import helpers as h
from tests.tickets import helpers as t


def _urls(body: dict) -> list[str]:
    assert all(d["output"] == "pdf" for d in body["downloads"]), body["downloads"]
    return [d["url"] for d in body["downloads"]]


async def _detail(client, world: World, code: str, query: str = "") -> dict:
    r = await client.get(t.url(world, f"orders/{code}/{query}"), headers=auth(world.admin))
    assert r.status_code == 200, r.text
    return r.json()


async def _status(client, world: World, url: str) -> int:
    path = url.split("://", 1)[1].split("/", 1)[1]
    return (await client.get("/" + path, headers=auth(world.admin))).status_code


async def test_a_paid_order_lists_real_downloads(client, world, factory):
    item = await t.ticket_item(factory, world.event)
    order, (first, second) = await t.order(factory, world.event, item, ["Ada", "Bob"])
    body = await _detail(client, world, order.code)
    api = f"/api/v1/organizers/{world.org.slug}/events/{world.event.slug}/"
    (order_url,) = _urls(body)
    assert order_url.startswith("http") and order_url.endswith(
        f"{api}orders/{order.code}/download/pdf/"
    )
    for position, shown in zip((first, second), body["positions"], strict=True):
        (url,) = _urls(shown)
        assert url.endswith(f"{api}orderpositions/{position.id}/download/pdf/")
    # Every listed URL has a ticket: its rendering starts (409), it is not refused (404).
    for url in (order_url, *(p["downloads"][0]["url"] for p in body["positions"])):
        assert await _status(client, world, url) == 409
    # The same in the lists and the position detail.
    r = await client.get(t.url(world, "orders/"), headers=auth(world.admin))
    assert r.json()["results"][0]["downloads"] == body["downloads"]
    r = await client.get(t.url(world, "orderpositions/"), headers=auth(world.admin))
    assert [p["downloads"] for p in r.json()["results"]] == [
        p["downloads"] for p in body["positions"]
    ]
    r = await client.get(t.url(world, f"orderpositions/{first.id}/"), headers=auth(world.admin))
    assert r.json()["downloads"] == body["positions"][0]["downloads"]


@pytest.mark.parametrize(
    ("status", "extra", "listed"),
    [
        ("p", {}, True),
        ("n", {}, False),
        ("n", {"valid_if_pending": True}, True),
        ("p", {"require_approval": True}, False),
        ("n", {"require_approval": True, "valid_if_pending": True}, False),
        ("e", {}, False),
        ("c", {}, False),
    ],
)
async def test_which_orders_list_downloads(client, world, factory, status, extra, listed):
    item = await t.ticket_item(factory, world.event)
    order, (position,) = await t.order(factory, world.event, item, status=status, **extra)
    body = await _detail(client, world, order.code)
    assert bool(body["downloads"]) is listed
    assert bool(body["positions"][0]["downloads"]) is listed
    if not listed:  # nothing listed, nothing served
        api = f"/api/v1/organizers/{world.org.slug}/events/{world.event.slug}/"
        urls = (
            f"{api}orders/{order.code}/download/pdf/",
            f"{api}orderpositions/{position.id}/download/pdf/",
        )
        for url in urls:
            assert (await client.get(url, headers=auth(world.admin))).status_code == 404


async def test_products_addons_and_canceled_positions(client, world, factory):
    item = await t.ticket_item(factory, world.event)
    silent = await t.ticket_item(factory, world.event, "No ticket", generate_tickets=False)
    extra_item = await t.ticket_item(factory, world.event, "Parking")
    printed_addon = await t.ticket_item(factory, world.event, "Workshop", generate_tickets=True)
    order, (main,) = await t.order(factory, world.event, item)
    plain_addon = await addon(factory, order, main, extra_item, 2)
    own_ticket = await addon(factory, order, main, printed_addon, 3)
    body = await _detail(client, world, order.code)
    listed = {p["id"]: bool(p["downloads"]) for p in body["positions"]}
    # An add-on prints on its main position's ticket unless its product says otherwise.
    assert listed == {main.id: True, plain_addon.id: False, own_ticket.id: True}
    for p in body["positions"]:
        url = f"{t.url(world, 'orderpositions/')}{p['id']}/download/pdf/"
        status = (await client.get(url, headers=auth(world.admin))).status_code
        assert status == (409 if listed[p["id"]] else 404)
    # An order whose products print no ticket has nothing to download.
    quiet, _ = await t.order(factory, world.event, silent)
    body = await _detail(client, world, quiet.code)
    assert body["downloads"] == [] and body["positions"][0]["downloads"] == []
    # A canceled position (shown on request) has no download; the order keeps its own.
    order, (_kept, gone) = await t.order(factory, world.event, item, ["A", "B"])
    r = await client.delete(t.url(world, f"orderpositions/{gone.id}/"), headers=auth(world.admin))
    assert r.status_code == 204
    body = await _detail(client, world, order.code, "?include_canceled_positions=true")
    assert [bool(p["downloads"]) for p in body["positions"]] == [True, False]
    assert body["downloads"]


async def test_pdf_data(client, world, factory):
    item = await t.ticket_item(factory, world.event, "Conference pass")
    order, (position,) = await t.order(factory, world.event, item, ["Grace Hopper"])
    assert "pdf_data" not in (await _detail(client, world, order.code))["positions"][0]
    body = await _detail(client, world, order.code, "?pdf_data=true")
    data = body["positions"][0]["pdf_data"]
    assert set(TEXT_VARIABLES) <= set(data)
    assert data["attendee_name"] == "Grace Hopper"
    assert data["order"] == order.code
    assert data["item"] == "Conference pass"
    assert data["secret"] == position.secret
    assert data["event_name"] == world.event.name["en"]
    listed = await client.get(t.url(world, "orders/?pdf_data=true"), headers=auth(world.admin))
    assert listed.json()["results"][0]["positions"][0]["pdf_data"] == data
    r = await client.get(t.url(world, "orderpositions/?pdf_data=1"), headers=auth(world.admin))
    assert r.json()["results"][0]["pdf_data"] == data
    r = await client.get(
        t.url(world, f"orderpositions/{position.id}/?pdf_data=true"), headers=auth(world.admin)
    )
    assert r.json()["pdf_data"] == data
    r = await client.get(t.url(world, "orderpositions/"), headers=auth(world.admin))
    assert "pdf_data" not in r.json()["results"][0]


@pytest.mark.parametrize("query", ["", "?pdf_data=true"])
@pytest.mark.parametrize("path", ["orders/", "orderpositions/"])
async def test_lists_take_fixed_queries(client, world, factory, count_queries, path, query):
    """Downloads and pdf_data cost the same statements for one order as for five."""
    item = await t.ticket_item(factory, world.event)
    url = t.url(world, path + query)
    await t.order(factory, world.event, item, ["A", "B"])
    await client.get(url, headers=auth(world.admin))  # warm caches
    with count_queries() as one:
        r = await client.get(url, headers=auth(world.admin))
    assert r.status_code == 200
    for _ in range(4):
        await t.order(factory, world.event, item, ["A", "B"])
    with count_queries() as five:
        r = await client.get(url, headers=auth(world.admin))
    assert r.json()["count"] == (5 if path == "orders/" else 10)
    assert all(p["downloads"] for p in r.json()["results"])
    assert len(five.statements) == len(one.statements)


async def test_created_and_simulated_orders(client, world, factory):
    """A paid order's creation answer lists its downloads; a simulated one has none (it does
    not exist), and a free order created paid has them at once."""
    item = await h.item(factory, world.event, "0.00")
    body = {"status": "p", "positions": [{"item": item.id}], "payment_provider": "free"}
    url = t.url(world, "orders/")
    r = await client.post(url, json={**body, "simulate": True}, headers=auth(world.admin))
    assert r.status_code == 201, r.text
    assert r.json()["downloads"] == [] and r.json()["positions"][0]["downloads"] == []
    r = await client.post(url, json=body, headers=auth(world.admin))
    assert r.status_code == 201, r.text
    created = r.json()
    assert _urls(created)[0].endswith(f"orders/{created['code']}/download/pdf/")
    position = created["positions"][0]
    assert _urls(position)[0].endswith(f"orderpositions/{position['id']}/download/pdf/")
