"""Orders linked to customers by identifier: on create and PATCH, rendered, filtered, and never
to another organizer's customer."""

from __future__ import annotations

from tests.factories import auth
from tests.orders import helpers as h


async def _customer(client, token: str, org_slug: str, email: str) -> str:
    r = await client.post(
        f"/api/v1/organizers/{org_slug}/customers/", json={"email": email}, headers=auth(token)
    )
    assert r.status_code == 201, r.text
    return r.json()["identifier"]


async def test_customer_on_create_patch_render_and_filter(client, world, factory):
    item = await h.item(factory, world.event, "10.00")
    mine = await _customer(client, world.admin, world.org.slug, "ada@example.org")
    other = await _customer(client, world.admin, world.org.slug, "bob@example.org")
    r = await client.post(
        h.url(world), json=h.body(item.id, customer=mine), headers=auth(world.admin)
    )
    assert r.status_code == 201, r.text
    code = r.json()["code"]
    assert r.json()["customer"] == mine
    plain = await client.post(h.url(world), json=h.body(item.id), headers=auth(world.admin))
    assert plain.json()["customer"] is None

    listed = await client.get(h.url(world), params={"customer": mine}, headers=auth(world.admin))
    assert [o["code"] for o in listed.json()["results"]] == [code]
    assert listed.json()["results"][0]["customer"] == mine
    org_list = await client.get(
        f"/api/v1/organizers/{world.org.slug}/orders/",
        params={"customer": mine},
        headers=auth(world.admin),
    )
    assert [o["code"] for o in org_list.json()["results"]] == [code]

    patched = await client.patch(
        f"{h.url(world)}{code}/", json={"customer": other}, headers=auth(world.admin)
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["customer"] == other
    gone = await client.get(h.url(world), params={"customer": mine}, headers=auth(world.admin))
    assert gone.json()["count"] == 0
    cleared = await client.patch(
        f"{h.url(world)}{code}/", json={"customer": None}, headers=auth(world.admin)
    )
    assert cleared.json()["customer"] is None
    detail = await client.get(f"{h.url(world)}{code}/", headers=auth(world.admin))
    assert detail.json()["customer"] is None


async def test_customer_of_another_organizer_or_unknown_is_400(client, world, factory):
    item = await h.item(factory, world.event, "10.00")
    theirs = await _customer(client, world.outsider, world.other.slug, "eve@example.org")
    message = {"customer": [f"Object with identifier={theirs} does not exist."]}
    r = await client.post(
        h.url(world), json=h.body(item.id, customer=theirs), headers=auth(world.admin)
    )
    assert r.status_code == 400
    assert r.json() == message
    assert (await client.get(h.url(world), headers=auth(world.admin))).json()["count"] == 0
    order = await client.post(h.url(world), json=h.body(item.id), headers=auth(world.admin))
    code = order.json()["code"]
    patched = await client.patch(
        f"{h.url(world)}{code}/", json={"customer": theirs}, headers=auth(world.admin)
    )
    assert patched.status_code == 400
    assert patched.json() == message
    unknown = await client.patch(
        f"{h.url(world)}{code}/", json={"customer": "NOSUCH"}, headers=auth(world.admin)
    )
    assert unknown.json() == {"customer": ["Object with identifier=NOSUCH does not exist."]}
    wrong_type = await client.patch(
        f"{h.url(world)}{code}/", json={"customer": 5}, headers=auth(world.admin)
    )
    assert wrong_type.status_code == 400
    detail = await client.get(f"{h.url(world)}{code}/", headers=auth(world.admin))
    assert detail.json()["customer"] is None


async def test_split_order_keeps_the_customer(client, world, factory):
    item = await h.item(factory, world.event, "10.00")
    mine = await _customer(client, world.admin, world.org.slug, "ada@example.org")
    r = await client.post(
        h.url(world), json=h.body(item.id, 2, customer=mine), headers=auth(world.admin)
    )
    code = r.json()["code"]
    split = await client.post(
        f"{h.url(world)}{code}/change/",
        json={"split_positions": [{"position": r.json()["positions"][0]["id"]}]},
        headers=auth(world.admin),
    )
    assert split.status_code == 200, split.text
    listed = await client.get(h.url(world), params={"customer": mine}, headers=auth(world.admin))
    assert listed.json()["count"] == 2
    assert {o["customer"] for o in listed.json()["results"]} == {mine}
