"""Kept list pages (``kit/stamps/pagecache.py``): answered again only while proved unchanged."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from admit.kit.lanes.fastlane import LaneRequest
from admit.kit.stamps.pagecache import Kept, PageCache, cacheable
from admit.models import Event, Item
from tests.catalog_items.helpers import item, url
from tests.factories import World, auth


def _kept(size: int) -> Kept:
    return Kept((), None, 200, (), b"x" * size)


def test_the_cache_keeps_at_most_its_limit_least_recently_used_first() -> None:
    cache = PageCache(1000)
    for n in range(4):
        cache.put(("page", n), _kept(200))
    cache.get(("page", 0))  # used again: the oldest is now page 1
    cache.put(("page", 4), _kept(200))
    cache.put(("page", 5), _kept(200))
    assert set(cache.pages) == {("page", 0), ("page", 2), ("page", 3), ("page", 4), ("page", 5)}
    assert cache.size == 1000
    cache.put(("page", 9), _kept(251))  # more than a quarter of the whole: not kept
    assert ("page", 9) not in cache.pages and cache.size == 1000
    cache.put(("page", 0), _kept(100))  # replaced, not counted twice
    assert cache.size == 900


def _request(query: bytes, *headers: tuple[bytes, bytes]) -> LaneRequest:
    scope = {"query_string": query, "headers": list(headers)}
    return LaneRequest(scope, {}, b"")


def test_only_plain_paging_and_declared_parameters_are_cacheable() -> None:
    assert cacheable(_request(b""), ())
    assert cacheable(_request(b"page=2&page_size=10&ordering=-id"), ())
    assert not cacheable(_request(b"is_future=true"), ())
    assert cacheable(_request(b"page=2&status=p"), ("status",))
    assert not cacheable(_request(b"", (b"if-none-match", b'"x"')), ())
    assert not cacheable(_request(b"", (b"if-modified-since", b"Wed, 1 Jan 2025")), ())


@pytest.fixture
def cache(page_cache: PageCache) -> PageCache:
    return page_cache


async def test_a_repeated_page_comes_from_the_cache_and_every_write_shows_at_once(
    client, world: World, factory, cache: PageCache
) -> None:
    await item(factory, world.event, name={"en": "Ticket"})
    headers = auth(world.admin)
    first = await client.get(url("items/"), headers=headers)
    hits = cache.hits
    again = await client.get(url("items/"), headers=headers)
    assert cache.hits == hits + 1
    assert again.content == first.content
    assert again.headers["last-modified"] == first.headers["last-modified"]
    assert again.headers["content-type"] == "application/json"

    [row] = first.json()["results"]
    patched = await client.patch(
        url(f"items/{row['id']}/"), json={"name": {"en": "Renamed"}}, headers=headers
    )
    assert patched.status_code == 200, patched.text
    after = await client.get(url("items/"), headers=headers)
    assert after.json()["results"][0]["name"] == {"en": "Renamed"}
    assert cache.hits == hits + 1  # proved stale, rendered again

    await item(factory, world.event, name={"en": "Written elsewhere"})  # not through the API
    listed = await client.get(url("items/"), headers=headers)
    assert [r["name"]["en"] for r in listed.json()["results"]] == ["Renamed", "Written elsewhere"]


async def test_a_page_rendered_from_an_older_event_snapshot_is_not_kept(
    client, world: World, factory, cache: PageCache
) -> None:
    """Another worker changes the event while this one still has it in its credential cache
    (its lane renders from that snapshot for up to a second): that page must not be kept
    under the new stamp, or it would be answered after the snapshot expired."""
    await item(factory, world.event)
    headers = auth(world.admin)
    await client.get(url("items/"), headers=headers)
    async with factory.sessionmaker() as session:
        event = await session.scalar(select(Event).where(Event.id == world.event.id))
        event.item_meta_properties = {"colour": "blue"}  # every item shows its default
        await session.commit()
    stale = await client.get(url("items/"), headers=headers)  # the cached snapshot renders
    assert stale.json()["results"][0]["meta_data"] == {}
    client._transport.app.state.credential_cache.clear()  # the snapshot expired
    fresh = await client.get(url("items/"), headers=headers)
    assert fresh.json()["results"][0]["meta_data"] == {"colour": "blue"}


async def test_pages_are_kept_per_credential_and_query(
    client, world: World, factory, cache: PageCache
) -> None:
    await item(factory, world.event)
    for n in range(3):
        await item(factory, world.event, name={"en": f"More {n}"})
    admin, other = auth(world.admin), auth(await factory.admin_token(world.org))
    whole = await client.get(url("items/"), headers=admin)
    paged = await client.get(url("items/?page_size=2&page=2"), headers=admin)
    assert paged.json()["results"] == whole.json()["results"][2:]
    assert paged.json()["previous"] and not paged.json()["next"]
    hits = cache.hits
    assert (await client.get(url("items/"), headers=other)).content == whole.content
    assert cache.hits == hits  # another credential: its own page
    refused = await client.get(url("items/"), headers=auth(world.outsider))
    assert refused.status_code == 403
    assert cache.hits == hits


async def test_filtered_pages_are_not_kept(client, world: World, factory, cache: PageCache) -> None:
    await item(factory, world.event)
    headers = auth(world.admin)
    hits = cache.hits
    for _ in range(3):
        response = await client.get(url("items/?active=true"), headers=headers)
        assert response.status_code == 200
    assert cache.hits == hits
    assert not any(b"active=true" in key for key in cache.pages)
    for _ in range(2):  # the same list unfiltered is kept
        await client.get(url("items/"), headers=headers)
    assert cache.hits == hits + 1


async def _names(client: Any, headers: dict[str, str]) -> list[str]:
    response = await client.get(url("items/"), headers=headers)
    return [r["name"]["en"] for r in response.json()["results"]]


async def test_a_deleted_item_disappears_from_the_kept_page(
    client, world: World, factory, cache: PageCache
) -> None:
    first = await item(factory, world.event, name={"en": "Gone soon"})
    await item(factory, world.event, name={"en": "Stays"})
    headers = auth(world.admin)
    assert await _names(client, headers) == ["Gone soon", "Stays"]
    async with factory.sessionmaker() as session:  # an ORM delete, not through the API
        await session.delete(await session.get(Item, first.id))
        await session.commit()
    assert await _names(client, headers) == ["Stays"]
