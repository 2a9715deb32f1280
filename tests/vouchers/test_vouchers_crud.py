"""Voucher CRUD: round trip, generated codes, validation rules, PATCH/PUT, delete, filters."""

from __future__ import annotations

import re

from sqlalchemy import func, select

from admit.models import CartPosition, Voucher
from admit.vouchers.codes import ALPHABET
from tests.factories import World, assert_field_errors, auth
from tests.vouchers import helpers as h


async def test_round_trip(client, world: World, factory):
    ticket = await h.item(factory, world.event)
    body = {
        "code": "Summer-2030",
        "max_usages": 5,
        "min_usages": 2,
        "valid_until": "2031-01-01T10:00:00+00:00",
        "block_quota": False,
        "allow_ignore_quota": True,
        "price_mode": "percent",
        "value": "12.50",
        "item": ticket.id,
        "variation": None,
        "quota": None,
        "seat": None,
        "tag": "press",
        "comment": "for the press",
        "subevent": None,
        "show_hidden_items": False,
        "all_addons_included": True,
        "all_bundles_included": True,
        "budget": "100.00",
    }
    created = await client.post(h.VOUCHERS, json=body, headers=auth(world.admin))
    assert created.status_code == 201, created.text
    data = created.json()
    assert data["created"] and data["redeemed"] == 0 and data["budget_used"] == "0.00"
    expected = {**body, "valid_until": "2031-01-01T10:00:00Z"}
    assert {k: data[k] for k in body} == expected
    detail = await client.get(f"{h.VOUCHERS}{data['id']}/", headers=auth(world.admin))
    assert detail.status_code == 200 and detail.json() == data
    listed = await client.get(h.VOUCHERS, headers=auth(world.admin))
    assert listed.json()["results"] == [data]


async def test_defaults_and_generated_code(client, world: World):
    r = await client.post(h.VOUCHERS, json={}, headers=auth(world.admin))
    assert r.status_code == 201, r.text
    data = r.json()
    assert re.fullmatch(f"[{ALPHABET}]{{16}}", data["code"])
    assert data["max_usages"] == 1 and data["min_usages"] == 1 and data["price_mode"] == "none"
    assert data["value"] == "0.00" and data["show_hidden_items"] is True
    assert data["budget"] is None and data["item"] is None and data["tag"] == ""
    other = await client.post(h.VOUCHERS, json={"code": None}, headers=auth(world.admin))
    assert other.json()["code"] != data["code"]


async def test_code_unique_per_event_ignoring_case(client, world: World, factory):
    await h.voucher(factory, world.event, "ABCDEF")
    r = await client.post(h.VOUCHERS, json={"code": "abcdef"}, headers=auth(world.admin))
    assert assert_field_errors(r, "code")["code"] == ["A voucher with this code already exists."]
    # Another event may use it.
    other = await factory.event(world.org, "other")
    url = f"/api/v1/organizers/acme/events/{other.slug}/vouchers/"
    r = await client.post(url, json={"code": "abcdef"}, headers=auth(world.admin))
    assert r.status_code == 201, r.text


async def test_field_rules(client, world: World, factory):
    ticket = await h.item(factory, world.event)
    shirt = await h.item(factory, world.event, "Shirt")
    red = await h.variation(factory, shirt)
    q = await h.quota(factory, world.event, 10, [ticket])
    post = lambda body: client.post(h.VOUCHERS, json=body, headers=auth(world.admin))  # noqa: E731
    assert_field_errors(await post({"code": "abc"}), "code")
    assert_field_errors(await post({"code": "has space"}), "code")
    assert_field_errors(await post({"price_mode": "half"}), "price_mode")
    assert_field_errors(await post({"value": "-1"}), "value")
    assert_field_errors(await post({"price_mode": "percent", "value": "101"}), "value")
    assert_field_errors(await post({"max_usages": 0}), "max_usages")
    assert_field_errors(await post({"max_usages": True}), "max_usages")
    assert_field_errors(await post({"min_usages": 3, "max_usages": 2}), "non_field_errors")
    assert_field_errors(await post({"item": 999999}), "item")
    assert_field_errors(await post({"variation": red.id}), "variation")
    assert_field_errors(await post({"item": ticket.id, "variation": red.id}), "variation")
    assert_field_errors(await post({"quota": q.id, "item": ticket.id}), "non_field_errors")
    assert_field_errors(await post({"subevent": 1}), "subevent")
    assert_field_errors(await post({"budget": "-5"}), "budget")
    r = await post({"price_mode": "set", "value": None})
    assert r.status_code == 201 and r.json()["value"] == "0.00"


async def test_other_events_objects_are_unknown(client, world: World, factory):
    foreign = await h.item(factory, world.other_event)
    r = await client.post(h.VOUCHERS, json={"item": foreign.id}, headers=auth(world.admin))
    assert assert_field_errors(r, "item")["item"] == [
        f'Invalid pk "{foreign.id}" - object does not exist.'
    ]


async def test_patch_and_put(client, world: World, factory):
    ticket = await h.item(factory, world.event)
    v = await h.voucher(factory, world.event, "KEEPME", item_id=ticket.id, tag="a", max_usages=3)
    url = f"{h.VOUCHERS}{v.id}/"
    r = await client.patch(url, json={"tag": "b", "redeemed": 7}, headers=auth(world.admin))
    assert r.status_code == 200, r.text
    assert r.json()["tag"] == "b" and r.json()["item"] == ticket.id and r.json()["redeemed"] == 0
    assert r.json()["max_usages"] == 3 and r.json()["code"] == "KEEPME"
    r = await client.patch(url, json={"min_usages": 4}, headers=auth(world.admin))
    assert_field_errors(r, "non_field_errors")
    r = await client.put(url, json={"comment": "x"}, headers=auth(world.admin))
    assert r.status_code == 200, r.text
    data = r.json()
    # PUT keeps omitted fields (no voucher field is required).
    assert data["item"] == ticket.id and data["tag"] == "b" and data["max_usages"] == 3
    assert data["code"] == "KEEPME" and data["comment"] == "x"


