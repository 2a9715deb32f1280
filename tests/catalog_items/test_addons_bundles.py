"""Add-ons and bundles under an item."""

from __future__ import annotations

from tests.catalog_items.helpers import assert_errors, category, item, url, variation_ids
from tests.factories import World, auth


async def test_addon_round_trip_patch_put_delete(client, world: World, factory):
    thing = await item(factory, world.event)
    cat = await category(factory, world.event, is_addon=True)
    base = url(f"items/{thing.id}/addons/")
    headers = auth(world.admin)
    body = {
        "addon_category": cat.id,
        "min_count": 1,
        "max_count": 3,
        "position": 2,
        "multi_allowed": True,
        "price_included": True,
    }
    response = await client.post(base, json=body, headers=headers)
    assert response.status_code == 201, response.text
    created = response.json()
    assert created == {"id": created["id"], **body}
    path = f"{base}{created['id']}/"
    assert (await client.get(path, headers=headers)).json() == created
    patched = await client.patch(path, json={"max_count": 5}, headers=headers)
    assert patched.json() == {**created, "max_count": 5}
    # PUT with the required field alone keeps every other field.
    put = await client.put(path, json={"addon_category": cat.id}, headers=headers)
    assert put.json() == {**created, "max_count": 5}
    item_body = (await client.get(url(f"items/{thing.id}/"), headers=headers)).json()
    assert item_body["addons"] == [put.json()]
    assert (await client.delete(path, headers=headers)).status_code == 204
    assert (await client.get(path, headers=headers)).status_code == 404


async def test_addon_rules(client, world: World, factory):
    thing = await item(factory, world.event)
    addon_cat = await category(factory, world.event, is_addon=True)
    plain_cat = await category(factory, world.event)
    foreign = await category(factory, world.other_event, is_addon=True)
    base = url(f"items/{thing.id}/addons/")
    headers = auth(world.admin)

    async def post(body):
        return await client.post(base, json=body, headers=headers)

    assert_errors(await post({}), "addon_category")
    assert assert_errors(await post({"addon_category": foreign.id})) == {
        "addon_category": [f'Invalid pk "{foreign.id}" - object does not exist.']
    }
    assert_errors(await post({"addon_category": plain_cat.id}), "addon_category")
    assert_errors(await post({"addon_category": addon_cat.id, "min_count": -1}), "min_count")
    assert_errors(await post({"addon_category": addon_cat.id, "max_count": -1}), "max_count")
    assert_errors(
        await post({"addon_category": addon_cat.id, "min_count": 2, "max_count": 1}),
        "non_field_errors",
    )
    equal = await post({"addon_category": addon_cat.id, "min_count": 2, "max_count": 2})
    assert equal.status_code == 201
    duplicate = await post({"addon_category": addon_cat.id})
    assert assert_errors(duplicate) == {
        "addon_category": ["The item already has an add-on of this category."]
    }
    # Changing the existing add-on keeps its own category without a conflict.
    path = f"{base}{equal.json()['id']}/"
    assert (await client.patch(path, json={"position": 1}, headers=headers)).status_code == 200
    merged = await client.patch(path, json={"min_count": 3}, headers=headers)
    assert_errors(merged, "non_field_errors")


async def test_addon_ordering(client, world: World, factory):
    thing = await item(factory, world.event)
    base = url(f"items/{thing.id}/addons/")
    headers = auth(world.admin)
    ids = []
    for position in (2, 1):
        cat = await category(factory, world.event, is_addon=True)
        body = {"addon_category": cat.id, "position": position}
        ids.append((await client.post(base, json=body, headers=headers)).json()["id"])
    listed = await client.get(base, headers=headers)
    assert [r["id"] for r in listed.json()["results"]] == ids
    listed = await client.get(f"{base}?ordering=position", headers=headers)
    assert [r["id"] for r in listed.json()["results"]] == ids[::-1]


async def test_bundle_round_trip_patch_put_delete(client, world: World, factory):
    thing = await item(factory, world.event)
    other = await item(factory, world.event, variations=2)
    v1, v2 = await variation_ids(factory, other.id)
    base = url(f"items/{thing.id}/bundles/")
    headers = auth(world.admin)
    body = {
        "bundled_item": other.id,
        "bundled_variation": v1,
        "count": 2,
        "designated_price": "3.50",
    }
    response = await client.post(base, json=body, headers=headers)
    assert response.status_code == 201, response.text
    created = response.json()
    assert created == {"id": created["id"], **body}
    path = f"{base}{created['id']}/"
    assert (await client.get(path, headers=headers)).json() == created
    patched = await client.patch(path, json={"bundled_variation": v2}, headers=headers)
    assert patched.json() == {**created, "bundled_variation": v2}
    plain = await item(factory, world.event)
    # The kept variation is not one of the new item's: the merged state is refused.
    put = await client.put(path, json={"bundled_item": plain.id}, headers=headers)
    assert_errors(put, "bundled_variation")
    body = {"bundled_item": plain.id, "bundled_variation": None}
    put = await client.put(path, json=body, headers=headers)
    assert put.json() == {**created, **body}
    assert (await client.delete(path, headers=headers)).status_code == 204
    assert (await client.get(path, headers=headers)).status_code == 404


async def test_bundle_rules(client, world: World, factory):
    thing = await item(factory, world.event)
    with_vars = await item(factory, world.event, variations=1)
    plain = await item(factory, world.event)
    foreign = await item(factory, world.other_event)
    unrelated = await item(factory, world.event, variations=1)
    (foreign_var,) = await variation_ids(factory, unrelated.id)
    base = url(f"items/{thing.id}/bundles/")
    headers = auth(world.admin)

    async def post(body):
        return await client.post(base, json=body, headers=headers)

    assert_errors(await post({}), "bundled_item")
    assert assert_errors(await post({"bundled_item": foreign.id})) == {
        "bundled_item": [f'Invalid pk "{foreign.id}" - object does not exist.']
    }
    assert_errors(await post({"bundled_item": thing.id}), "non_field_errors")
    assert_errors(await post({"bundled_item": with_vars.id}), "bundled_variation")
    assert_errors(
        await post({"bundled_item": with_vars.id, "bundled_variation": foreign_var}),
        "bundled_variation",
    )
    assert_errors(
        await post({"bundled_item": plain.id, "bundled_variation": foreign_var}),
        "bundled_variation",
    )
    assert_errors(await post({"bundled_item": plain.id, "count": 0}), "count")
    assert_errors(
        await post({"bundled_item": plain.id, "designated_price": "x"}), "designated_price"
    )
    # An item that bundles others cannot itself be bundled.
    assert (await post({"bundled_item": plain.id})).status_code == 201
    response = await client.post(
        url(f"items/{with_vars.id}/bundles/"), json={"bundled_item": thing.id}, headers=headers
    )
    assert_errors(response, "non_field_errors")
