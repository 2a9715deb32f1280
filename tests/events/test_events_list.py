"""Events list: envelope, visibility, every filter, ordering and pagination."""

from __future__ import annotations

import datetime as dt
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from admit.events.plugins import SALES_CHANNELS
from tests.factories import Factory, World, auth

EVENTS = "/api/v1/organizers/acme/events/"
NOW = dt.datetime.now(dt.UTC).replace(microsecond=0)
DAY = dt.timedelta(days=1)


def at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text)


async def listing(client: httpx.AsyncClient, token: str, **params: Any) -> httpx.Response:
    return await client.get(EVENTS, params=params, headers=auth(token))


async def slugs(client: httpx.AsyncClient, token: str, **params: Any) -> list[str]:
    r = await listing(client, token, **params)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["count"] == len(body["results"])
    return [e["slug"] for e in body["results"]]


# -- envelope and shape -------------------------------------------------------------------------


async def test_list_envelope(client: httpx.AsyncClient, world: World):
    r = await listing(client, world.admin)
    assert r.status_code == 200
    body = r.json()
    assert set(body) == {"count", "next", "previous", "results"}
    assert body["count"] == 1
    assert body["next"] is None and body["previous"] is None
    assert [e["slug"] for e in body["results"]] == ["summit"]


async def test_list_items_have_no_valid_keys_but_detail_has(
    client: httpx.AsyncClient, world: World
):
    item = (await listing(client, world.admin)).json()["results"][0]
    detail = (await client.get(f"{EVENTS}summit/", headers=auth(world.admin))).json()
    assert "valid_keys" not in item
    assert "best_availability_state" not in item
    assert detail["valid_keys"] == {}
    assert {k: v for k, v in detail.items() if k != "valid_keys"} == item
    assert item["public_url"] == "http://testserver/acme/summit/"
    assert item["sales_channels"] == list(SALES_CHANNELS)


async def test_list_shows_only_the_organizers_events(
    client: httpx.AsyncClient, factory: Factory, world: World
):
    await factory.event(world.other, "other-two")
    assert await slugs(client, world.admin) == ["summit"]
    r = await client.get("/api/v1/organizers/rival/events/", headers=auth(world.outsider))
    assert [e["slug"] for e in r.json()["results"]] == ["expo", "other-two"]


async def test_list_of_limited_team_shows_only_its_events(
    client: httpx.AsyncClient, factory: Factory, world: World
):
    await factory.event(world.org, "alpha")
    beta = await factory.event(world.org, "beta")
    team = await factory.team(world.org, all_events=False, events=[beta])
    token = await factory.token(team)
    assert await slugs(client, token) == ["beta"]
    assert await slugs(client, world.admin) == ["alpha", "beta", "summit"]


# -- boolean filters ----------------------------------------------------------------------------


@pytest.fixture
async def flagged(factory: Factory, world: World) -> None:
    await factory.event(world.org, "hidden", is_public=False)
    await factory.event(world.org, "onair", live=True)
    await factory.event(world.org, "trial", testmode=True)
    await factory.event(world.org, "tour", has_subevents=True)


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("is_public", "true", ["onair", "summit", "tour", "trial"]),
        ("is_public", "false", ["hidden"]),
        ("live", "true", ["onair"]),
        ("live", "false", ["hidden", "summit", "tour", "trial"]),
        ("testmode", "true", ["trial"]),
        ("testmode", "False", ["hidden", "onair", "summit", "tour"]),
        ("has_subevents", "true", ["tour"]),
        ("has_subevents", "0", ["hidden", "onair", "summit", "trial"]),
    ],
)
async def test_boolean_filters(
    client: httpx.AsyncClient, world: World, flagged: None, name: str, value: str, expected: list
):
    assert await slugs(client, world.admin, **{name: value}) == expected


async def test_boolean_filters_combine(client: httpx.AsyncClient, world: World, flagged: None):
    assert await slugs(client, world.admin, live="false", is_public="true", testmode="false") == [
        "summit",
        "tour",
    ]


async def test_empty_boolean_filter_is_ignored(
    client: httpx.AsyncClient, world: World, flagged: None
):
    assert len(await slugs(client, world.admin, live="")) == 5


