"""Waiting list entries: CRUD rules, filters, send_voucher, the quota count, the settings
and the automatic assignment."""

from __future__ import annotations

from sqlalchemy import func, select

from admit.db import utcnow
from admit.models import OutgoingMail, Voucher, WaitingListEntry
from admit.models.checkin import Notification
from admit.waitinglist.auto import assign_all
from tests.factories import World, assert_field_errors, auth
from tests.vouchers import helpers as h


async def _sold_out(factory, world: World, name: str = "Ticket", size: int = 0, **kw):
    ticket = await h.item(factory, world.event, name, **kw)
    q = await h.quota(factory, world.event, size, [ticket])
    return ticket, q


async def _entry(client, world: World, item_id: int, email: str = "wait@example.org", **kw):
    body = {"email": email, "item": item_id, **kw}
    return await client.post(h.ENTRIES, json=body, headers=auth(world.admin))


async def test_create_round_trip(client, world: World, factory):
    ticket, _ = await _sold_out(factory, world)
    r = await _entry(
        client, world, ticket.id, name="Ada Lovelace", phone="+49 30 1234", locale="de"
    )
    assert r.status_code == 201, r.text
    data = r.json()
    assert data["created"] and data["voucher"] is None and data["variation"] is None
    assert data["name"] == "Ada Lovelace" and data["name_parts"] == {"_legacy": "Ada Lovelace"}
    assert data["phone"] == "+49 30 1234" and data["locale"] == "de"
    detail = await client.get(f"{h.ENTRIES}{data['id']}/", headers=auth(world.admin))
    assert detail.json() == data


async def test_create_rules(client, world: World, factory):
    ticket, _ = await _sold_out(factory, world)
    open_, _ = await _sold_out(factory, world, "Open", size=10)
    closed, _ = await _sold_out(factory, world, "NoList", allow_waitinglist=False)
    shirt, _ = await _sold_out(factory, world, "Shirt")
    await h.variation(factory, shirt)
    r = await _entry(client, world, open_.id)
    assert assert_field_errors(r, "non_field_errors")["non_field_errors"] == [
        "This product is currently available."
    ]
    r = await _entry(client, world, closed.id)
    assert r.status_code == 403 and "detail" in r.json()
    assert_field_errors(await _entry(client, world, shirt.id), "variation")
    assert_field_errors(await _entry(client, world, 999999), "item")
    assert_field_errors(await _entry(client, world, ticket.id, email="nope"), "email")
    assert_field_errors(await _entry(client, world, ticket.id, subevent=1), "subevent")
    assert (await _entry(client, world, ticket.id)).status_code == 201
    r = await _entry(client, world, ticket.id, email="WAIT@example.org")
    assert (
        "already on this waiting list"
        in assert_field_errors(r, "non_field_errors")["non_field_errors"][0]
    )


async def test_product_with_people_waiting_counts_as_unavailable(client, world: World, factory):
    ticket, q = await _sold_out(factory, world, size=1)
    async with factory.sessionmaker() as session:
        session.add(WaitingListEntry(event_id=world.event.id, item_id=ticket.id, email="a@b.cd"))
        await session.commit()
    # One ticket free, one person already waiting: the next one may queue up.
    assert (await _entry(client, world, ticket.id, email="second@example.org")).status_code == 201
    state = (await client.get(f"{h.QUOTAS}{q.id}/availability/", headers=auth(world.admin))).json()
    assert state["waiting_list"] == 2 and state["available_number"] == 1


async def test_filters_and_ordering(client, world: World, factory):
    ticket, _ = await _sold_out(factory, world)
    other, _ = await _sold_out(factory, world, "Other")
    a = (await _entry(client, world, ticket.id, "b@example.org", locale="de")).json()
    b = (await _entry(client, world, other.id, "a@example.org")).json()

    async def ids(query: str) -> list[int]:
        r = await client.get(f"{h.ENTRIES}?{query}", headers=auth(world.admin))
        assert r.status_code == 200, r.text
        return [e["id"] for e in r.json()["results"]]

    assert await ids("") == [a["id"], b["id"]]
    assert await ids("ordering=email") == [b["id"], a["id"]]
    assert await ids("email=B@example.org") == [a["id"]]
    assert await ids("locale=de") == [a["id"]]
    assert await ids(f"item={other.id}") == [b["id"]]
    assert await ids("has_voucher=true") == []
    assert await ids("has_voucher=false") == [a["id"], b["id"]]
    r = await client.get(f"{h.ENTRIES}?has_voucher=maybe", headers=auth(world.admin))
    assert_field_errors(r, "has_voucher")


