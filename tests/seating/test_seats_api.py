"""``E/seats/`` and ``E/subevents/{id}/seats/``: list, filters, expand, detail, PATCH, bulk."""

from __future__ import annotations

import pytest

from tests.factories import assert_field_errors, auth
from tests.seating import helpers as h


@pytest.fixture
async def seated(world, factory):
    stalls = await h.ticket(factory, world.event, "Stalls")
    await h.seated_event(factory, world.event, {"Stalls": stalls.id, "Balcony": None})
    return stalls


async def _get(client, world, suffix="", token=None, **params):
    return await client.get(
        h.seats_url(world, suffix), params=params, headers=auth(token or world.admin)
    )


async def test_list_shows_every_field(client, world, factory, seated):
    response = await _get(client, world)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["count"] == 5 and body["next"] is None
    first = body["results"][0]
    seat = await h.seat_by_guid(factory, world.event, "1-1")
    assert first == {
        "id": seat.id,
        "subevent": None,
        "zone_name": "Ground floor",
        "row_name": "1",
        "row_label": None,
        "seat_number": "1",
        "seat_label": None,
        "seat_guid": "1-1",
        "product": seated.id,
        "blocked": False,
        "orderposition": None,
        "cartposition": None,
        "voucher": None,
    }
    assert [s["seat_guid"] for s in body["results"]] == ["1-1", "1-2", "1-3", "2-1", "2-2"]
    detail = await _get(client, world, f"{seat.id}/")
    assert detail.json() == first


async def test_filters(client, world, seated):
    async def guids(**params):
        response = await _get(client, world, **params)
        assert response.status_code == 200, response.text
        return [s["seat_guid"] for s in response.json()["results"]]

    assert await guids(row_name="2") == ["2-1", "2-2"]
    assert await guids(seat_number="3") == ["1-3"]
    assert await guids(seat_guid="2-2") == ["2-2"]
    assert await guids(zone_name="Ground floor", row_name="1", seat_number="2") == ["1-2"]
    assert await guids(zone_name="Nowhere") == []
    assert await guids(row_label="x") == [] and await guids(seat_label="x") == []

    sold = await h.order(client, world, [{"item": seated.id, "seat": "1-1"}])
    carted = await h.cart(client, world, seated, "1-2")
    assert sold.status_code == 201 and carted.status_code == 201
    blocked = await _get(client, world, seat_guid="2-1")
    await client.patch(
        h.seats_url(world, f"{blocked.json()['results'][0]['id']}/"),
        json={"blocked": True},
        headers=auth(world.admin),
    )
    assert await guids(blocked="true") == ["2-1"]
    assert await guids(blocked="false") == ["1-1", "1-2", "1-3", "2-2"]
    assert await guids(is_available="true") == ["1-3", "2-2"]
    assert await guids(is_available="false") == ["1-1", "1-2", "2-1"]
    bad = await _get(client, world, is_available="maybe")
    assert_field_errors(bad, "is_available")


async def test_holders_and_expand(client, world, factory, seated):
    sold = await h.order(
        client, world, [{"item": seated.id, "seat": "1-1", "attendee_name": "Ada"}]
    )
    carted = await h.cart(client, world, seated, "1-2")
    position = sold.json()["positions"][0]
    plain = (await _get(client, world)).json()["results"]
    assert plain[0]["orderposition"] == position["id"] and plain[0]["cartposition"] is None
    assert plain[1]["cartposition"] == carted.json()["id"] and plain[1]["orderposition"] is None

    expanded = await _get(client, world, expand=["orderposition", "cartposition"])
    assert expanded.status_code == 200, expanded.text
    results = expanded.json()["results"]
    nested = results[0]["orderposition"]
    assert nested["order"] == {"code": sold.json()["code"], "event": world.event.slug}
    assert "seat" not in nested
    assert nested["id"] == position["id"] and nested["attendee_name"] == "Ada"
    assert nested["secret"] == position["secret"]
    cart = results[1]["cartposition"]
    assert cart["id"] == carted.json()["id"] and cart["seat"]["seat_guid"] == "1-2"
    assert results[2]["orderposition"] is None

    seat_id = plain[0]["id"]
    one = await client.get(
        h.seats_url(world, f"{seat_id}/"),
        params={"expand": "orderposition"},
        headers=auth(world.admin),
    )
    assert one.json()["orderposition"]["order"]["code"] == sold.json()["code"]


