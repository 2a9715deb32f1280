"""Redeem: every reason in its documented order, HTTP statuses, stored failed scans, nonces."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import func, select

from admit.models import Checkin, Notification
from tests.checkin import helpers as h
from tests.factories import World, assert_field_errors, auth


async def _checkins(factory) -> list[Checkin]:
    async with factory.sessionmaker() as s:
        return list(await s.scalars(select(Checkin).order_by(Checkin.id)))


async def test_first_entry_is_ok_then_already_redeemed(client, world: World, factory):
    item = await h.ticket(factory, world.event)
    clist = await h.checkin_list(factory, world.event)
    order, (pos,) = await h.order(factory, world.event, item)

    ok = await h.redeem(client, world, pos.secret, [clist.id])
    assert ok.status_code == 201, ok.text
    body = ok.json()
    assert body["status"] == "ok"
    assert "reason" not in body
    assert body["list"] == {
        "id": clist.id,
        "name": "Entrance",
        "event": world.event.slug,
        "subevent": None,
        "include_pending": False,
    }
    position = body["position"]
    assert position["id"] == pos.id and position["order"] == order.code
    assert position["order__status"] == "p" and position["require_attention"] is False
    assert [c["list"] for c in position["checkins"]] == [clist.id]
    assert position["checkins"][0]["type"] == "entry"
    assert body["require_attention"] is False and body["checkin_texts"] == []

    again = await h.redeem(client, world, pos.secret, [clist.id])
    assert again.status_code == 200
    assert again.json()["status"] == "error"
    assert again.json()["reason"] == "already_redeemed"
    assert len(again.json()["position"]["checkins"]) == 1

    rows = await _checkins(factory)
    assert [(c.successful, c.error_reason, c.position_id) for c in rows] == [
        (True, None, pos.id),
        (False, "already_redeemed", pos.id),
    ]
    # The check-ins table is the outbox of service.event.checkin: no extra row is written.
    async with factory.sessionmaker() as s:
        assert list(await s.scalars(select(Notification))) == []


async def test_unknown_secret_is_404_and_stored(client, world: World, factory):
    clist = await h.checkin_list(factory, world.event)
    response = await h.redeem(client, world, "nope", [clist.id], nonce="n1")
    assert response.status_code == 404
    body = response.json()
    assert body["detail"] == "Not found."
    assert body["status"] == "error" and body["reason"] == "invalid"
    assert body["reason_explanation"] is None
    assert body["require_attention"] is False and body["checkin_texts"] == []
    assert body["position"] is None
    (row,) = await _checkins(factory)
    assert row.position_id is None and row.error_reason == "invalid" and not row.successful
    assert row.raw_barcode == "nope" and row.list_id == clist.id


async def test_exit_then_entry_after_exit(client, world: World, factory):
    item = await h.ticket(factory, world.event)
    strict = await h.checkin_list(factory, world.event, "Strict", allow_entry_after_exit=False)
    loose = await h.checkin_list(factory, world.event, "Loose")
    other = await h.order(factory, world.event, item)
    _, (pos,) = other
    for clist, second in ((strict, "already_redeemed"), (loose, None)):
        assert (await h.redeem(client, world, pos.secret, [clist.id])).status_code == 201
        out = await h.redeem(client, world, pos.secret, [clist.id], type="exit")
        assert out.status_code == 201, out.text
        again = await h.redeem(client, world, pos.secret, [clist.id])
        assert again.json().get("reason") == second, again.text


async def test_multiple_entries(client, world: World, factory):
    item = await h.ticket(factory, world.event)
    clist = await h.checkin_list(factory, world.event, allow_multiple_entries=True)
    _, (pos,) = await h.order(factory, world.event, item)
    for _ in range(3):
        assert (await h.redeem(client, world, pos.secret, [clist.id])).status_code == 201
    assert len(await _checkins(factory)) == 3


async def test_nonce_replays_the_result_and_stores_once(client, world: World, factory):
    item = await h.ticket(factory, world.event)
    clist = await h.checkin_list(factory, world.event)
    _, (pos,) = await h.order(factory, world.event, item)
    first = await h.redeem(client, world, pos.secret, [clist.id], nonce="abc")
    second = await h.redeem(client, world, pos.secret, [clist.id], nonce="abc")
    assert first.status_code == second.status_code == 201
    assert first.json()["position"]["checkins"] == second.json()["position"]["checkins"]
    assert len(await _checkins(factory)) == 1
    # A failed scan repeated with its nonce is stored once as well.
    third = await h.redeem(client, world, pos.secret, [clist.id], nonce="xyz")
    fourth = await h.redeem(client, world, pos.secret, [clist.id], nonce="xyz")
    assert third.json()["reason"] == fourth.json()["reason"] == "already_redeemed"
    assert len(await _checkins(factory)) == 2


async def test_reasons_in_order(client, world: World, factory):
    item = await h.ticket(factory, world.event)
    other_item = await h.ticket(factory, world.event, "Shirt")
    clist = await h.checkin_list(factory, world.event, items=[item])
    future = dt.datetime(2099, 1, 1, tzinfo=dt.UTC)
    cases = [
        ("canceled", dict(status="c")),
        ("canceled", dict(status="e")),
        ("canceled", dict(position={"canceled": True})),
        ("blocked", dict(position={"blocked": ["admin"]})),
        ("unapproved", dict(status="n", require_approval=True)),
        ("invalid_time", dict(position={"valid_from": future})),
        ("invalid_time", dict(position={"valid_until": dt.datetime(2000, 1, 1, tzinfo=dt.UTC)})),
        ("unpaid", dict(status="n")),
        # canceled wins over blocked, blocked over unpaid
        ("canceled", dict(status="c", position={"blocked": ["x"]})),
        ("blocked", dict(status="n", position={"blocked": ["x"]})),
    ]
    for reason, kw in cases:
        _, (pos,) = await h.order(factory, world.event, item, **kw)
        response = await h.redeem(client, world, pos.secret, [clist.id])
        assert response.status_code == 200, (reason, response.text)
        assert response.json()["reason"] == reason, (kw, response.json())
        if reason == "invalid_time":
            assert response.json()["reason_explanation"].startswith("Ticket not valid")
    _, (pos,) = await h.order(factory, world.event, other_item)
    response = await h.redeem(client, world, pos.secret, [clist.id])
    assert response.json()["reason"] == "product"
    rows = await _checkins(factory)
    assert len(rows) == len(cases) + 1 and not any(r.successful for r in rows)


async def test_pending_orders(client, world: World, factory):
    item = await h.ticket(factory, world.event)
    plain = await h.checkin_list(factory, world.event, "Plain")
    pending = await h.checkin_list(factory, world.event, "Pending ok", include_pending=True)
    _, (pos,) = await h.order(factory, world.event, item, status="n")
    assert (await h.redeem(client, world, pos.secret, [plain.id])).json()["reason"] == "unpaid"
    # ignore_unpaid only works on a list that includes pending orders
    r = await h.redeem(client, world, pos.secret, [plain.id], ignore_unpaid=True)
    assert r.json()["reason"] == "unpaid"
    assert (await h.redeem(client, world, pos.secret, [pending.id])).json()["reason"] == "unpaid"
    r = await h.redeem(client, world, pos.secret, [pending.id], ignore_unpaid=True)
    assert r.status_code == 201
    _, (trusted,) = await h.order(factory, world.event, item, status="n", valid_if_pending=True)
    assert (await h.redeem(client, world, trusted.secret, [plain.id])).status_code == 201


async def test_force_admits_what_already_happened(client, world: World, factory):
    item = await h.ticket(factory, world.event)
    clist = await h.checkin_list(factory, world.event)
    _, (pos,) = await h.order(factory, world.event, item)
    assert (await h.redeem(client, world, pos.secret, [clist.id])).status_code == 201
    forced = await h.redeem(client, world, pos.secret, [clist.id], force=True)
    assert forced.status_code == 201
    rows = await _checkins(factory)
    assert [r.forced for r in rows] == [False, True]


async def test_subevent_list_rejects_other_dates(client, world: World, factory):
    from tests.quotas.helpers import subevent

    async with factory.sessionmaker() as s:
        event = await s.get(type(world.event), world.event.id)
        event.has_subevents = True
        await s.commit()
    one = await subevent(factory, world.event, "One")
    two = await subevent(factory, world.event, "Two")
    item = await h.ticket(factory, world.event)
    clist = await h.checkin_list(factory, world.event, subevent_id=one.id)
    _, (pos,) = await h.order(factory, world.event, item, position={"subevent_id": two.id})
    r = await h.redeem(client, world, pos.secret, [clist.id])
    assert r.json()["reason"] == "product"
    _, (pos,) = await h.order(factory, world.event, item, position={"subevent_id": one.id})
    assert (await h.redeem(client, world, pos.secret, [clist.id])).status_code == 201


async def test_lists_are_validated(client, world: World, factory):
    clist = await h.checkin_list(factory, world.event)
    second = await h.checkin_list(factory, world.event, "Second")
    foreign = await h.checkin_list(factory, world.other_event)
    for lists in ([], [clist.id, second.id], [foreign.id], [999999], [2**40], ["x"], [True]):
        response = await h.redeem(client, world, "s", lists)
        assert_field_errors(response, "lists")
    response = await client.post(
        h.rpc_url(world, "redeem"), json={"lists": [clist.id]}, headers=auth(world.admin)
    )
    assert_field_errors(response, "secret")
    for body in (
        {"secret": "s", "lists": [clist.id], "type": "in"},
        {"secret": "s", "lists": [clist.id], "datetime": "x"},
    ):
        response = await client.post(
            h.rpc_url(world, "redeem"), json=body, headers=auth(world.admin)
        )
        assert response.status_code == 400
    async with factory.sessionmaker() as s:
        assert await s.scalar(select(func.count()).select_from(Checkin)) == 0


async def test_two_events_one_scan_each(client, world: World, factory):
    second = await factory.event(world.org, "second")
    item_a = await h.ticket(factory, world.event)
    item_b = await h.ticket(factory, second)
    list_a = await h.checkin_list(factory, world.event)
    list_b = await h.checkin_list(factory, second)
    _, (pos,) = await h.order(factory, second, item_b)
    response = await h.redeem(client, world, pos.secret, [list_a.id, list_b.id])
    assert response.status_code == 201
    assert response.json()["list"]["id"] == list_b.id
    assert response.json()["list"]["event"] == "second"
    del item_a


async def test_checkin_texts_and_attention(client, world: World, factory):
    item = await h.ticket(factory, world.event, checkin_attention=True, checkin_text="VIP area")
    clist = await h.checkin_list(factory, world.event)
    _, (pos,) = await h.order(factory, world.event, item, checkin_text="Says hi")
    body = (await h.redeem(client, world, pos.secret, [clist.id])).json()
    assert body["require_attention"] is True
    assert body["position"]["require_attention"] is True
    assert body["checkin_texts"] == ["Says hi", "VIP area"]