# -- time filters -------------------------------------------------------------------------------


@pytest.fixture
async def timeline(factory: Factory, world: World) -> None:
    # summit: 2030-05-01 10:00 UTC, no end -> future
    await factory.event(world.org, "done", date_from=NOW - 10 * DAY, date_to=NOW - 9 * DAY)
    await factory.event(world.org, "started", date_from=NOW - 5 * DAY)  # no end -> past
    await factory.event(world.org, "running", date_from=NOW - DAY, date_to=NOW + DAY)
    await factory.event(world.org, "soon", date_from=NOW + 2 * DAY, date_to=NOW + 3 * DAY)
    await factory.event(world.org, "series-new", date_from=NOW + 30 * DAY, has_subevents=True)
    await factory.event(
        world.org,
        "series-old",
        date_from=NOW - 30 * DAY,
        date_to=NOW - 20 * DAY,
        has_subevents=True,
    )


async def test_is_future(client: httpx.AsyncClient, world: World, timeline: None):
    assert await slugs(client, world.admin, is_future="true") == ["running", "soon", "summit"]


async def test_is_future_false_includes_series_and_events_without_end(
    client: httpx.AsyncClient, world: World, timeline: None
):
    assert await slugs(client, world.admin, is_future="false") == [
        "done",
        "series-new",
        "series-old",
        "started",
    ]


async def test_is_past(client: httpx.AsyncClient, world: World, timeline: None):
    assert await slugs(client, world.admin, is_past="true") == ["done", "started"]


async def test_is_past_false_includes_series_and_events_without_end(
    client: httpx.AsyncClient, world: World, timeline: None
):
    assert await slugs(client, world.admin, is_past="false") == [
        "running",
        "series-new",
        "series-old",
        "soon",
        "summit",
    ]


async def test_is_future_and_is_past_partition_single_events(
    client: httpx.AsyncClient, world: World, timeline: None
):
    everything = set(await slugs(client, world.admin))
    future = set(await slugs(client, world.admin, is_future="true"))
    not_future = set(await slugs(client, world.admin, is_future="false"))
    past = set(await slugs(client, world.admin, is_past="true"))
    not_past = set(await slugs(client, world.admin, is_past="false"))
    assert future | not_future == everything and not future & not_future
    assert past | not_past == everything and not past & not_past
    assert not future & past


async def test_ends_after(client: httpx.AsyncClient, world: World, timeline: None):
    assert await slugs(client, world.admin, ends_after=NOW.isoformat()) == [
        "running",
        "soon",
        "summit",
    ]
    # An event without an end counts as ending when it starts; series never match.
    value = (NOW - 6 * DAY).isoformat()
    assert await slugs(client, world.admin, ends_after=value) == [
        "running",
        "soon",
        "started",
        "summit",
    ]


async def test_ends_after_is_inclusive(client: httpx.AsyncClient, world: World, timeline: None):
    value = (NOW + 3 * DAY).isoformat()
    assert await slugs(client, world.admin, ends_after=value) == ["soon", "summit"]


@pytest.fixture
async def dated(factory: Factory, world: World) -> None:
    # summit: 2030-05-01T10:00Z, no end
    await factory.event(
        world.org, "jan", date_from=at("2031-01-01T10:00Z"), date_to=at("2031-01-02T10:00Z")
    )
    await factory.event(world.org, "feb", date_from=at("2031-02-01T10:00Z"))
    await factory.event(
        world.org, "mar", date_from=at("2031-03-01T10:00Z"), date_to=at("2031-03-05T10:00Z")
    )


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("date_from_after", "2031-02-01T10:00:00Z", ["feb", "mar"]),
        ("date_from_after", "2031-02-01T10:00:01Z", ["mar"]),
        ("date_from_after", "2031-02-01T11:00:00+01:00", ["feb", "mar"]),
        ("date_from_before", "2031-02-01T10:00:00Z", ["feb", "jan", "summit"]),
        ("date_from_before", "2031-02-01T09:59:59Z", ["jan", "summit"]),
        ("date_from_before", "2031-02-01T09:00:00-01:00", ["feb", "jan", "summit"]),
        ("date_to_after", "2031-01-02T10:00:00Z", ["jan", "mar"]),
        ("date_to_after", "2031-01-02T10:00:01Z", ["mar"]),
        ("date_to_before", "2031-01-02T10:00:00Z", ["jan"]),
        ("date_to_before", "2031-12-31T00:00:00Z", ["jan", "mar"]),
        ("date_to_before", "2030-01-01T00:00:00Z", []),
    ],
)
async def test_date_filters_are_inclusive(
    client: httpx.AsyncClient, world: World, dated: None, name: str, value: str, expected: list
):
    assert await slugs(client, world.admin, **{name: value}) == expected


