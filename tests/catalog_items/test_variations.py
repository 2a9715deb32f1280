"""Variations under an item: round trip, PATCH/PUT, rules, filters, ordering, deletes."""

from __future__ import annotations

from sqlalchemy import update

from admit.models import Event
from tests.catalog_items.helpers import assert_errors, item, url
from tests.factories import World, auth

FULL = {
    "value": {"en": "Student", "de": "Student"},
    "default_price": "9.00",
    "active": False,
    "description": {"en": "With ID"},
    "position": 4,
    "original_price": "12.00",
    "free_price_suggestion": "10.00",
    "require_approval": True,
    "checkin_attention": True,
    "checkin_text": "Check the card",
    "available_from": "2030-01-01T00:00:00Z",
    "available_until": "2030-01-02T00:00:00Z",
    "hide_without_voucher": True,
    "all_sales_channels": False,
    "limit_sales_channels": ["api"],
    "meta_data": {"size": "S"},
}


async def _item(factory, world: World, variations: int = 1, **kw):
    async with factory.sessionmaker() as session:
        await session.execute(
            update(Event)
            .where(Event.id == world.event.id)
            .values(item_meta_properties={"size": "M", "color": "blue"})
        )
        await session.commit()
    return await item(factory, world.event, variations=variations, **kw)


async def test_round_trip(client, world: World, factory):
    thing = await _item(factory, world, default_price=20, meta_data={"color": "red"})
    base = url(f"items/{thing.id}/variations/")
    response = await client.post(base, json=FULL, headers=auth(world.admin))
    assert response.status_code == 201, response.text
    created = response.json()
    expected = {
        **FULL,
        "id": created["id"],
        "price": "9.00",
        "sales_channels": ["api"],
        "meta_data": {"color": "red", "size": "S"},  # the item's values are inherited
    }
    assert created == expected
    got = await client.get(f"{base}{created['id']}/", headers=auth(world.admin))
    assert got.json() == expected
    listed = await client.get(url(f"items/{thing.id}/"), headers=auth(world.admin))
    assert expected in listed.json()["variations"]


async def test_price_falls_back_to_item_price(client, world: World, factory):
    thing = await _item(factory, world, default_price=20)
    base = url(f"items/{thing.id}/variations/")
    response = await client.post(base, json={"value": "Plain"}, headers=auth(world.admin))
    body = response.json()
    assert body["default_price"] is None
    assert body["price"] == "20.00"
    assert body["active"] is True
    assert body["all_sales_channels"] is True
    assert body["meta_data"] == {"color": "blue", "size": "M"}


async def test_patch_and_put(client, world: World, factory):
    thing = await _item(factory, world)
    base = url(f"items/{thing.id}/variations/")
    headers = auth(world.admin)
    created = (await client.post(base, json=FULL, headers=headers)).json()
    path = f"{base}{created['id']}/"
    patched = await client.patch(path, json={"position": 9}, headers=headers)
    assert patched.status_code == 200
    assert patched.json() == {**created, "position": 9}
    # PUT with the required field alone keeps the others (prices and meta data included).
    put = await client.put(path, json={"value": "Only"}, headers=headers)
    assert put.status_code == 200
    assert put.json() == {**created, "position": 9, "value": {"en": "Only"}}
    assert (await client.get(path, headers=headers)).json() == put.json()
    assert_errors(await client.put(path, json={"position": 1}, headers=headers), "value")
    assert_errors(await client.patch(path, json={"value": {}}, headers=headers), "value")


