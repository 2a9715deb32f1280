"""Lists load what they render in a fixed number of queries, whatever the page size."""

from __future__ import annotations

from tests.catalog_items.helpers import bulk_items, url
from tests.factories import World, auth


async def test_item_list_query_count_does_not_grow_with_the_page(
    client, world: World, factory, count_queries
):
    await bulk_items(factory, world.event, count=500, variations=3)
    headers = auth(world.admin)
    await client.get(url("items/"), headers=headers)  # warm the credential cache
    counts = {}
    for size in (5, 50):
        for page in (1, 3):
            with count_queries() as q:
                response = await client.get(
                    url(f"items/?page_size={size}&page={page}"), headers=headers
                )
            assert response.status_code == 200, response.text
            body = response.json()
            assert body["count"] == 500
            assert len(body["results"]) == size
            assert all(len(r["variations"]) == 3 for r in body["results"])
            counts[(size, page)] = q.count
    assert len(set(counts.values())) == 1, counts


async def test_category_list_query_count_is_fixed(client, world: World, count_queries):
    headers = auth(world.admin)
    counts = []
    for n in range(1, 12, 5):
        for _ in range(5):
            await client.post(url("categories/"), json={"name": f"C{n}"}, headers=headers)
        with count_queries() as q:
            response = await client.get(url("categories/"), headers=headers)
        assert response.status_code == 200
        counts.append(q.count)
    assert len(set(counts)) == 1, counts
