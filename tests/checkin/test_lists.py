"""Check-in lists: CRUD with validation, counts, status, positions and search."""

from __future__ import annotations

from sqlalchemy import func, select

from admit.models import Checkin
from tests.checkin import helpers as h
from tests.factories import World, assert_field_errors, auth


def lists_url(world: World, rest: str = "") -> str:
    return h.event_url(world, f"checkinlists/{rest}")


async def test_create_read_update_delete(client, world: World, factory):
    item = await h.ticket(factory, world.event)
    body = {
        "name": "VIP entry",
        "all_products": False,
        "limit_products": [item.id],
        "include_pending": True,
        "allow_multiple_entries": True,
        "allow_entry_after_exit": False,
        "exit_all_at": "2030-05-02T03:00:00+02:00",
        "addon_match": True,
        "rules": {"<": [{"var": "entries_number"}, 3]},
    }
    created = await client.post(lists_url(world), json=body, headers=auth(world.admin))
    assert created.status_code == 201, created.text
    data = created.json()
    assert data["limit_products"] == [item.id] and data["subevent"] is None
    assert data["position_count"] == 0 and data["checkin_count"] == 0
    assert data["exit_all_at"] == "2030-05-02T01:00:00Z"
    assert data["rules"] == body["rules"] and data["gates"] == []
    assert data["consider_tickets_used"] is True

    url = lists_url(world, f"{data['id']}/")
    patched = await client.patch(url, json={"name": "Backstage"}, headers=auth(world.admin))
    assert patched.status_code == 200 and patched.json()["name"] == "Backstage"
    assert patched.json()["limit_products"] == [item.id]
    put = await client.put(url, json={"name": "Reset"}, headers=auth(world.admin))
    assert put.status_code == 200
    # PUT keeps what it omits.
    assert put.json() == {**patched.json(), "name": "Reset"}

    listed = await client.get(lists_url(world), headers=auth(world.admin))
    assert [r["name"] for r in listed.json()["results"]] == ["Reset"]
    slim = await client.get(
        lists_url(world) + "?exclude=checkin_count&exclude=position_count",
        headers=auth(world.admin),
    )
    assert "checkin_count" not in slim.json()["results"][0]

    assert (await client.delete(url, headers=auth(world.admin))).status_code == 204
    assert (await client.get(url, headers=auth(world.admin))).status_code == 404


async def test_validation(client, world: World, factory):
    foreign_item = await h.ticket(factory, world.other_event)
    cases = [
        ({"name": ""}, "name"),
        ({}, "name"),
        ({"name": "x", "limit_products": [foreign_item.id]}, "limit_products"),
        ({"name": "x", "limit_products": [2**40]}, "limit_products"),
        ({"name": "x", "subevent": 999999}, "subevent"),
        ({"name": "x", "gates": [999999]}, "gates"),
        ({"name": "x", "rules": {"nope": []}}, "rules"),
        ({"name": "x", "rules": {"==": [{"var": "password"}, 1]}}, "rules"),
        ({"name": "x", "rules": "x"}, "rules"),
        ({"name": "x", "exit_all_at": "tomorrow"}, "exit_all_at"),
    ]
    for body, field in cases:
        response = await client.post(lists_url(world), json=body, headers=auth(world.admin))
        assert_field_errors(response, field)


async def test_permissions(client, world: World, factory):
    scanner = await factory.token(
        await factory.team(world.org, event_permissions=["event.orders:checkin"])
    )
    clist = await h.checkin_list(factory, world.event)
    assert (await client.get(lists_url(world), headers=auth(scanner))).status_code == 200
    assert (
        await client.get(lists_url(world, f"{clist.id}/status/"), headers=auth(scanner))
    ).status_code == 200
    response = await client.post(lists_url(world), json={"name": "x"}, headers=auth(scanner))
    assert response.status_code == 403
    # Another organizer's list is not found, whatever its id.
    other = await h.checkin_list(factory, world.other_event)
    response = await client.get(lists_url(world, f"{other.id}/"), headers=auth(world.admin))
    assert response.status_code == 404