async def test_date_filters_combine_to_a_range(
    client: httpx.AsyncClient, world: World, dated: None
):
    got = await slugs(
        client,
        world.admin,
        date_from_after="2031-01-01T10:00:00Z",
        date_from_before="2031-02-01T10:00:00Z",
    )
    assert got == ["feb", "jan"]


async def test_date_filter_with_unencoded_plus_offset(
    client: httpx.AsyncClient, world: World, dated: None
):
    # A client that forgets to escape "+" sends a space; the offset is still understood.
    r = await client.get(
        f"{EVENTS}?date_from_after=2031-02-01T11:00:00+01:00", headers=auth(world.admin)
    )
    assert r.status_code == 200
    assert [e["slug"] for e in r.json()["results"]] == ["feb", "mar"]


async def test_date_filter_without_offset_is_utc(
    client: httpx.AsyncClient, world: World, dated: None
):
    assert await slugs(client, world.admin, date_from_after="2031-02-01T10:00:00") == [
        "feb",
        "mar",
    ]


# -- sales channels and availability ------------------------------------------------------------


@pytest.fixture
async def channels(factory: Factory, world: World) -> None:
    await factory.event(
        world.org, "boxonly", all_sales_channels=False, limit_sales_channels=["box_office"]
    )
    await factory.event(
        world.org, "webapi", all_sales_channels=False, limit_sales_channels=["web", "api"]
    )
    await factory.event(world.org, "nowhere", all_sales_channels=False, limit_sales_channels=[])


@pytest.mark.parametrize(
    ("channel", "expected"),
    [
        ("web", ["summit", "webapi"]),
        ("api", ["summit", "webapi"]),
        ("box_office", ["boxonly", "summit"]),
        ("resellers", ["summit"]),
    ],
)
async def test_sales_channel_filter(
    client: httpx.AsyncClient, world: World, channels: None, channel: str, expected: list
):
    assert await slugs(client, world.admin, sales_channel=channel) == expected


async def test_deprecated_sales_channels_field_in_list(
    client: httpx.AsyncClient, world: World, channels: None
):
    results = (await listing(client, world.admin)).json()["results"]
    by_slug = {e["slug"]: e["sales_channels"] for e in results}
    assert by_slug == {
        "boxonly": ["box_office"],
        "nowhere": [],
        "summit": list(SALES_CHANNELS),
        "webapi": ["web", "api"],
    }


async def test_with_availability_for_adds_best_availability_state(
    client: httpx.AsyncClient, world: World, channels: None
):
    r = await listing(client, world.admin, with_availability_for="web")
    assert r.status_code == 200
    results = r.json()["results"]
    assert len(results) == 4
    assert all("best_availability_state" in e for e in results)
    assert all(e["best_availability_state"] is None for e in results)
    plain = (await listing(client, world.admin)).json()["results"]
    assert all("best_availability_state" not in e for e in plain)


# -- search -------------------------------------------------------------------------------------