async def test_max_usages_not_below_redeemed(client, world: World, factory):
    v = await h.voucher(factory, world.event, "USED12", max_usages=5, redeemed=3)
    r = await client.patch(
        f"{h.VOUCHERS}{v.id}/", json={"max_usages": 2}, headers=auth(world.admin)
    )
    assert "redeemed 3 times" in assert_field_errors(r, "max_usages")["max_usages"][0]
    r = await client.patch(
        f"{h.VOUCHERS}{v.id}/", json={"max_usages": 3}, headers=auth(world.admin)
    )
    assert r.status_code == 200


async def test_delete(client, world: World, factory):
    unused = await h.voucher(factory, world.event, "UNUSED")
    used = await h.voucher(factory, world.event, "USEDUP", redeemed=1)
    r = await client.delete(f"{h.VOUCHERS}{used.id}/", headers=auth(world.admin))
    assert r.status_code == 403
    assert r.json() == {"detail": "This voucher can not be deleted as it has already been used."}
    r = await client.delete(f"{h.VOUCHERS}{unused.id}/", headers=auth(world.admin))
    assert r.status_code == 204
    r = await client.get(f"{h.VOUCHERS}{unused.id}/", headers=auth(world.admin))
    assert r.status_code == 404


async def test_delete_takes_carts_holding_the_voucher_along(client, world: World, factory):
    ticket = await h.item(factory, world.event)
    await h.quota(factory, world.event, 10, [ticket])
    v = await h.voucher(factory, world.event, "CARTED", max_usages=2)
    r = await client.post(
        h.CARTS,
        json={"item": ticket.id, "price": "1.00", "voucher": "carted"},
        headers=auth(world.admin),
    )
    assert r.status_code == 201, r.text
    assert (
        await client.delete(f"{h.VOUCHERS}{v.id}/", headers=auth(world.admin))
    ).status_code == 204
    async with factory.sessionmaker() as session:
        assert await session.scalar(select(func.count()).select_from(CartPosition)) == 0


async def test_filters_and_ordering(client, world: World, factory):
    ticket = await h.item(factory, world.event)
    a = await h.voucher(factory, world.event, "AAAAA1", tag="x", max_usages=3, item_id=ticket.id)
    b = await h.voucher(factory, world.event, "BBBBB2", tag="y", price_mode="set", value=5)
    c = await h.voucher(factory, world.event, "CCCCC3", tag="x", block_quota=False, redeemed=1)

    async def ids(query: str) -> list[int]:
        r = await client.get(f"{h.VOUCHERS}?{query}", headers=auth(world.admin))
        assert r.status_code == 200, r.text
        return [v["id"] for v in r.json()["results"]]

    assert await ids("tag=x") == [a.id, c.id]
    assert await ids("code=BBBBB2") == [b.id]
    assert await ids("max_usages=3") == [a.id]
    assert await ids("redeemed=1") == [c.id]
    assert await ids(f"item={ticket.id}") == [a.id]
    assert await ids("price_mode=set") == [b.id]
    assert await ids("value=5.00") == [b.id]
    assert await ids("block_quota=false") == [a.id, b.id, c.id]
    assert await ids("ordering=-code") == [c.id, b.id, a.id]
    # An unknown ordering name is ignored, as the reference ignores it.
    assert await ids("ordering=redeemed") == await ids("")
    r = await client.get(f"{h.VOUCHERS}?max_usages=x", headers=auth(world.admin))
    assert_field_errors(r, "max_usages")


async def test_read_and_write_permissions(client, world: World, factory):
    reader = await factory.token(
        await factory.team(world.org, event_permissions=["event.vouchers:read"])
    )
    assert (await client.get(h.VOUCHERS, headers=auth(reader))).status_code == 200
    r = await client.post(h.VOUCHERS, json={}, headers=auth(reader))
    assert r.status_code == 403


async def test_list_queries_do_not_grow(client, world: World, factory, count_queries):
    for n in range(3):
        await h.voucher(factory, world.event, f"FEW{n:04d}")
    await client.get(h.VOUCHERS, headers=auth(world.admin))  # warm the credential cache
    with count_queries() as few:
        await client.get(h.VOUCHERS, headers=auth(world.admin))
    for n in range(30):
        await h.voucher(factory, world.event, f"MANY{n:04d}")
    with count_queries() as many:
        await client.get(h.VOUCHERS, headers=auth(world.admin))
    assert many.count == few.count


async def test_stored_code_keeps_its_case(client, world: World, factory):
    await client.post(h.VOUCHERS, json={"code": "MiXeD-1"}, headers=auth(world.admin))
    async with factory.sessionmaker() as session:
        assert await session.scalar(select(Voucher.code)) == "MiXeD-1"


async def test_bad_filter_values_are_400(client, world: World):
    for query in ("value=1e1000000", "value=abc", "item=99999999999", "block_quota=maybe"):
        r = await client.get(f"{h.VOUCHERS}?{query}", headers=auth(world.admin))
        assert r.status_code == 400, (query, r.text)
