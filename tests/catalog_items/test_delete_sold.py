"""What was sold cannot be deleted: 403 with a sentence saying why (a retry never helps, so
not 409), as the reference answers. The item or variation can be deactivated instead."""

from __future__ import annotations

from tests.conditional.recipes import E, Env
from tests.factories import World, auth


async def _quota(env: Env, item: int, variations: list[int] | None = None) -> None:
    body = {"name": "Q", "size": 10, "items": [item], "variations": variations or []}
    await env.post(f"{E}/quotas/", body)


async def test_an_ordered_item_cannot_be_deleted_but_deactivated(client, world: World, factory):
    env = Env(client, world, factory)
    order = await env.order()
    item = order["positions"][0]["item"]
    url = f"{E}/items/{item}/"
    response = await client.delete(url, headers=auth(world.admin))
    assert response.status_code == 403, response.text
    assert response.json() == {
        "detail": "This product cannot be deleted because it has already been ordered. "
        "Deactivate it (set active to false) to stop selling it."
    }
    assert (await client.get(url, headers=auth(world.admin))).status_code == 200
    patched = await client.patch(url, json={"active": False}, headers=auth(world.admin))
    assert patched.status_code == 200 and patched.json()["active"] is False
    # An item nobody ordered still goes.
    unsold = await env.post(f"{E}/items/", {"name": {"en": "Unsold"}, "default_price": "1.00"})
    response = await client.delete(f"{E}/items/{unsold['id']}/", headers=auth(world.admin))
    assert response.status_code == 204


async def test_an_ordered_variation_cannot_be_deleted(client, world: World, factory):
    env = Env(client, world, factory)
    body = {
        "name": {"en": "Shirt"},
        "default_price": "10.00",
        "variations": [{"value": {"en": "S"}}, {"value": {"en": "M"}}, {"value": {"en": "L"}}],
    }
    item = await env.post(f"{E}/items/", body)
    small, medium, _large = (v["id"] for v in item["variations"])
    await _quota(env, item["id"], [small, medium, _large])
    order = {"email": "a@example.org", "positions": [{"item": item["id"], "variation": small}]}
    await env.post(f"{E}/orders/", order)
    base = f"{E}/items/{item['id']}/variations/"
    response = await client.delete(f"{base}{small}/", headers=auth(world.admin))
    assert response.status_code == 403, response.text
    assert response.json() == {
        "detail": "This variation cannot be deleted because it has already been ordered. "
        "Deactivate it (set active to false) to stop selling it."
    }
    # The item has been ordered through its variation.
    response = await client.delete(f"{E}/items/{item['id']}/", headers=auth(world.admin))
    assert response.status_code == 403, response.text
    assert (await client.delete(f"{base}{medium}/", headers=auth(world.admin))).status_code == 204
