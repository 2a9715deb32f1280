"""Memberships at sale: items requiring one sell only against a valid membership of the order's
customer (``used_membership``), items granting one create it when the order is paid, once."""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

import pytest
from sqlalchemy import insert, select

from admit.models import Customer, Membership, MembershipType, item_required_membership_types
from tests.factories import auth
from tests.orders import helpers as h

START = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
END = dt.datetime(2030, 12, 31, tzinfo=dt.UTC)  # the test event is on 2030-05-01


async def _type(factory, org_id: int, **kw: Any) -> int:
    async with factory.sessionmaker() as s:
        mt = MembershipType(organizer_id=org_id, name={"en": "Season"}, **kw)
        s.add(mt)
        await s.commit()
        return mt.id


async def _customer(factory, org_id: int, ident: str) -> int:
    async with factory.sessionmaker() as s:
        known = await s.scalar(select(Customer.id).where(Customer.identifier == ident))
        if known is not None:
            return known
        c = Customer(organizer_id=org_id, identifier=ident, email=f"{ident}@example.org")
        s.add(c)
        await s.commit()
        return c.id


async def _membership(factory, org_id: int, customer_id: int, type_id: int, **kw: Any) -> int:
    kw.setdefault("date_start", START)
    kw.setdefault("date_end", END)
    async with factory.sessionmaker() as s:
        m = Membership(
            organizer_id=org_id, customer_id=customer_id, membership_type_id=type_id, **kw
        )
        s.add(m)
        await s.commit()
        return m.id


async def _members_item(factory, world, type_ids: list[int]):
    item = await h.item(factory, world.event, "0.00", require_membership=True)
    async with factory.sessionmaker() as s:
        await s.execute(
            insert(item_required_membership_types),
            [{"item_id": item.id, "membership_type_id": t} for t in type_ids],
        )
        await s.commit()
    return item


async def _setup(factory, world, **type_kw: Any):
    mtype = await _type(factory, world.org.id, **type_kw)
    item = await _members_item(factory, world, [mtype])
    cust = await _customer(factory, world.org.id, "ADA1234")
    membership = await _membership(factory, world.org.id, cust, mtype)
    return item, mtype, cust, membership


def _order(item_id: int, membership: int | None, customer: str | None = "ADA1234", **kw):
    position: dict[str, Any] = {"item": item_id}
    if membership is not None:
        position["used_membership"] = membership
    body: dict[str, Any] = {"email": "a@example.org", "positions": [position], **kw}
    if customer:
        body["customer"] = customer
    return body


def _error(response) -> str:
    assert response.status_code == 400, response.text
    return response.json()["positions"][0]["used_membership"][0]


async def test_valid_membership_sells_and_is_recorded(client, world, factory):
    item, _, _, membership = await _setup(factory, world)
    r = await client.post(h.url(world), json=_order(item.id, membership), headers=auth(world.admin))
    assert r.status_code == 201, r.text
    async with factory.sessionmaker() as s:
        from admit.models import OrderPosition

        used = await s.scalar(select(OrderPosition.used_membership_id))
    assert used == membership


async def test_missing_foreign_and_invalid_memberships_are_400(client, world, factory):
    item, mtype, cust, membership = await _setup(factory, world)
    post = lambda body: client.post(h.url(world), json=body, headers=auth(world.admin))  # noqa: E731
    assert "requires an active membership" in _error(await post(_order(item.id, None)))
    # No customer on the order, or another customer's membership.
    assert "different customer" in _error(await post(_order(item.id, membership, customer=None)))
    other = await _customer(factory, world.org.id, "BOB5678")
    theirs = await _membership(factory, world.org.id, other, mtype)
    assert "different customer" in _error(await post(_order(item.id, theirs)))
    # Expired for the event's date, canceled, test mode, wrong type, unknown id.
    old = await _membership(
        factory,
        world.org.id,
        cust,
        mtype,
        date_end=dt.datetime(2029, 1, 1, tzinfo=dt.UTC),
        date_start=dt.datetime(2028, 1, 1, tzinfo=dt.UTC),
    )
    assert "valid from" in _error(await post(_order(item.id, old)))
    canceled = await _membership(factory, world.org.id, cust, mtype, canceled=True)
    assert "canceled" in _error(await post(_order(item.id, canceled)))
    test = await _membership(factory, world.org.id, cust, mtype, testmode=True)
    assert "test mode" in _error(await post(_order(item.id, test)))
    other_type = await _type(factory, world.org.id)
    wrong = await _membership(factory, world.org.id, cust, other_type)
    assert "not allowed" in _error(await post(_order(item.id, wrong)))
    assert "does not exist" in _error(await post(_order(item.id, 99999)))
    assert "does not exist" in _error(await post(_order(item.id, 2**40)))
    # A membership for a product that needs none.
    plain = await h.item(factory, world.event, "0.00")
    assert "does not require" in _error(await post(_order(plain.id, membership)))
    bad = await post(_order(item.id, "abc"))
    assert bad.status_code == 400
    r = await client.get(h.url(world), headers=auth(world.admin))
    assert r.json()["count"] == 0