async def test_validation(client, world: World, factory):
    thing = await _item(factory, world)
    base = url(f"items/{thing.id}/variations/")
    headers = auth(world.admin)
    assert_errors(await client.post(base, json={}, headers=headers), "value")
    assert_errors(
        await client.post(base, json={"value": "x", "default_price": "x"}, headers=headers),
        "default_price",
    )
    assert_errors(
        await client.post(base, json={"value": "x", "meta_data": {"nope": "1"}}, headers=headers),
        "meta_data",
    )
    assert_errors(
        await client.post(
            base, json={"value": "x", "limit_sales_channels": ["tv"]}, headers=headers
        ),
        "limit_sales_channels",
    )
    window = {
        "value": "x",
        "available_from": "2030-01-02T00:00:00Z",
        "available_until": "2030-01-01T00:00:00Z",
    }
    assert_errors(await client.post(base, json=window, headers=headers), "non_field_errors")


async def test_item_without_variations_cannot_get_one(client, world: World, factory):
    thing = await _item(factory, world, variations=0)
    response = await client.post(
        url(f"items/{thing.id}/variations/"), json={"value": "x"}, headers=auth(world.admin)
    )
    assert response.status_code == 403
    assert "does not have variations" in response.json()["detail"]


async def test_last_variation_cannot_be_deleted(client, world: World, factory):
    thing = await _item(factory, world, variations=2)
    base = url(f"items/{thing.id}/variations/")
    headers = auth(world.admin)
    ids = [v["id"] for v in (await client.get(base, headers=headers)).json()["results"]]
    assert (await client.delete(f"{base}{ids[0]}/", headers=headers)).status_code == 204
    assert (await client.get(f"{base}{ids[0]}/", headers=headers)).status_code == 404
    response = await client.delete(f"{base}{ids[1]}/", headers=headers)
    assert response.status_code == 403
    assert "only variation" in response.json()["detail"]
    assert (await client.get(f"{base}{ids[1]}/", headers=headers)).status_code == 200


async def test_unknown_or_foreign_item_is_404(client, world: World, factory):
    foreign = await item(factory, world.other_event, variations=1)
    headers = auth(world.admin)
    for item_id in ("999999", str(foreign.id), "abc"):
        for path in ("variations/", "addons/", "bundles/", "variations/1/"):
            response = await client.get(url(f"items/{item_id}/{path}"), headers=headers)
            assert response.status_code == 404, (item_id, path)
            assert response.json() == {"detail": "Not found."}
        response = await client.post(
            url(f"items/{item_id}/variations/"), json={"value": "x"}, headers=headers
        )
        assert response.status_code == 404


async def test_variation_of_another_item_is_404(client, world: World, factory):
    first = await _item(factory, world, variations=1)
    second = await _item(factory, world, variations=1)
    headers = auth(world.admin)
    listed = await client.get(url(f"items/{first.id}/variations/"), headers=headers)
    var_id = listed.json()["results"][0]["id"]
    response = await client.get(url(f"items/{second.id}/variations/{var_id}/"), headers=headers)
    assert response.status_code == 404


async def test_filters_and_ordering(client, world: World, factory):
    thing = await _item(factory, world, variations=0)
    base = url(f"items/{thing.id}/variations/")
    headers = auth(world.admin)
    from tests.catalog_items.helpers import variation_ids

    async with factory.sessionmaker() as session:
        from admit.models import ItemVariation

        session.add_all(
            [
                ItemVariation(item_id=thing.id, value={"en": "Red", "de": "Rot"}, position=2),
                ItemVariation(item_id=thing.id, value={"en": "Blue"}, position=1, active=False),
                ItemVariation(item_id=thing.id, value={"en": "Green"}, position=1),
            ]
        )
        await session.commit()
    red, blue, green = await variation_ids(factory, thing.id)

    async def ids(query: str) -> list[int]:
        response = await client.get(f"{base}{query}", headers=headers)
        assert response.status_code == 200, response.text
        return [r["id"] for r in response.json()["results"]]

    assert await ids("") == [red, blue, green]
    assert await ids("?ordering=position") == [blue, green, red]
    assert await ids("?ordering=-id") == [green, blue, red]
    assert await ids("?active=false") == [blue]
    assert await ids("?search=ROT") == [red]
    assert await ids("?search=e") == [red, blue, green]