async def test_expand_needs_permission_and_a_known_name(client, world, factory, seated):
    reader = await factory.token(await factory.team(world.org))
    assert (await _get(client, world, token=reader)).status_code == 200
    response = await _get(client, world, token=reader, expand="orderposition")
    assert response.status_code == 403
    response = await _get(client, world, expand="nonsense")
    assert_field_errors(response, "expand")


async def test_canceled_or_expired_orders_free_their_seat(client, world, factory, seated):
    sold = await h.order(client, world, [{"item": seated.id, "seat": "1-1"}])
    code = sold.json()["code"]
    await client.post(
        h.event_url(world.event, world.org, f"orders/{code}/mark_expired/"),
        headers=auth(world.admin),
    )
    listed = await _get(client, world, seat_guid="1-1")
    assert listed.json()["results"][0]["orderposition"] is None


async def test_wrong_variant_and_missing_seats_are_404(client, world, factory, seated):
    seat = await h.seat_by_guid(factory, world.event, "1-1")
    series = await factory.event(world.org, "tour", has_subevents=True)
    date = await h.subevent(factory, series)
    other_date = await h.subevent(
        factory, await factory.event(world.org, "other", has_subevents=True)
    )

    fake_sub = f"/api/v1/organizers/{world.org.slug}/events/{world.event.slug}/subevents/1/seats/"
    assert (await client.get(fake_sub, headers=auth(world.admin))).status_code == 404
    plain_on_series = h.seats_url(world, event=series)
    assert (await client.get(plain_on_series, headers=auth(world.admin))).status_code == 404
    ok = await client.get(
        h.seats_url(world, event=series, subevent=date), headers=auth(world.admin)
    )
    assert ok.status_code == 200 and ok.json()["count"] == 0
    foreign = h.seats_url(world, event=series, subevent=other_date)
    assert (await client.get(foreign, headers=auth(world.admin))).status_code == 404
    for suffix in ("999999/", "abc/", "0/", f"{2**40}/"):
        assert (await _get(client, world, suffix)).status_code == 404
    # A seat of another event is not found through this one.
    assert (
        await client.get(
            h.seats_url(world, f"{seat.id}/", event=series, subevent=date),
            headers=auth(world.admin),
        )
    ).status_code == 404


