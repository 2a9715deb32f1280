"""Canceled positions and fees: hidden by default in order details, order lists (event and
organizer) and the position list and detail; shown with ``include_canceled_positions=true`` /
``include_canceled_fees=true``; a flag that is no boolean is a 400 naming it."""

from __future__ import annotations

from tests.factories import auth
from tests.orders import helpers as h


async def _setup(client, world, factory) -> tuple[dict, int, int]:
    """An order with two positions and two fees, one of each then canceled."""
    item = await h.item(factory, world.event)
    body = {
        "positions": [{"item": item.id}, {"item": item.id}],
        "fees": [
            {"fee_type": "shipping", "value": "2.00"},
            {"fee_type": "service", "value": "1.00"},
        ],
    }
    r = await client.post(h.url(world), json=body, headers=auth(world.admin))
    assert r.status_code == 201, r.text
    order = r.json()
    kept, gone = (p["id"] for p in order["positions"])
    shipping, service = (f["id"] for f in order["fees"])
    change = {"cancel_positions": [{"position": gone}], "cancel_fees": [{"fee": service}]}
    r = await client.post(
        h.url(world, f"orders/{order['code']}/change/"), json=change, headers=auth(world.admin)
    )
    assert r.status_code == 200, r.text
    # The change's own answer follows the same rule.
    assert [p["id"] for p in r.json()["positions"]] == [kept]
    assert [f["id"] for f in r.json()["fees"]] == [shipping]
    return order, kept, gone


def _ids(body: dict, key: str) -> list[int]:
    return [x["id"] for x in body[key]]


async def test_order_detail_and_lists(client, world, factory):
    order, kept, gone = await _setup(client, world, factory)
    shipping, service = (f["id"] for f in order["fees"])
    get = lambda u: client.get(u, headers=auth(world.admin))  # noqa: E731
    detail = h.url(world, f"orders/{order['code']}/")
    org_list = f"/api/v1/organizers/{world.org.slug}/orders/"
    for url in (detail, h.url(world), org_list):
        sep = "&" if "?" in url else "?"

        async def one(query: str, url=url, sep=sep) -> dict:
            r = await get(url + (sep + query if query else ""))
            assert r.status_code == 200, r.text
            body = r.json()
            return body if "code" in body else body["results"][0]

        plain = await one("")
        assert _ids(plain, "positions") == [kept] and _ids(plain, "fees") == [shipping]
        both = await one("include_canceled_positions=true&include_canceled_fees=true")
        assert _ids(both, "positions") == [kept, gone]
        assert [p["canceled"] for p in both["positions"]] == [False, True]
        assert _ids(both, "fees") == [shipping, service]
        positions_only = await one("include_canceled_positions=1")
        assert _ids(positions_only, "positions") == [kept, gone]
        assert _ids(positions_only, "fees") == [shipping]
        fees_only = await one("include_canceled_fees=yes&include_canceled_positions=false")
        assert _ids(fees_only, "positions") == [kept]
        assert _ids(fees_only, "fees") == [shipping, service]
        bad = await get(url + sep + "include_canceled_positions=maybe&include_canceled_fees=2")
        assert bad.status_code == 400
        assert set(bad.json()) == {"include_canceled_positions", "include_canceled_fees"}


async def test_position_list_and_detail(client, world, factory):
    order, kept, gone = await _setup(client, world, factory)
    get = lambda u: client.get(u, headers=auth(world.admin))  # noqa: E731
    positions = h.url(world, "orderpositions/")
    listed = (await get(positions)).json()
    assert listed["count"] == 1 and _ids(listed, "results") == [kept]
    listed = (await get(positions + "?include_canceled_positions=true")).json()
    assert listed["count"] == 2 and _ids(listed, "results") == [kept, gone]
    # Fees are no positions: the fee flag changes nothing here.
    listed = (await get(positions + "?include_canceled_fees=true")).json()
    assert _ids(listed, "results") == [kept]
    # With a filter: the canceled one is still left out unless asked for.
    q = f"?order={order['code']}"
    assert _ids((await get(positions + q)).json(), "results") == [kept]
    q += "&include_canceled_positions=true"
    assert _ids((await get(positions + q)).json(), "results") == [kept, gone]
    # The detail of a canceled position: only when asked for.
    assert (await get(f"{positions}{gone}/")).status_code == 404
    shown = await get(f"{positions}{gone}/?include_canceled_positions=true")
    assert shown.status_code == 200 and shown.json()["canceled"] is True
    assert (await get(f"{positions}{kept}/")).status_code == 200
    bad = await get(positions + "?include_canceled_positions=nope&item=x")
    assert bad.status_code == 400 and set(bad.json()) == {"include_canceled_positions", "item"}
    # Writes see the same positions: a canceled one is not found without the flag.
    r = await client.patch(
        f"{positions}{gone}/", json={"attendee_name": "Z"}, headers=auth(world.admin)
    )
    assert r.status_code == 404


async def test_order_cancellation_with_and_without_fee(client, world, factory):
    """Canceling an order without a fee cancels the order, not its positions: they stay
    shown. With a fee the positions and old fees are canceled: hidden, the fee shown."""
    item = await h.item(factory, world.event)
    codes = []
    for _ in range(2):
        r = await client.post(
            h.url(world),
            json={
                "positions": [{"item": item.id}],
                "fees": [{"fee_type": "service", "value": "1"}],
            },
            headers=auth(world.admin),
        )
        codes.append(r.json()["code"])
    plain, with_fee = (h.url(world, f"orders/{c}/") for c in codes)
    r = await client.post(plain + "mark_canceled/", json={}, headers=auth(world.admin))
    assert r.status_code == 200 and r.json()["status"] == "c"
    assert [p["canceled"] for p in r.json()["positions"]] == [False]
    assert [f["fee_type"] for f in r.json()["fees"]] == ["service"]
    r = await client.post(
        with_fee + "mark_canceled/", json={"cancellation_fee": "2.00"}, headers=auth(world.admin)
    )
    assert r.status_code == 200 and r.json()["positions"] == []
    assert [f["fee_type"] for f in r.json()["fees"]] == ["cancellation"]
    everything = "?include_canceled_positions=true&include_canceled_fees=true"
    full = (await client.get(with_fee + everything, headers=auth(world.admin))).json()
    assert [p["canceled"] for p in full["positions"]] == [True]
    assert [(f["fee_type"], f["canceled"]) for f in full["fees"]] == [
        ("service", True),
        ("cancellation", False),
    ]
