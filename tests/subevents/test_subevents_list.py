"""Date lists: filters (incl. meta data with defaults), ordering, organizer-wide list, queries."""

from __future__ import annotations

import datetime as dt
from typing import Any

import httpx
import pytest

from tests.factories import Factory, World, auth
from tests.subevents.helpers import item, meta_property, series, subevent, variation

BASE = "/api/v1/organizers/acme/events/tour/subevents/"
ALL = "/api/v1/organizers/acme/subevents/"
NOW = dt.datetime.now(dt.UTC).replace(microsecond=0)
DAY = dt.timedelta(days=1)


async def names(client: httpx.AsyncClient, token: str, url: str = BASE, **params: Any) -> list:
    r = await client.get(url, params=params, headers=auth(token))
    assert r.status_code == 200, r.text
    assert r.json()["count"] == len(r.json()["results"])
    return [s["name"]["en"] for s in r.json()["results"]]


@pytest.fixture
async def dates(factory: Factory, world: World) -> None:
    tour = await series(factory, world.org, "tour", meta_data={"type": "concert"})
    await meta_property(factory, world.org, "type", default="show")
    await meta_property(factory, world.org, "hall")
    await subevent(
        factory,
        tour,
        "past",
        date_from=NOW - 3 * DAY,
        date_to=NOW - 2 * DAY,
        active=True,
        location={"de": "Großer Saal"},
        meta_data={"hall": "big"},
    )
    await subevent(
        factory,
        tour,
        "running",
        date_from=NOW - DAY,
        date_to=NOW + DAY,
        is_public=False,
        meta_data={"type": "talk"},
    )
    await subevent(factory, tour, "future", date_from=NOW + 2 * DAY, meta_data={"type": ""})


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({}, ["past", "running", "future"]),
        ({"active": "true"}, ["past"]),
        ({"active": "false"}, ["running", "future"]),
        ({"is_public": "false"}, ["running"]),
        ({"is_future": "true"}, ["running", "future"]),
        ({"is_future": "false"}, ["past"]),
        ({"is_past": "true"}, ["past"]),
        ({"is_past": "false"}, ["running", "future"]),
        ({"ends_after": (NOW + DAY / 2).isoformat()}, ["running", "future"]),
        ({"date_from_after": NOW.isoformat()}, ["future"]),
        ({"date_from_before": NOW.isoformat()}, ["past", "running"]),
        ({"date_to_after": NOW.isoformat()}, ["running"]),
        ({"date_to_before": NOW.isoformat()}, ["past"]),
        ({"search": "SAAL"}, ["past"]),
        ({"search": "grOß"}, ["past"]),
        ({"search": "de"}, []),
        ({"search": "runn"}, ["running"]),
        # The date's own value, else the event's ("concert"), else the default ("show").
        ({"attr[type]": "concert"}, ["past", "future"]),
        ({"attr[type]": "talk"}, ["running"]),
        ({"attr[type]": "show"}, []),
        ({"attr[type]": ""}, []),
        ({"attr[hall]": "big"}, ["past"]),
        ({"attr[hall]": ""}, ["running", "future"]),
        ({"attr[nope]": ""}, ["past", "running", "future"]),
        ({"attr[nope]": "x"}, []),
        ({"ordering": "-date_from"}, ["future", "running", "past"]),
        ({"ordering": "-id"}, ["future", "running", "past"]),
        ({"ordering": "last_modified"}, ["past", "running", "future"]),
    ],
)
async def test_filters(client: httpx.AsyncClient, world: World, dates, params, expected):
    assert await names(client, world.admin, **params) == expected


async def test_attr_falls_back_to_property_default(
    client: httpx.AsyncClient, world: World, factory: Factory, dates
):
    plain = await series(factory, world.org, "plain")
    await subevent(factory, plain, "bare")
    url = "/api/v1/organizers/acme/events/plain/subevents/"
    assert await names(client, world.admin, url, **{"attr[type]": "show"}) == ["bare"]
    assert await names(client, world.admin, url, **{"attr[type]": ""}) == []
    assert await names(client, world.admin, ALL, **{"attr[type]": "show"}) == ["bare"]
    assert await names(client, world.admin, ALL, **{"attr[type]": "concert"}) == ["past", "future"]