async def test_counts_status_and_positions(client, world: World, factory):
    ticket = await h.ticket(factory, world.event)
    shirt = await h.ticket(factory, world.event, "Shirt", admission=False)
    red = await h.variation(factory, shirt, "Red")
    clist = await h.checkin_list(factory, world.event)
    other_list = await h.checkin_list(factory, world.event, "Other")
    _, tickets = await h.order(factory, world.event, ticket, n=3)
    await h.order(factory, world.event, shirt, variation=red)
    await h.order(factory, world.event, ticket, status="n")  # not on the list
    await h.order(factory, world.event, ticket, position={"canceled": True})
    assert (await h.redeem(client, world, tickets[0].secret, [clist.id])).status_code == 201
    assert (await h.redeem(client, world, tickets[1].secret, [clist.id])).status_code == 201
    r = await h.redeem(client, world, tickets[1].secret, [clist.id], type="exit")
    assert r.status_code == 201
    # entering again after leaving: two entries, still one ticket checked in
    assert (await h.redeem(client, world, tickets[1].secret, [clist.id])).status_code == 201
    assert (await h.redeem(client, world, tickets[2].secret, [other_list.id])).status_code == 201

    detail = await client.get(lists_url(world, f"{clist.id}/"), headers=auth(world.admin))
    assert detail.json()["position_count"] == 4 and detail.json()["checkin_count"] == 2

    status = (
        await client.get(lists_url(world, f"{clist.id}/status/"), headers=auth(world.admin))
    ).json()
    assert status["position_count"] == 4 and status["checkin_count"] == 2
    assert status["inside_count"] == 2  # the first two tickets (the second back in)
    assert status["event"] == {"name": "Summit"}
    by_id = {i["id"]: i for i in status["items"]}
    assert by_id[ticket.id]["position_count"] == 3 and by_id[ticket.id]["checkin_count"] == 2
    assert by_id[ticket.id]["admission"] is True and by_id[ticket.id]["variations"] == []
    assert by_id[shirt.id]["variations"] == [
        {"value": "Red", "id": red.id, "checkin_count": 0, "position_count": 1}
    ]

    positions = await client.get(
        lists_url(world, f"{clist.id}/positions/?ordering=positionid"), headers=auth(world.admin)
    )
    assert positions.status_code == 200
    results = positions.json()["results"]
    assert positions.json()["count"] == 4
    checked = {r["id"]: r["checkins"] for r in results}
    assert [c["type"] for c in checked[tickets[1].id]] == ["entry", "exit", "entry"]
    assert checked[tickets[2].id] == []  # checked in on another list only
    assert all("require_attention" in r for r in results)

    def ids(response):
        return {r["id"] for r in response.json()["results"]}

    base = lists_url(world, f"{clist.id}/positions/")
    with_checkin = await client.get(base + "?has_checkin=true", headers=auth(world.admin))
    assert ids(with_checkin) == {tickets[0].id, tickets[1].id}
    without = await client.get(base + "?has_checkin=false", headers=auth(world.admin))
    assert tickets[2].id in ids(without) and tickets[0].id not in ids(without)
    everything = await client.get(base + "?ignore_status=true", headers=auth(world.admin))
    assert everything.json()["count"] == 6
    by_item = await client.get(base + f"?item={shirt.id}", headers=auth(world.admin))
    assert by_item.json()["count"] == 1
    latest = await client.get(base + "?ordering=-last_checked_in", headers=auth(world.admin))
    assert latest.json()["results"][0]["id"] == tickets[1].id
    ignored = await client.get(base + "?ordering=secret", headers=auth(world.admin))
    assert ignored.status_code == 200  # an unknown ordering name is ignored, as the reference
    one = await client.get(base + f"{tickets[0].id}/", headers=auth(world.admin))
    assert one.status_code == 200 and one.json()["id"] == tickets[0].id
    expanded = await client.get(base + f"{tickets[0].id}/?expand=item", headers=auth(world.admin))
    assert expanded.json()["item"]["id"] == ticket.id
    assert (await client.get(base + "999999/", headers=auth(world.admin))).status_code == 404

    search = await client.get(
        f"/api/v1/organizers/{world.org.slug}/checkinrpc/search/?list={clist.id}&search=Guest",
        headers=auth(world.admin),
    )
    assert search.status_code == 200 and search.json()["count"] == 4


async def test_deleting_a_list_deletes_its_checkins(client, world: World, factory):
    item = await h.ticket(factory, world.event)
    clist = await h.checkin_list(factory, world.event)
    _, (pos,) = await h.order(factory, world.event, item)
    await h.redeem(client, world, pos.secret, [clist.id])
    response = await client.delete(lists_url(world, f"{clist.id}/"), headers=auth(world.admin))
    assert response.status_code == 204
    async with factory.sessionmaker() as s:
        assert await s.scalar(select(func.count()).select_from(Checkin)) == 0


async def test_list_positions_carry_the_order_fields(client, world: World, factory):
    """Issue 28: the reference's check-in list positions carry ``order__status``,
    ``order__locale``, ``order__require_approval`` and ``order__valid_if_pending`` (a scanner
    judges pending tickets offline with them); list, detail and search alike."""
    ticket = await h.ticket(factory, world.event)
    clist = await h.checkin_list(factory, world.event, include_pending=True)
    _, (paid,) = await h.order(factory, world.event, ticket, locale="de")
    _, (pending,) = await h.order(factory, world.event, ticket, status="n", valid_if_pending=True)
    base = lists_url(world, f"{clist.id}/positions/")
    listed = await client.get(base, headers=auth(world.admin))
    assert listed.status_code == 200, listed.text
    fields = {
        r["id"]: {k: r[k] for k in r if k.startswith("order__")} for r in listed.json()["results"]
    }
    assert fields[paid.id] == {
        "order__status": "p",
        "order__locale": "de",
        "order__require_approval": False,
        "order__valid_if_pending": False,
    }
    assert fields[pending.id]["order__status"] == "n"
    assert fields[pending.id]["order__valid_if_pending"] is True
    one = await client.get(f"{base}{paid.id}/", headers=auth(world.admin))
    assert one.json()["order__locale"] == "de" and one.json()["order__status"] == "p"
    search = await client.get(
        f"/api/v1/organizers/{world.org.slug}/checkinrpc/search/?list={clist.id}&search=Guest",
        headers=auth(world.admin),
    )
    assert all("order__status" in r for r in search.json()["results"])