async def test_send_voucher(client, world: World, factory):
    ticket, q = await _sold_out(factory, world)
    entry = (await _entry(client, world, ticket.id, name="Ada")).json()
    send = f"{h.ENTRIES}{entry['id']}/send_voucher/"
    r = await client.post(send, headers=auth(world.admin))
    assert r.status_code == 400
    assert r.json() == {"non_field_errors": ["This product is currently not available."]}
    await client.patch(f"{h.QUOTAS}{q.id}/", json={"size": 1}, headers=auth(world.admin))
    r = await client.post(send, headers=auth(world.admin))
    assert r.status_code == 204, r.text
    entry = (await client.get(f"{h.ENTRIES}{entry['id']}/", headers=auth(world.admin))).json()
    assert entry["voucher"] is not None
    voucher = (
        await client.get(f"{h.VOUCHERS}{entry['voucher']}/", headers=auth(world.admin))
    ).json()
    assert voucher["max_usages"] == 1 and voucher["block_quota"] is True
    assert voucher["item"] == ticket.id and voucher["tag"] == "waiting-list"
    assert voucher["valid_until"] is not None
    state = (await client.get(f"{h.QUOTAS}{q.id}/availability/", headers=auth(world.admin))).json()
    assert state["blocking_vouchers"] == 1 and state["available_number"] == 0
    assert state["waiting_list"] == 0
    async with factory.sessionmaker() as session:
        mail = (await session.scalars(select(OutgoingMail))).one()
        assert mail.to == ["wait@example.org"] and voucher["code"] in mail.body
        assigned = "service.event.orders.waitinglist.voucher_assigned"
        note = (
            await session.scalars(select(Notification).where(Notification.action == assigned))
        ).one()
        assert note.payload == {"waitinglistentry": entry["id"], "voucher": voucher["id"]}
    r = await client.post(send, headers=auth(world.admin))
    assert r.json() == {"non_field_errors": ["A voucher has already been sent to this person."]}
    # The person redeems it although the quota is otherwise sold out.
    r = await client.post(
        h.ORDERS, json=h.order_body(ticket.id, voucher=voucher["code"]), headers=auth(world.admin)
    )
    assert r.status_code == 201, r.text


async def test_entry_with_voucher_is_frozen(client, world: World, factory):
    ticket, q = await _sold_out(factory, world)
    entry = (await _entry(client, world, ticket.id)).json()
    url = f"{h.ENTRIES}{entry['id']}/"
    r = await client.patch(url, json={"locale": "fr"}, headers=auth(world.admin))
    assert r.status_code == 200 and r.json()["locale"] == "fr"
    await client.patch(f"{h.QUOTAS}{q.id}/", json={"size": 1}, headers=auth(world.admin))
    assert (await client.post(f"{url}send_voucher/", headers=auth(world.admin))).status_code == 204
    r = await client.patch(url, json={"locale": "en"}, headers=auth(world.admin))
    assert r.status_code == 403 and "detail" in r.json()
    r = await client.put(
        url, json={"email": "x@example.org", "item": ticket.id}, headers=auth(world.admin)
    )
    assert r.status_code == 403
    assert (await client.delete(url, headers=auth(world.admin))).status_code == 403
    other = (await _entry(client, world, ticket.id, "other@example.org")).json()
    r = await client.delete(f"{h.ENTRIES}{other['id']}/", headers=auth(world.admin))
    assert r.status_code == 204