async def test_modified_since(client: httpx.AsyncClient, world: World, factory: Factory, dates):
    first = (await client.get(BASE, headers=auth(world.admin))).json()["results"]
    stamp = max(s["last_modified"] for s in first)
    assert await names(client, world.admin, modified_since=stamp) != []
    later = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")) + dt.timedelta(seconds=1)
    assert await names(client, world.admin, modified_since=later.isoformat()) == []
    before = dt.datetime.now(dt.UTC)
    r = await client.patch(f"{BASE}{first[1]['id']}/", json={}, headers=auth(world.admin))
    assert r.status_code == 200
    assert await names(client, world.admin, modified_since=before.isoformat()) == ["running"]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("active", "maybe"),
        ("date_from_after", "tomorrow"),
        ("modified_since", "x"),
    ],
)
async def test_invalid_filter_is_400(client, world: World, dates, name, value):
    r = await client.get(BASE, params={name: value}, headers=auth(world.admin))
    assert r.status_code == 400
    assert list(r.json()) == [name]


async def test_with_availability_for(client: httpx.AsyncClient, world: World, dates):
    r = await client.get(BASE, params={"with_availability_for": "web"}, headers=auth(world.admin))
    assert all(s["best_availability_state"] is None for s in r.json()["results"])
    r = await client.get(BASE, headers=auth(world.admin))
    assert all("best_availability_state" not in s for s in r.json()["results"])


# -- organizer-wide list ----------------------------------------------------------------------


async def test_organizer_list_honours_limited_teams(
    client: httpx.AsyncClient, world: World, factory: Factory, dates
):
    live = await series(factory, world.org, "live-tour", live=True)
    await subevent(factory, live, "livedate", date_from=NOW + 5 * DAY)
    foreign = await series(factory, world.other, "foreign")
    await subevent(factory, foreign, "foreign-date")

    everything = await names(client, world.admin, ALL)
    assert everything == ["past", "running", "future", "livedate"]
    r = await client.get(ALL, headers=auth(world.admin))
    assert {s["event"] for s in r.json()["results"]} == {"tour", "live-tour"}
    assert await names(client, world.admin, ALL, event__live="true") == ["livedate"]
    assert await names(client, world.admin, ALL, search="live-t") == ["livedate"]
    assert await names(client, world.admin, ALL, active="true") == ["past"]

    limited = await factory.token(await factory.team(world.org, all_events=False, events=[live]))
    assert await names(client, limited, ALL) == ["livedate"]
    none = await factory.token(await factory.team(world.org, all_events=False))
    assert await names(client, none, ALL) == []
    assert await names(client, world.outsider, "/api/v1/organizers/rival/subevents/") == [
        "foreign-date"
    ]


# -- query count ------------------------------------------------------------------------------


async def _fill(factory: Factory, event, n: int) -> None:
    ticket = await item(factory, event)
    red = await variation(factory, ticket)
    for i in range(n):
        await subevent(factory, event, f"d{i}", items=[ticket], variations=[red])


@pytest.mark.parametrize("url", [BASE, ALL])
async def test_lists_take_a_fixed_number_of_queries(
    client: httpx.AsyncClient, world: World, factory: Factory, count_queries, url
):
    tour = await series(factory, world.org, "tour")
    await meta_property(factory, world.org, "type")
    counts = []
    for n in (5, 55):
        await _fill(factory, tour, n)
        with count_queries() as q:
            r = await client.get(url, params={"attr[type]": ""}, headers=auth(world.admin))
        assert r.status_code == 200
        results = r.json()["results"]
        assert results and all(len(s["item_price_overrides"]) == 1 for s in results)
        assert all(len(s["variation_price_overrides"]) == 1 for s in results)
        counts.append(q.count)
    assert counts[0] == counts[1]
    assert len(results) == 50
