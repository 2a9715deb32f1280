"""Auto check-in rules (CRUD behind the plugin, applied on placed/paid orders), the
``exit_all_at`` job, and quotas released after exit."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select

from admit.checkin.exits import exit_all, next_day
from admit.models import Checkin, CheckinList, Event
from tests.checkin import helpers as h
from tests.factories import World, assert_field_errors, auth


def rules_url(world: World, rest: str = "") -> str:
    return h.event_url(world, f"auto_checkin_rules/{rest}")


async def _enable_plugin(factory, event) -> None:
    async with factory.sessionmaker() as s:
        row = await s.get(Event, event.id)
        row.plugins = ["pretix.plugins.autocheckin"]
        await s.commit()


async def test_rules_need_the_plugin(client, world: World, factory):
    response = await client.get(rules_url(world), headers=auth(world.admin))
    assert response.status_code == 403
    assert response.json() == {"detail": "The autocheckin plugin is not enabled for this event."}
    response = await client.post(rules_url(world), json={}, headers=auth(world.admin))
    assert response.status_code == 403


async def test_rules_crud(client, world: World, factory):
    await _enable_plugin(factory, world.event)
    item = await h.ticket(factory, world.event)
    var = await h.variation(factory, item)
    clist = await h.checkin_list(factory, world.event)
    foreign = await h.checkin_list(factory, world.other_event)
    body = {
        "list": clist.id,
        "mode": "paid",
        "all_sales_channels": False,
        "limit_sales_channels": ["web"],
        "all_products": False,
        "limit_products": [item.id],
        "limit_variations": [var.id],
        "all_payment_methods": False,
        "limit_payment_methods": ["manual"],
    }
    created = await client.post(rules_url(world), json=body, headers=auth(world.admin))
    assert created.status_code == 201, created.text
    assert created.json() == {"id": created.json()["id"], **body}
    url = rules_url(world, f"{created.json()['id']}/")
    patched = await client.patch(url, json={"mode": "placed"}, headers=auth(world.admin))
    assert patched.json()["mode"] == "placed" and patched.json()["limit_products"] == [item.id]
    listed = await client.get(rules_url(world), headers=auth(world.admin))
    assert listed.json()["count"] == 1
    for bad, field in (
        ({"list": foreign.id}, "list"),
        ({"mode": "later"}, "mode"),
        ({"limit_products": [999999]}, "limit_products"),
        ({"limit_sales_channels": ["moon"]}, "limit_sales_channels"),
    ):
        response = await client.post(rules_url(world), json=bad, headers=auth(world.admin))
        assert_field_errors(response, field)
    assert (await client.delete(url, headers=auth(world.admin))).status_code == 204


async def _order(client, world: World, item, **kw) -> dict:
    body = {"email": "a@example.org", "positions": [{"item": item.id}], **kw}
    response = await client.post(
        h.event_url(world, "orders/"), json=body, headers=auth(world.admin)
    )
    assert response.status_code == 201, response.text
    return response.json()


async def test_rules_apply_on_placed_and_paid(client, world: World, factory):
    await _enable_plugin(factory, world.event)
    ticket = await h.ticket(factory, world.event)
    other = await h.ticket(factory, world.event, "Other")
    await factory.quota(world.event, 100, items=[ticket, other])
    door = await h.checkin_list(factory, world.event, "Door")
    lounge = await h.checkin_list(factory, world.event, "Lounge", items=[other])
    rule = {"mode": "placed", "all_products": False, "limit_products": [ticket.id]}
    response = await client.post(rules_url(world), json=rule, headers=auth(world.admin))
    assert response.status_code == 201
    paid_rule = {"mode": "paid", "list": lounge.id}
    response = await client.post(rules_url(world), json=paid_rule, headers=auth(world.admin))
    assert response.status_code == 201

    placed = await _order(client, world, ticket, status="p", payment_provider="manual")
    (checkin,) = placed["positions"][0]["checkins"]
    assert checkin["auto_checked_in"] is True and checkin["list"] == door.id

    pending = await _order(client, world, other)
    assert pending["positions"][0]["checkins"] == []
    paid = await client.post(
        h.event_url(world, f"orders/{pending['code']}/mark_paid/"), headers=auth(world.admin)
    )
    assert paid.status_code == 200, paid.text
    (checkin,) = paid.json()["positions"][0]["checkins"]
    assert checkin["list"] == lounge.id and checkin["auto_checked_in"] is True

    # An auto check-in counts: scanning the ticket again is a second entry.
    secret = placed["positions"][0]["secret"]
    again = await h.redeem(client, world, secret, [door.id])
    assert again.json()["reason"] == "already_redeemed"


async def test_no_plugin_no_auto_checkin(client, world: World, factory):
    ticket = await h.ticket(factory, world.event)
    await factory.quota(world.event, 10, items=[ticket])
    await h.checkin_list(factory, world.event)
    async with factory.sessionmaker() as s:
        from admit.models import AutoCheckinRule

        s.add(AutoCheckinRule(event_id=world.event.id, mode="placed"))
        await s.commit()
    order = await _order(client, world, ticket)
    assert order["positions"][0]["checkins"] == []


def test_next_day_keeps_the_local_time_across_dst():
    before = dt.datetime(2030, 3, 30, 2, 0, tzinfo=dt.UTC)  # 04:00 in Berlin (CEST from 31st)
    after = next_day(before, "Europe/Berlin")
    assert after == dt.datetime(2030, 3, 31, 1, 0, tzinfo=dt.UTC)  # still 04:00 local


async def test_exit_all_job(client, world: World, factory, clean_app):
    item = await h.ticket(factory, world.event)
    moment = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=1)
    clist = await h.checkin_list(factory, world.event, exit_all_at=moment)
    _, (inside, left, late) = await h.order(factory, world.event, item, n=3)
    before = (moment - dt.timedelta(hours=2)).isoformat()
    await h.redeem(client, world, inside.secret, [clist.id], datetime=before)
    await h.redeem(client, world, left.secret, [clist.id], datetime=before)
    await h.redeem(client, world, left.secret, [clist.id], type="exit", datetime=before)
    await h.redeem(client, world, late.secret, [clist.id])  # entered after exit_all_at

    async with clean_app.state.db.sessionmaker() as session:
        assert await exit_all(session) == 1
        await session.commit()
    async with clean_app.state.db.sessionmaker() as session:
        assert await exit_all(session) == 0  # the moment moved on
        row = await session.get(CheckinList, clist.id)
        exits = list(
            await session.scalars(select(Checkin).where(Checkin.auto_checked_in.is_(True)))
        )
    assert row.exit_all_at == next_day(moment, "UTC")
    assert [(c.position_id, c.type, c.datetime) for c in exits] == [(inside.id, "exit", moment)]


async def test_quota_released_after_exit(client, world: World, factory):
    item = await h.ticket(factory, world.event)
    quota = await factory.quota(world.event, 2, items=[item], release_after_exit=True)
    plain = await factory.quota(world.event, 2, items=[item], name="Plain")
    clist = await h.checkin_list(factory, world.event)
    order = await _order(client, world, item, status="p", payment_provider="manual")
    secret = order["positions"][0]["secret"]

    async def numbers(q):
        response = await client.get(
            h.event_url(world, f"quotas/{q.id}/availability/"), headers=auth(world.admin)
        )
        return response.json()

    assert (await numbers(quota))["available_number"] == 1
    assert (await h.redeem(client, world, secret, [clist.id])).status_code == 201
    assert (await numbers(quota))["exited_orders"] == 0
    assert (await h.redeem(client, world, secret, [clist.id], type="exit")).status_code == 201
    state = await numbers(quota)
    assert state["exited_orders"] == 1 and state["available_number"] == 2
    assert (await numbers(plain))["available_number"] == 1  # no release_after_exit
    assert (await h.redeem(client, world, secret, [clist.id])).status_code == 201
    assert (await numbers(quota))["exited_orders"] == 0