@pytest.fixture
async def searchable(factory: Factory, world: World) -> None:
    await factory.event(
        world.org,
        "jazz-night",
        name={"en": "Jazz Night", "de": "Jazznacht"},
        location={"en": "Blue Note Club"},
    )
    await factory.event(
        world.org, "bierfest", name={"de": "Münchner Bierfest"}, location={"de": "Theresienwiese"}
    )
    await factory.event(world.org, "tokyo", name={"ja": "東京ライブ", "en": "Tokyo Live"})
    await factory.event(world.org, "odd", name={"en": "100% _real_ deal"})


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        ("jazz", ["jazz-night"]),
        ("JAZZ NIGHT", ["jazz-night"]),
        ("jazznacht", ["jazz-night"]),
        ("blue note", ["jazz-night"]),
        ("THERESIEN", ["bierfest"]),
        ("bierf", ["bierfest"]),
        ("summ", ["summit"]),
        ("münchner", ["bierfest"]),
        ("MÜNCHNER", ["bierfest"]),
        ("東京", ["tokyo"]),
        ("100%", ["odd"]),
        ("_real_", ["odd"]),
        ("%", ["odd"]),
        ("nothing-like-this", []),
    ],
)
async def test_search(
    client: httpx.AsyncClient, world: World, searchable: None, term: str, expected: list
):
    assert await slugs(client, world.admin, search=term) == expected


@pytest.mark.parametrize("term", ['"', ":", "{", "}", '"en"', 'de":', '"ja', "null"])
async def test_search_does_not_match_json_syntax(
    client: httpx.AsyncClient, world: World, searchable: None, term: str
):
    assert await slugs(client, world.admin, search=term) == []


async def test_search_does_not_match_language_codes(client: httpx.AsyncClient, world: World):
    # summit is {"en": "Summit"} without a location: "en" is a key, not text.
    assert await slugs(client, world.admin, search="en") == []
    assert await slugs(client, world.admin, search="mit") == ["summit"]


async def test_search_finds_lowercase_non_ascii_text_in_any_case(
    client: httpx.AsyncClient, factory: Factory, world: World
):
    await factory.event(world.org, "eco", name={"de": "bio öko markt"}, location={"de": "saal"})
    assert await slugs(client, world.admin, search="öko") == ["eco"]
    assert await slugs(client, world.admin, search="BIO ÖKO") == ["eco"]


async def test_search_finds_uppercase_non_ascii_text(
    client: httpx.AsyncClient, factory: Factory, world: World, clean_app: Any
):
    await factory.event(world.org, "eco", name={"de": "Öko Markt"}, location={"de": "Großer Saal"})
    got = [
        await slugs(client, world.admin, search="Öko"),
        await slugs(client, world.admin, search="öko"),
        await slugs(client, world.admin, search="großer"),
    ]
    assert got == [["eco"]] * 3


async def test_empty_search_matches_everything(
    client: httpx.AsyncClient, world: World, searchable: None
):
    assert len(await slugs(client, world.admin, search="")) == 5


# -- meta data ----------------------------------------------------------------------------------


@pytest.fixture
async def tagged(factory: Factory, world: World) -> None:
    await factory.event(world.org, "conf", meta_data={"type": "conference", "region": "north"})
    await factory.event(world.org, "fest", meta_data={"type": "festival", "region": "north"})
    await factory.event(world.org, "blank", meta_data={"type": ""})
    await factory.event(world.org, "dotted", meta_data={"a.b": "x", "my key": "spaced"})


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"attr[type]": "conference"}, ["conf"]),
        ({"attr[type]": "festival"}, ["fest"]),
        ({"attr[type]": "Conference"}, []),
        ({"attr[region]": "north"}, ["conf", "fest"]),
        ({"attr[region]": "north", "attr[type]": "festival"}, ["fest"]),
        ({"attr[type]": ""}, ["blank", "dotted", "summit"]),
        ({"attr[region]": ""}, ["blank", "dotted", "summit"]),
        ({"attr[unknown]": "x"}, []),
        ({"attr[unknown]": ""}, ["blank", "conf", "dotted", "fest", "summit"]),
        ({"attr[a.b]": "x"}, ["dotted"]),
        ({"attr[my key]": "spaced"}, ["dotted"]),
    ],
)
async def test_meta_data_filter(
    client: httpx.AsyncClient, world: World, tagged: None, params: dict, expected: list
):
    assert await slugs(client, world.admin, **params) == expected


async def test_meta_data_key_with_quote_is_not_an_error(
    client: httpx.AsyncClient, world: World, tagged: None
):
    assert await slugs(client, world.admin, **{'attr[a"b]': "x"}) == []