async def test_patch_changes_only_blocked(client, world, factory, seated):
    seat = await h.seat_by_guid(factory, world.event, "1-1")
    url = h.seats_url(world, f"{seat.id}/")
    response = await client.patch(
        url,
        json={"blocked": True, "seat_guid": "hacked", "product": None, "zone_name": "x"},
        headers=auth(world.admin),
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["blocked"] is True and body["seat_guid"] == "1-1" and body["product"] == seated.id
    assert (await _get(client, world, f"{seat.id}/")).json()["blocked"] is True
    bad = await client.patch(url, json={"blocked": "perhaps"}, headers=auth(world.admin))
    assert_field_errors(bad, "blocked")
    bad = await client.patch(url, json={"blocked": None}, headers=auth(world.admin))
    assert_field_errors(bad, "blocked")
    reader = await factory.token(await factory.team(world.org))
    denied = await client.patch(url, json={"blocked": False}, headers=auth(reader))
    assert denied.status_code == 403


async def test_put_is_the_same_update_as_patch(client, world, factory, seated):
    """PUT on a seat (allowed on every update endpoint): only ``blocked`` is written, and an
    omitted ``blocked`` keeps its value (nothing is required). The date variant is covered by
    ``tests/kit/test_put_generated.py``."""
    seat = await h.seat_by_guid(factory, world.event, "1-1")
    url = h.seats_url(world, f"{seat.id}/")
    response = await client.put(
        url, json={"blocked": True, "seat_guid": "hacked"}, headers=auth(world.admin)
    )
    assert response.status_code == 200, response.text
    assert response.json()["blocked"] is True and response.json()["seat_guid"] == "1-1"
    kept = await client.put(url, json={}, headers=auth(world.admin))
    assert kept.status_code == 200 and kept.json() == response.json()
    assert (await _get(client, world, f"{seat.id}/")).json()["blocked"] is True
    assert_field_errors(
        await client.put(url, json={"blocked": None}, headers=auth(world.admin)), "blocked"
    )
    reader = await factory.token(await factory.team(world.org))
    denied = await client.put(url, json={"blocked": False}, headers=auth(reader))
    assert denied.status_code == 403


async def test_bulk_block_and_unblock(client, world, factory, seated):
    seats = await h.seats(factory, world.event)
    ids = [s.id for s in seats[:2]]
    response = await client.post(
        h.seats_url(world, "bulk_block/"), json={"ids": ids}, headers=auth(world.admin)
    )
    assert response.status_code == 200 and response.json() == {}
    blocked = (await _get(client, world, blocked="true")).json()["results"]
    assert [s["id"] for s in blocked] == ids
    # Already blocked, sold or not: no error; the reference's examples send PATCH.
    await h.order(client, world, [{"item": seated.id, "seat": "1-3"}])
    response = await client.patch(
        h.seats_url(world, "bulk_block/"),
        json={"seat_guids": ["1-1", "1-3", "2-2"]},
        headers=auth(world.admin),
    )
    assert response.status_code == 200, response.text
    assert len((await _get(client, world, blocked="true")).json()["results"]) == 4
    response = await client.post(
        h.seats_url(world, "bulk_unblock/"),
        json={"seat_guids": ["1-1", "1-2", "1-3", "2-2"]},
        headers=auth(world.admin),
    )
    assert response.status_code == 200
    assert (await _get(client, world, blocked="true")).json()["count"] == 0


async def test_bulk_errors(client, world, factory, seated):
    url = h.seats_url(world, "bulk_block/")
    seat = await h.seat_by_guid(factory, world.event, "1-1")
    theirs = await h.ticket(factory, world.other_event)
    await h.seated_event(factory, world.other_event, {"Stalls": theirs.id})
    foreign = await h.seat_by_guid(factory, world.other_event, "1-2")

    missing = await client.post(
        url, json={"ids": [seat.id, 999999, foreign.id]}, headers=auth(world.admin)
    )
    body = assert_field_errors(missing, "ids")
    assert "999999" in body["ids"][0] and str(foreign.id) in body["ids"][0]
    assert (await _get(client, world, blocked="true")).json()["count"] == 0  # nothing changed
    missing = await client.post(url, json={"seat_guids": ["1-1", "zz"]}, headers=auth(world.admin))
    assert "zz" in assert_field_errors(missing, "seat_guids")["seat_guids"][0]
    for body in ({}, {"ids": [1], "seat_guids": ["1-1"]}, {"ids": "1"}, {"ids": [True]}):
        response = await client.post(url, json=body, headers=auth(world.admin))
        assert response.status_code == 400, (body, response.text)
    too_many = await client.post(
        url, json={"ids": list(range(1, 10_002))}, headers=auth(world.admin)
    )
    assert_field_errors(too_many, "ids")


async def test_bulk_takes_ten_thousand(client, world, factory):
    rows = {str(r): [f"{n}:Stalls" for n in range(1, 101)] for r in range(1, 101)}
    ticket = await h.ticket(factory, world.event)
    await h.seated_event(factory, world.event, {"Stalls": ticket.id}, h.layout(rows))
    guids = [f"{r}-{n}" for r in range(1, 101) for n in range(1, 101)]
    response = await client.post(
        h.seats_url(world, "bulk_block/"), json={"seat_guids": guids}, headers=auth(world.admin)
    )
    assert response.status_code == 200, response.text
    assert (await _get(client, world, blocked="false")).json()["count"] == 0
    assert (await _get(client, world, blocked="true")).json()["count"] == 10_000


async def test_list_costs_a_fixed_number_of_queries(client, world, factory, seated, count_queries):
    async def cost(**params):
        with count_queries() as q:
            response = await _get(client, world, **params)
            assert response.status_code == 200
        return q.count

    expand = {"expand": ["orderposition", "cartposition"]}
    await h.order(client, world, [{"item": seated.id, "seat": "1-1"}])
    await h.cart(client, world, seated, "1-2")
    small = await cost(**expand)
    await h.order(client, world, [{"item": seated.id, "seat": "1-3"}])
    assert await cost(**expand) == small
    assert await cost() < small
