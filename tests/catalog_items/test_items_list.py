"""Item list: filters, search, ordering, tenancy."""

from __future__ import annotations

from tests.catalog_items.helpers import assert_errors, category, item, tax_rule, url
from tests.factories import World, auth


async def test_filters_search_and_ordering(client, world: World, factory):
    cat = await category(factory, world.event)
    vat = await tax_rule(factory, world.event, "19.00")
    zero = await tax_rule(factory, world.event, "0.00")
    a = await item(
        factory,
        world.event,
        name={"en": "Early Bird", "de": "Frühbucher"},
        position=3,
        category_id=cat.id,
        tax_rule_id=vat.id,
        admission=True,
    )
    b = await item(
        factory,
        world.event,
        name={"en": "Shirt"},
        internal_name="MERCH-01",
        position=1,
        active=False,
        tax_rule_id=zero.id,
        free_price=True,
    )
    c = await item(factory, world.event, name={"en": "Donation 100%"}, position=1)
    await item(factory, world.other_event, name={"en": "Early Bird"})
    headers = auth(world.admin)

    async def ids(query: str) -> list[int]:
        response = await client.get(url(f"items/{query}"), headers=headers)
        assert response.status_code == 200, response.text
        return [r["id"] for r in response.json()["results"]]

    assert await ids("") == [b.id, c.id, a.id]
    assert await ids("?ordering=id") == [a.id, b.id, c.id]
    assert await ids("?ordering=-position") == [a.id, c.id, b.id]
    assert await ids("?ordering=-id") == [c.id, b.id, a.id]
    assert await ids("?active=false") == [b.id]
    assert await ids("?active=true") == [c.id, a.id]
    assert await ids(f"?category={cat.id}") == [a.id]
    too_big = await client.get(url("items/?category=3000000000"), headers=headers)
    assert too_big.status_code == 400 and list(too_big.json()) == ["category"]
    assert await ids("?admission=true") == [a.id]
    assert await ids("?free_price=true") == [b.id]
    assert await ids("?tax_rate=19") == [a.id]
    assert await ids("?tax_rate=19.00") == [a.id]
    assert await ids("?tax_rate=19.001") == []
    assert await ids("?tax_rate=0") == [b.id, c.id]
    assert await ids("?tax_rate=None") == [b.id, c.id]
    assert await ids("?tax_rate=1e400") == []
    assert await ids("?search=bird") == [a.id]
    assert await ids("?search=FRÜH") == [a.id]
    assert await ids("?search=merch") == [b.id]
    assert await ids("?search=100%25") == [c.id]
    assert await ids("?search=en") == []  # language keys do not match
    assert_errors(await client.get(url("items/?tax_rate=abc"), headers=headers), "tax_rate")
    assert_errors(await client.get(url("items/?category=x"), headers=headers), "category")
    assert_errors(await client.get(url("items/?active=maybe"), headers=headers), "active")
    assert await ids("?ordering=name") == await ids("")  # unknown: ignored, as the reference


async def test_reading_needs_only_event_access(client, world: World, factory):
    thing = await item(factory, world.event)
    response = await client.get(url(f"items/{thing.id}/"), headers=auth(world.nobody))
    assert response.status_code == 200
    response = await client.get(url(f"items/{thing.id}/variations/"), headers=auth(world.nobody))
    assert response.status_code == 200
    for method, path in (
        ("POST", "items/"),
        ("PATCH", f"items/{thing.id}/"),
        ("DELETE", f"items/{thing.id}/"),
        ("POST", f"items/{thing.id}/bundles/"),
    ):
        body = None if method == "DELETE" else {}
        response = await client.request(method, url(path), json=body, headers=auth(world.nobody))
        assert response.status_code == 403, (method, path)
