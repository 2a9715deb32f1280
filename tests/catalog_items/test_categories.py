"""Categories: round trip, PATCH/PUT, validation, references, filters, ordering, delete."""

from __future__ import annotations

from tests.catalog_items.helpers import OTHER, assert_errors, category, item, post, url
from tests.factories import World, auth

FULL = {
    "name": {"en": "Tickets", "de": "Karten"},
    "internal_name": "tix",
    "description": {"en": "Get in"},
    "position": 3,
    "is_addon": False,
    "cross_selling_mode": "both",
    "cross_selling_condition": "products",
}


async def test_round_trip(client, world: World, factory):
    thing = await item(factory, world.event)
    body = {**FULL, "cross_selling_match_products": [thing.id]}
    created = await post(client, world, "categories/", body)
    assert created == {"id": created["id"], **body}
    got = await client.get(url(f"categories/{created['id']}/"), headers=auth(world.admin))
    assert got.status_code == 200
    assert got.json() == created


async def test_defaults(client, world: World):
    created = await post(client, world, "categories/", {"name": "Plain"})
    assert created == {
        "id": created["id"],
        "name": {"en": "Plain"},
        "internal_name": None,
        "description": None,
        "position": 0,
        "is_addon": False,
        "cross_selling_mode": None,
        "cross_selling_condition": None,
        "cross_selling_match_products": [],
    }


async def test_patch_and_put_keep_other_fields(client, world: World):
    created = await post(client, world, "categories/", {**FULL, "cross_selling_condition": None})
    path = url(f"categories/{created['id']}/")
    patched = await client.patch(path, json={"is_addon": True}, headers=auth(world.admin))
    assert patched.status_code == 200
    assert patched.json() == {**created, "is_addon": True}
    put = await client.put(path, json={"name": {"en": "New"}}, headers=auth(world.admin))
    assert put.status_code == 200
    assert put.json() == {**created, "is_addon": True, "name": {"en": "New"}}


async def test_validation(client, world: World):
    headers = auth(world.admin)
    assert_errors(await client.post(url("categories/"), json={}, headers=headers), "name")
    assert_errors(
        await client.post(url("categories/"), json={"name": {"en": " "}}, headers=headers), "name"
    )
    bad_mode = {"name": "x", "cross_selling_mode": "always"}
    body = assert_errors(await client.post(url("categories/"), json=bad_mode, headers=headers))
    assert body == {"cross_selling_mode": ['"always" is not a valid choice.']}
    bad_cond = {"name": "x", "cross_selling_condition": "never"}
    assert_errors(
        await client.post(url("categories/"), json=bad_cond, headers=headers),
        "cross_selling_condition",
    )
    need_products = {"name": "x", "cross_selling_condition": "products"}
    assert_errors(
        await client.post(url("categories/"), json=need_products, headers=headers),
        "cross_selling_match_products",
    )
    assert_errors(
        await client.post(url("categories/"), json={"name": "x", "position": -1}, headers=headers),
        "position",
    )


async def test_patch_condition_products_needs_products(client, world: World):
    created = await post(client, world, "categories/", {"name": "x"})
    path = url(f"categories/{created['id']}/")
    response = await client.patch(
        path, json={"cross_selling_condition": "products"}, headers=auth(world.admin)
    )
    assert_errors(response, "cross_selling_match_products")


async def test_products_of_another_event_are_refused(client, world: World, factory):
    foreign = await item(factory, world.other_event)
    body = {"name": "x", "cross_selling_match_products": [foreign.id, 999999, 2**40]}
    response = await client.post(url("categories/"), json=body, headers=auth(world.admin))
    assert assert_errors(response) == {
        "cross_selling_match_products": [
            f'Invalid pk "{foreign.id}" - object does not exist.',
            'Invalid pk "999999" - object does not exist.',
            f'Invalid pk "{2**40}" - object does not exist.',
        ]
    }


async def test_filter_and_ordering(client, world: World, factory):
    a = await category(factory, world.event, position=2, is_addon=True)
    b = await category(factory, world.event, position=1)
    c = await category(factory, world.event, position=1, is_addon=True)
    await category(factory, world.other_event)
    headers = auth(world.admin)

    async def ids(query: str) -> list[int]:
        response = await client.get(url(f"categories/{query}"), headers=headers)
        assert response.status_code == 200, response.text
        return [r["id"] for r in response.json()["results"]]

    assert await ids("") == [b.id, c.id, a.id]
    assert await ids("?ordering=-position") == [a.id, c.id, b.id]
    assert await ids("?ordering=id") == [a.id, b.id, c.id]
    assert await ids("?ordering=-id") == [c.id, b.id, a.id]
    assert await ids("?is_addon=true") == [c.id, a.id]
    assert await ids("?is_addon=false") == [b.id]
    assert_errors(await client.get(url("categories/?is_addon=maybe"), headers=headers), "is_addon")
    assert await ids("?ordering=name") == await ids("")  # unknown: ignored, as the reference


async def test_other_event_category_is_404(client, world: World, factory):
    foreign = await category(factory, world.other_event)
    response = await client.get(url(f"categories/{foreign.id}/"), headers=auth(world.admin))
    assert response.status_code == 404
    assert response.json() == {"detail": "Not found."}


async def test_delete_keeps_items(client, world: World):
    cat = await post(client, world, "categories/", {"name": "x"})
    thing = await post(client, world, "items/", {"name": "T", "category": cat["id"]})
    headers = auth(world.admin)
    response = await client.delete(url(f"categories/{cat['id']}/"), headers=headers)
    assert response.status_code == 204
    assert (await client.get(url(f"categories/{cat['id']}/"), headers=headers)).status_code == 404
    got = await client.get(url(f"items/{thing['id']}/"), headers=headers)
    assert got.status_code == 200
    assert got.json()["category"] is None


async def test_read_needs_no_permission_but_write_does(client, world: World, factory):
    cat = await category(factory, world.event)
    response = await client.get(url(f"categories/{cat.id}/"), headers=auth(world.nobody))
    assert response.status_code == 200
    response = await client.patch(
        url(f"categories/{cat.id}/"), json={"position": 1}, headers=auth(world.nobody)
    )
    assert response.status_code == 403
    response = await client.get(f"{OTHER}/categories/", headers=auth(world.admin))
    assert response.status_code == 403