async def test_settings_and_automatic_assignment(client, world: World, factory, clean_app):
    ticket, q = await _sold_out(factory, world)
    first = (await _entry(client, world, ticket.id, "first@example.org")).json()
    second = (await _entry(client, world, ticket.id, "second@example.org")).json()
    r = await client.get(h.SETTINGS, headers=auth(world.admin))
    assert r.json() == {"auto_assign": False, "voucher_hours": 48}
    await client.patch(f"{h.QUOTAS}{q.id}/", json={"size": 1}, headers=auth(world.admin))
    db = clean_app.state.db
    async with db.sessionmaker() as session:
        assert await assign_all(session, utcnow()) == 0  # off by default
    r = await client.patch(
        h.SETTINGS, json={"auto_assign": True, "voucher_hours": 2}, headers=auth(world.admin)
    )
    assert r.status_code == 200 and r.json() == {"auto_assign": True, "voucher_hours": 2}
    assert_field_errors(
        await client.patch(h.SETTINGS, json={"voucher_hours": 0}, headers=auth(world.admin)),
        "voucher_hours",
    )
    async with db.sessionmaker() as session:
        assert await assign_all(session, utcnow()) == 1
    async with db.sessionmaker() as session:
        assert await assign_all(session, utcnow()) == 0  # nothing left to give
        entries = {e.id: e for e in await session.scalars(select(WaitingListEntry))}
        assert entries[first["id"]].voucher_id is not None  # the longest waiting first
        assert entries[second["id"]].voucher_id is None
        assert await session.scalar(select(func.count()).select_from(Voucher)) == 1


async def test_settings_need_the_settings_permission(client, world: World, factory):
    reader = await factory.token(
        await factory.team(world.org, event_permissions=["event.orders:write"])
    )
    assert (await client.get(h.SETTINGS, headers=auth(reader))).status_code == 200
    r = await client.patch(h.SETTINGS, json={"auto_assign": True}, headers=auth(reader))
    assert r.status_code == 403


async def test_entry_can_change_after_its_product_became_available(client, world: World, factory):
    ticket, q = await _sold_out(factory, world)
    entry = (await _entry(client, world, ticket.id)).json()
    await client.patch(f"{h.QUOTAS}{q.id}/", json={"size": 10}, headers=auth(world.admin))
    r = await client.patch(
        f"{h.ENTRIES}{entry['id']}/", json={"locale": "fr"}, headers=auth(world.admin)
    )
    assert r.status_code == 200, r.text
    assert r.json()["locale"] == "fr"


async def test_priority_is_stored_ordered_by_and_served_first(
    client, world: World, factory, clean_app
):
    """Issue 28: entries carry the reference's writable ``priority`` (0 by default); the list
    orders by it on request, and vouchers go to the highest priority first, then the oldest."""
    ticket, q = await _sold_out(factory, world)
    first = (await _entry(client, world, ticket.id, "first@example.org")).json()
    assert first["priority"] == 0
    urgent = (await _entry(client, world, ticket.id, "urgent@example.org", priority=5)).json()
    assert urgent["priority"] == 5
    low = (await _entry(client, world, ticket.id, "low@example.org")).json()
    r = await client.patch(
        f"{h.ENTRIES}{low['id']}/", json={"priority": -3}, headers=auth(world.admin)
    )
    assert r.status_code == 200 and r.json()["priority"] == -3
    for bad in ("high", True, 2**31, 1.5):
        r = await client.patch(
            f"{h.ENTRIES}{low['id']}/", json={"priority": bad}, headers=auth(world.admin)
        )
        assert_field_errors(r, "priority")
    listed = await client.get(f"{h.ENTRIES}?ordering=-priority", headers=auth(world.admin))
    assert [e["id"] for e in listed.json()["results"]] == [urgent["id"], first["id"], low["id"]]
    listed = await client.get(f"{h.ENTRIES}?ordering=priority", headers=auth(world.admin))
    assert [e["id"] for e in listed.json()["results"]] == [low["id"], first["id"], urgent["id"]]
    default = await client.get(h.ENTRIES, headers=auth(world.admin))  # the reference: created
    assert [e["id"] for e in default.json()["results"]] == [first["id"], urgent["id"], low["id"]]

    await client.patch(h.SETTINGS, json={"auto_assign": True}, headers=auth(world.admin))
    await client.patch(f"{h.QUOTAS}{q.id}/", json={"size": 1}, headers=auth(world.admin))
    async with clean_app.state.db.sessionmaker() as session:
        assert await assign_all(session, utcnow()) == 1
    async with clean_app.state.db.sessionmaker() as session:
        sent = {e.id for e in await session.scalars(select(WaitingListEntry)) if e.voucher_id}
    assert sent == {urgent["id"]}  # not the oldest: the one with the highest priority