# -- invalid filter values ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("live", "maybe"),
        ("is_public", "2"),
        ("testmode", "yes please"),
        ("has_subevents", "x"),
        ("is_future", "soon"),
        ("is_past", "never"),
        ("date_from_after", "garbage"),
        ("date_from_before", "2031-13-01"),
        ("date_to_after", "tomorrow"),
        ("date_to_before", "31/12/2031"),
        ("ends_after", "later"),
        ("sales_channel", "carrier-pigeon"),
        ("with_availability_for", "nope"),
    ],
)
async def test_invalid_filter_value_is_400_keyed_by_parameter(
    client: httpx.AsyncClient, world: World, name: str, value: str
):
    r = await listing(client, world.admin, **{name: value})
    assert r.status_code == 400
    body = r.json()
    assert list(body) == [name]
    assert isinstance(body[name][0], str) and body[name][0]


async def test_several_invalid_filters_are_reported_together(
    client: httpx.AsyncClient, world: World
):
    r = await listing(client, world.admin, live="maybe", date_from_after="garbage")
    assert r.status_code == 400
    assert set(r.json()) == {"live", "date_from_after"}


async def test_unknown_query_parameters_are_ignored(client: httpx.AsyncClient, world: World):
    assert await slugs(client, world.admin, colour="green") == ["summit"]


# -- ordering -----------------------------------------------------------------------------------


@pytest.fixture
async def ordered(factory: Factory, world: World) -> None:
    # summit: 2030-05-01
    await factory.event(world.org, "b-late", date_from=at("2032-01-01T00:00Z"))
    await factory.event(world.org, "a-mid", date_from=at("2031-01-01T00:00Z"))
    await factory.event(world.org, "c-early", date_from=at("2029-01-01T00:00Z"))
    await factory.event(world.org, "d-tie", date_from=at("2031-01-01T00:00Z"))


async def test_default_ordering_is_slug(client: httpx.AsyncClient, world: World, ordered: None):
    assert await slugs(client, world.admin) == ["a-mid", "b-late", "c-early", "d-tie", "summit"]


@pytest.mark.parametrize(
    ("ordering", "expected"),
    [
        ("slug", ["a-mid", "b-late", "c-early", "d-tie", "summit"]),
        ("-slug", ["summit", "d-tie", "c-early", "b-late", "a-mid"]),
        ("date_from", ["c-early", "summit", "a-mid", "d-tie", "b-late"]),
        ("-date_from", ["b-late", "d-tie", "a-mid", "summit", "c-early"]),
        ("date_from,-slug", ["c-early", "summit", "d-tie", "a-mid", "b-late"]),
    ],
)
async def test_ordering(
    client: httpx.AsyncClient, world: World, ordered: None, ordering: str, expected: list
):
    assert await slugs(client, world.admin, ordering=ordering) == expected


@pytest.mark.parametrize("ordering", ["name", "-id_", "random()"])
async def test_unknown_ordering_is_ignored(
    client: httpx.AsyncClient, world: World, ordered: None, ordering: str
):
    assert await slugs(client, world.admin, ordering=ordering) == await slugs(client, world.admin)


async def test_unknown_names_in_an_ordering_are_dropped(
    client: httpx.AsyncClient, world: World, ordered: None
):
    expected = await slugs(client, world.admin, ordering="-slug")
    assert await slugs(client, world.admin, ordering="bogus,-slug,random()") == expected


# -- pagination ---------------------------------------------------------------------------------


@pytest.fixture
async def many(factory: Factory, world: World) -> list[str]:
    created = ["summit"]
    for i in range(119):
        await factory.event(
            world.org,
            f"e{i:03d}",
            is_public=i % 2 == 0,
            date_from=at("2031-01-01T00:00Z") + i * DAY,
        )
        created.append(f"e{i:03d}")
    return sorted(created)


def query_of(url: str) -> dict[str, list[str]]:
    parts = urlsplit(url)
    assert f"{parts.scheme}://{parts.netloc}" == "http://testserver"
    assert parts.path == EVENTS
    return parse_qs(parts.query)


