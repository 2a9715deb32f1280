"""Order positions: list filters, detail, PATCH, DELETE (cancel, never the last)."""

from __future__ import annotations

from tests.factories import auth
from tests.orders import helpers as h


async def _order(client, world, payload):
    r = await client.post(h.url(world), json=payload, headers=auth(world.admin))
    assert r.status_code == 201, r.text
    return r.json()


async def test_list_filters_and_detail(client, world, factory):
    item = await h.item(factory, world.event)
    other = await h.item(factory, world.event)
    a = await _order(
        client, world, {"positions": [{"item": item.id, "attendee_name": "Ada Lovelace"}]}
    )
    b = await _order(
        client, world, {"positions": [{"item": other.id, "attendee_email": "bob@x.org"}]}
    )
    get = lambda q: client.get(h.url(world, "orderpositions/") + q, headers=auth(world.admin))  # noqa: E731
    assert (await get("")).json()["count"] == 2
    assert [p["order"] for p in (await get(f"?item={other.id}")).json()["results"]] == [b["code"]]
    assert (await get("?attendee_name=ADA lovelace")).json()["results"][0]["order"] == a["code"]
    assert (await get("?search=BOB@")).json()["results"][0]["order"] == b["code"]
    assert (await get(f"?search={a['code'].lower()}")).json()["count"] == 1
    secret = a["positions"][0]["secret"]
    assert (await get(f"?secret={secret}")).json()["count"] == 1
    assert (await get("?order__status=p")).json()["count"] == 0
    assert (await get("?has_checkin=true")).json()["count"] == 0
    assert (await get("?has_checkin=false")).json()["count"] == 2
    pid = a["positions"][0]["id"]
    r = await client.get(h.url(world, f"orderpositions/{pid}/"), headers=auth(world.admin))
    assert r.json() == a["positions"][0]
    assert (
        await client.get(h.url(world, "orderpositions/99999/"), headers=auth(world.admin))
    ).status_code == 404


async def test_patch(client, world, factory):
    item = await h.item(factory, world.event)
    q = await h.question(factory, world.event, [item], "B", identifier="BOOL")
    a = await _order(
        client,
        world,
        {
            "positions": [
                {"item": item.id, "attendee_name": "Ada", "secret": "taken1"},
                {"item": item.id},
            ]
        },
    )
    pid = a["positions"][1]["id"]
    url = h.url(world, f"orderpositions/{pid}/")
    r = await client.patch(
        url,
        json={
            "attendee_name_parts": {"given_name": "Grace", "family_name": "Hopper"},
            "answers": [{"question": q.id, "answer": "true"}],
        },
        headers=auth(world.admin),
    )
    data = r.json()
    assert data["attendee_name"] == "Grace Hopper" and data["answers"][0]["answer"] == "True"
    r = await client.patch(
        url,
        json={"attendee_email": "g@example.org", "blocked": ["admin"]},
        headers=auth(world.admin),
    )
    assert r.json()["attendee_name"] == "Grace Hopper" and r.json()["blocked"] == ["admin"]
    r = await client.patch(url, json={"secret": "taken1"}, headers=auth(world.admin))
    assert r.status_code == 400 and "secret" in r.json()
    r = await client.patch(
        url, json={"answers": [{"question": q.id, "answer": "maybe"}]}, headers=auth(world.admin)
    )
    assert r.status_code == 400
    r = await client.patch(
        url, json={"secret": "fresh-secret", "answers": []}, headers=auth(world.admin)
    )
    assert r.json()["secret"] == "fresh-secret" and r.json()["answers"] == []


async def test_delete_cancels_but_not_last(client, world, factory):
    item = await h.item(factory, world.event, "10.00", quota=2)
    quota = await h.quota_of(factory, item.id)
    a = await _order(client, world, {"positions": [{"item": item.id}, {"item": item.id}]})
    first, second = (p["id"] for p in a["positions"])
    r = await client.delete(h.url(world, f"orderpositions/{first}/"), headers=auth(world.admin))
    assert r.status_code == 204
    order = (
        await client.get(
            h.url(world, f"orders/{a['code']}/?include_canceled_positions=true"),
            headers=auth(world.admin),
        )
    ).json()
    assert order["total"] == "10.00" and order["positions"][0]["canceled"] is True
    assert await h.availability(client, world, factory, quota.id) == 1
    r = await client.delete(h.url(world, f"orderpositions/{second}/"), headers=auth(world.admin))
    assert r.status_code == 400