async def test_max_usages_and_parallel_usage(client, world, factory):
    item, _, _, membership = await _setup(factory, world, max_usages=2, allow_parallel_usage=True)
    for _ in range(2):
        r = await client.post(
            h.url(world), json=_order(item.id, membership), headers=auth(world.admin)
        )
        assert r.status_code == 201, r.text
    r = await client.post(h.url(world), json=_order(item.id, membership), headers=auth(world.admin))
    assert "maximum" in _error(r)
    # Without parallel usage, one membership covers one ticket per event time.
    item2, _, _, single = await _setup(factory, world)
    both = _order(item2.id, single)
    both["positions"].append(dict(both["positions"][0]))
    r = await client.post(h.url(world), json=both, headers=auth(world.admin))
    assert r.status_code == 400
    assert "same time" in r.json()["positions"][1]["used_membership"][0]
    r = await client.post(h.url(world), json=_order(item2.id, single), headers=auth(world.admin))
    assert r.status_code == 201
    r = await client.post(h.url(world), json=_order(item2.id, single), headers=auth(world.admin))
    assert "same time" in _error(r)
    # A canceled order gives its use back.
    code = (await client.get(h.url(world), headers=auth(world.admin))).json()["results"][-1]["code"]
    canceled = await client.post(
        f"{h.url(world)}{code}/mark_canceled/", json={}, headers=auth(world.admin)
    )
    assert canceled.status_code == 200, canceled.text
    r = await client.post(h.url(world), json=_order(item2.id, single), headers=auth(world.admin))
    assert r.status_code == 201, r.text


async def test_last_use_raced_sells_once(client, world, factory, database_url):
    if not database_url.startswith("postgresql"):
        pytest.skip("concurrent writers only overlap on PostgreSQL (SQLite serialises them)")
    item, _, _, membership = await _setup(factory, world, max_usages=1, allow_parallel_usage=True)

    async def buy() -> int:
        r = await client.post(
            h.url(world), json=_order(item.id, membership), headers=auth(world.admin)
        )
        return r.status_code

    statuses = await asyncio.gather(*(buy() for _ in range(12)))
    assert statuses.count(201) == 1, statuses
    assert set(statuses) == {201, 400}


# -- granting ---------------------------------------------------------------------------------


async def _granting_item(factory, world, mtype: int, price: str = "10.00", **kw: Any):
    return await h.item(factory, world.event, price, grant_membership_type_id=mtype, **kw)


async def _granted(factory) -> list[Membership]:
    async with factory.sessionmaker() as s:
        return list((await s.scalars(select(Membership).order_by(Membership.id))).all())


async def test_paid_order_grants_once_like_the_event(client, world, factory):
    mtype = await _type(factory, world.org.id)
    await _customer(factory, world.org.id, "ADA1234")
    item = await _granting_item(factory, world, mtype)
    body = _order(item.id, None)
    body["positions"][0]["attendee_name_parts"] = {"given_name": "Ada"}
    r = await client.post(h.url(world), json=body, headers=auth(world.admin))
    assert r.status_code == 201, r.text
    code = r.json()["code"]
    assert await _granted(factory) == []  # pending: nothing yet
    paid = await client.post(f"{h.url(world)}{code}/mark_paid/", json={}, headers=auth(world.admin))
    assert paid.status_code == 200, paid.text
    [m] = await _granted(factory)
    assert m.membership_type_id == mtype
    assert m.date_start == dt.datetime(2030, 5, 1, 10, tzinfo=dt.UTC)  # the event's start
    assert m.date_end == dt.datetime(2030, 5, 1, 23, 59, 59, 999999, tzinfo=dt.UTC)
    assert m.attendee_name_parts == {"given_name": "Ada"}
    assert m.testmode is False
    # Pending again, paid again: still one.
    for action in ("mark_pending", "mark_paid"):
        r = await client.post(f"{h.url(world)}{code}/{action}/", json={}, headers=auth(world.admin))
        assert r.status_code == 200, r.text
    assert len(await _granted(factory)) == 1
    # Canceling the order cancels what it granted.
    r = await client.post(
        f"{h.url(world)}{code}/mark_canceled/", json={}, headers=auth(world.admin)
    )
    assert r.status_code == 200
    [m] = await _granted(factory)
    assert m.canceled is True


async def test_granted_by_duration_and_only_with_a_customer(client, world, factory):
    mtype = await _type(factory, world.org.id)
    await _customer(factory, world.org.id, "ADA1234")
    item = await _granting_item(
        factory,
        world,
        mtype,
        "0.00",
        grant_membership_duration_like_event=False,
        grant_membership_duration_months=1,
        grant_membership_duration_days=0,
    )
    anonymous = await client.post(
        h.url(world), json=_order(item.id, None, customer=None), headers=auth(world.admin)
    )
    assert anonymous.status_code == 201 and anonymous.json()["status"] == "p"
    assert await _granted(factory) == []
    free = await client.post(h.url(world), json=_order(item.id, None), headers=auth(world.admin))
    assert free.status_code == 201 and free.json()["status"] == "p"
    [m] = await _granted(factory)
    today = dt.datetime.now(dt.UTC).date()
    assert m.date_start == dt.datetime.combine(today, dt.time(0), tzinfo=dt.UTC)
    assert m.date_end.time() == dt.time(23, 59, 59, 999999)
    assert 27 <= (m.date_end.date() - today).days <= 30  # the day before, a month on


async def test_granted_membership_can_buy_a_members_item(client, world, factory):
    mtype = await _type(factory, world.org.id)
    await _customer(factory, world.org.id, "ADA1234")
    granting = await _granting_item(factory, world, mtype, "0.00")
    r = await client.post(h.url(world), json=_order(granting.id, None), headers=auth(world.admin))
    assert r.status_code == 201
    [m] = await _granted(factory)
    members = await _members_item(factory, world, [mtype])
    r = await client.post(h.url(world), json=_order(members.id, m.id), headers=auth(world.admin))
    assert r.status_code == 201, r.text