async def test_pagination_walks_three_pages(
    client: httpx.AsyncClient, world: World, many: list[str]
):
    r = await listing(client, world.admin)
    first = r.json()
    assert first["count"] == 120
    assert len(first["results"]) == 50
    assert first["previous"] is None
    assert query_of(first["next"]) == {"page": ["2"]}

    second = (await client.get(first["next"], headers=auth(world.admin))).json()
    assert second["count"] == 120
    assert len(second["results"]) == 50
    assert query_of(second["previous"]) == {}
    assert query_of(second["next"]) == {"page": ["3"]}

    third = (await client.get(second["next"], headers=auth(world.admin))).json()
    assert len(third["results"]) == 20
    assert third["next"] is None
    assert query_of(third["previous"]) == {"page": ["2"]}

    seen = [e["slug"] for page in (first, second, third) for e in page["results"]]
    assert seen == many


async def test_pagination_links_keep_other_parameters(
    client: httpx.AsyncClient, world: World, many: list[str]
):
    params = {"ordering": "-date_from", "date_from_after": "2031-01-01T00:00:00+00:00"}
    first = (await listing(client, world.admin, **params)).json()
    assert first["count"] == 119
    nxt = query_of(first["next"])
    assert nxt == {
        "ordering": ["-date_from"],
        "date_from_after": ["2031-01-01T00:00:00+00:00"],
        "page": ["2"],
    }
    second = (await client.get(first["next"], headers=auth(world.admin))).json()
    assert query_of(second["previous"]) == {k: [v] for k, v in params.items()}
    third = (await client.get(second["next"], headers=auth(world.admin))).json()
    assert len(third["results"]) == 19
    seen = [e["slug"] for page in (first, second, third) for e in page["results"]]
    assert seen == [f"e{i:03d}" for i in reversed(range(119))]


async def test_pagination_with_filter_count(
    client: httpx.AsyncClient, world: World, many: list[str]
):
    body = (await listing(client, world.admin, is_public="false")).json()
    assert body["count"] == 59
    assert len(body["results"]) == 50
    assert query_of(body["next"]) == {"is_public": ["false"], "page": ["2"]}


async def test_smaller_page_size(client: httpx.AsyncClient, world: World, many: list[str]):
    body = (await listing(client, world.admin, page_size=7, page=2)).json()
    assert body["count"] == 120
    assert [e["slug"] for e in body["results"]] == many[7:14]
    assert query_of(body["next"]) == {"page_size": ["7"], "page": ["3"]}
    assert query_of(body["previous"]) == {"page_size": ["7"]}
    last = (await listing(client, world.admin, page_size=7, page=18)).json()
    assert len(last["results"]) == 1 and last["next"] is None


async def test_larger_page_size_is_capped(client: httpx.AsyncClient, world: World, many: list[str]):
    body = (await listing(client, world.admin, page_size=500)).json()
    assert len(body["results"]) == 50
    assert body["next"] is not None


@pytest.mark.parametrize("page", ["4", "100", "0", "-1", "abc", "1.5", ""])
async def test_invalid_page_is_404(
    client: httpx.AsyncClient, world: World, many: list[str], page: str
):
    r = await listing(client, world.admin, page=page)
    assert r.status_code == 404
    assert r.json() == {"detail": "Invalid page."}


async def test_page_one_of_an_empty_result_is_fine(client: httpx.AsyncClient, world: World):
    body = (await listing(client, world.admin, search="no-such-event", page=1)).json()
    assert body == {"count": 0, "next": None, "previous": None, "results": []}
    r = await listing(client, world.admin, search="no-such-event", page=2)
    assert r.status_code == 404


async def test_search_over_events_created_through_the_api(client: httpx.AsyncClient, world: World):
    # An event created without a location stores it as null; the search must cope with it.
    for slug, location in (("nowhere", None), ("somewhere", "Harbour Hall")):
        body = {"name": slug.title(), "slug": slug, "date_from": "2031-06-01T10:00:00Z"}
        if location:
            body["location"] = location
        r = await client.post(EVENTS, json=body, headers=auth(world.admin))
        assert r.status_code == 201
    assert await slugs(client, world.admin, search="harbour") == ["somewhere"]
    assert await slugs(client, world.admin, search="where") == ["nowhere", "somewhere"]
    assert await slugs(client, world.admin, search="null") == []
