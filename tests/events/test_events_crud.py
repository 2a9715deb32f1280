"""Events: create, detail, PUT / PATCH and delete, field by field."""

from __future__ import annotations

import datetime as dt
from typing import Any

import httpx
import pytest

from admit.auth.permissions import EVENT_PERMISSIONS
from admit.events.plugins import SALES_CHANNELS
from tests.factories import Factory, World, auth
from tests.subevents.helpers import meta_property

EVENTS = "/api/v1/organizers/acme/events/"
SUMMIT = "/api/v1/organizers/acme/events/summit/"

FULL: dict[str, Any] = {
    "name": {"en": "Spring Conference", "de": "Frühjahrskonferenz"},
    "slug": "spring-2031",
    "live": False,
    "testmode": True,
    "currency": "USD",
    "date_from": "2031-04-01T09:00:00+02:00",
    "date_to": "2031-04-03T18:00:00+02:00",
    "date_admission": "2031-04-01T08:00:00+02:00",
    "is_public": False,
    "presale_start": "2031-01-01T00:00:00Z",
    "presale_end": "2031-03-31T23:59:00Z",
    "location": {"en": "Town hall, Springfield", "de": "Rathaus"},
    "geo_lat": 52.5125,
    "geo_lon": -13.25,
    "has_subevents": False,
    "meta_data": {"type": "conference", "region": "north"},
    "plugins": ["sendmail", "banktransfer"],
    "seating_plan": None,
    "seat_category_mapping": {},
    "timezone": "Europe/Berlin",
    "item_meta_properties": {"color": "blue"},
    "all_sales_channels": False,
    "limit_sales_channels": ["web", "box_office"],
}
DATETIME_FIELDS = ("date_from", "date_to", "date_admission", "presale_start", "presale_end")

DEFAULTS: dict[str, Any] = {
    "live": False,
    "testmode": False,
    "currency": "EUR",
    "date_to": None,
    "date_admission": None,
    "is_public": True,
    "presale_start": None,
    "presale_end": None,
    "location": None,
    "geo_lat": None,
    "geo_lon": None,
    "has_subevents": False,
    "meta_data": {},
    "plugins": [],
    "seating_plan": None,
    "seat_category_mapping": {},
    "timezone": "UTC",
    "item_meta_properties": {},
    "all_sales_channels": True,
    "limit_sales_channels": [],
}


@pytest.fixture
async def meta_properties(factory: Factory, world: World) -> None:
    # Event meta_data keys must be properties of the organizer (validated since they exist).
    for name in ("type", "region"):
        await meta_property(factory, world.org, name)


def instant(value: str | None) -> dt.datetime | None:
    return None if value is None else dt.datetime.fromisoformat(value.replace("Z", "+00:00"))


def minimal(slug: str = "fresh", **extra: Any) -> dict[str, Any]:
    return {"name": {"en": "Fresh"}, "slug": slug, "date_from": "2031-06-01T10:00:00Z", **extra}


def assert_matches(body: dict[str, Any], sent: dict[str, Any]) -> None:
    for key, value in sent.items():
        if key in DATETIME_FIELDS:
            assert instant(body[key]) == instant(value), key
            assert body[key] is None or instant(body[key]).utcoffset() is not None, key
        else:
            assert body[key] == value, key


async def create(client: httpx.AsyncClient, token: str, body: dict[str, Any]) -> httpx.Response:
    return await client.post(EVENTS, json=body, headers=auth(token))


# -- create -----------------------------------------------------------------------------------


@pytest.mark.usefixtures("meta_properties")
async def test_create_round_trips_every_field(client: httpx.AsyncClient, world: World):
    r = await create(client, world.admin, FULL)
    assert r.status_code == 201, r.text
    created = r.json()
    assert_matches(created, FULL)

    r = await client.get(f"{EVENTS}spring-2031/", headers=auth(world.admin))
    assert r.status_code == 200
    body = r.json()
    assert_matches(body, FULL)
    assert body == created
    assert body["public_url"] == "http://testserver/acme/spring-2031/"
    assert body["sales_channels"] == ["web", "box_office"]
    assert body["valid_keys"] == {}
    assert "best_availability_state" not in body
    # Stored in UTC: the answer to the POST and the GET render the same instants the same way.
    assert body["date_from"] == "2031-04-01T07:00:00Z"
    expected_keys = set(FULL) | {"public_url", "sales_channels", "valid_keys"}
    assert set(body) == expected_keys


async def test_create_datetimes_are_rendered_with_an_offset(
    client: httpx.AsyncClient, world: World
):
    r = await create(client, world.admin, minimal(date_from="2031-06-01T10:00:00+02:00"))
    assert r.status_code == 201
    value = r.json()["date_from"]
    assert instant(value) == dt.datetime(2031, 6, 1, 8, tzinfo=dt.UTC)
    assert value.endswith(("Z", "+00:00"))


async def test_create_naive_datetime_is_taken_as_utc(client: httpx.AsyncClient, world: World):
    r = await create(client, world.admin, minimal(date_from="2031-06-01T10:00:00"))
    assert r.status_code == 201
    assert instant(r.json()["date_from"]) == dt.datetime(2031, 6, 1, 10, tzinfo=dt.UTC)


async def test_create_defaults_when_optional_fields_are_omitted(
    client: httpx.AsyncClient, world: World
):
    r = await create(client, world.admin, minimal())
    assert r.status_code == 201, r.text
    body = r.json()
    for key, value in DEFAULTS.items():
        assert body[key] == value, key
    assert body["name"] == {"en": "Fresh"}
    assert body["sales_channels"] == list(SALES_CHANNELS)
    assert body["public_url"] == "http://testserver/acme/fresh/"
    detail = (await client.get(f"{EVENTS}fresh/", headers=auth(world.admin))).json()
    assert detail["valid_keys"] == {}


async def test_create_live_is_refused(client: httpx.AsyncClient, world: World):
    r = await create(client, world.admin, minimal(live=True))
    assert r.status_code == 400
    assert list(r.json()) == ["live"]
    assert isinstance(r.json()["live"][0], str)
    r = await client.get(f"{EVENTS}fresh/", headers=auth(world.admin))
    assert r.status_code == 403


async def test_create_duplicate_slug_is_refused(client: httpx.AsyncClient, world: World):
    r = await create(client, world.admin, minimal("summit"))
    assert r.status_code == 400
    assert list(r.json()) == ["slug"]


async def test_create_slug_differing_only_in_case_is_refused(
    client: httpx.AsyncClient, world: World
):
    r = await create(client, world.admin, minimal("SUMMIT"))
    assert r.status_code == 400
    assert "slug" in r.json()
    listing = (await client.get(EVENTS, headers=auth(world.admin))).json()
    assert listing["count"] == 1


async def test_same_slug_in_another_organizer_is_allowed(client: httpx.AsyncClient, world: World):
    r = await create(client, world.admin, minimal("expo"))
    assert r.status_code == 201
    assert r.json()["slug"] == "expo"


@pytest.mark.parametrize("slug", ["", "-lead", ".lead", "has space", "ümlaut", "a/b", "x" * 51])
async def test_create_invalid_slug(client: httpx.AsyncClient, world: World, slug: str):
    r = await create(client, world.admin, minimal(slug))
    assert r.status_code == 400
    assert list(r.json()) == ["slug"]


@pytest.mark.parametrize("slug", ["a", "A.b-9", "2031", "x" * 50])
async def test_create_valid_slug_shapes(client: httpx.AsyncClient, world: World, slug: str):
    r = await create(client, world.admin, minimal(slug))
    assert r.status_code == 201, r.text
    assert r.json()["slug"] == slug


async def test_create_date_to_before_date_from(client: httpx.AsyncClient, world: World):
    r = await create(
        client, world.admin, minimal(date_from="2031-06-02T10:00:00Z", date_to="2031-06-01T10:00Z")
    )
    assert r.status_code == 400
    assert list(r.json()) == ["date_to"]


async def test_create_date_to_equal_to_date_from_is_allowed(
    client: httpx.AsyncClient, world: World
):
    r = await create(client, world.admin, minimal(date_to="2031-06-01T12:00:00+02:00"))
    assert r.status_code == 201
    assert instant(r.json()["date_to"]) == instant(r.json()["date_from"])


async def test_create_presale_end_before_presale_start(client: httpx.AsyncClient, world: World):
    r = await create(
        client,
        world.admin,
        minimal(presale_start="2031-05-01T00:00:00Z", presale_end="2031-04-01T00:00:00Z"),
    )
    assert r.status_code == 400
    assert list(r.json()) == ["presale_end"]


async def test_create_unknown_plugin(client: httpx.AsyncClient, world: World):
    r = await create(client, world.admin, minimal(plugins=["sendmail", "doesnotexist"]))
    assert r.status_code == 400
    assert list(r.json()) == ["plugins"]
    assert "doesnotexist" in r.json()["plugins"][0]


async def test_create_plugin_not_enabled_for_organizer(client: httpx.AsyncClient, factory: Factory):
    org = await factory.organizer("acme", plugins=["banktransfer"])
    token = await factory.admin_token(org)
    r = await create(client, token, minimal(plugins=["sendmail"]))
    assert r.status_code == 400
    assert list(r.json()) == ["plugins"]
    assert "sendmail" in r.json()["plugins"][0]
    r = await create(client, token, minimal(plugins=["banktransfer"]))
    assert r.status_code == 201
    assert r.json()["plugins"] == ["banktransfer"]


async def test_create_pretix_plugin_alias_is_stored_canonically(
    client: httpx.AsyncClient, world: World
):
    r = await create(
        client, world.admin, minimal(plugins=["pretix.plugins.sendmail", "sendmail", "reports"])
    )
    assert r.status_code == 201, r.text
    assert r.json()["plugins"] == ["sendmail", "reports"]
    detail = (await client.get(f"{EVENTS}fresh/", headers=auth(world.admin))).json()
    assert detail["plugins"] == ["sendmail", "reports"]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("timezone", "Mars/Olympus_Mons"),
        ("timezone", ""),
        ("currency", "euro"),
        ("currency", "EU"),
        ("currency", 978),
        ("geo_lat", 90.5),
        ("geo_lat", -91),
        ("geo_lon", 180.01),
        ("geo_lat", "north"),
        ("date_from", "yesterday"),
        ("date_from", None),
        ("date_to", "2031-13-01T00:00:00Z"),
        ("date_admission", [2031]),
        ("presale_start", "soon"),
        ("name", 5),
        ("name", {}),
        ("name", {"en": "   "}),
        ("name", None),
        ("location", 7),
        ("live", "maybe"),
        ("testmode", []),
        ("is_public", None),
        ("has_subevents", "perhaps"),
        ("meta_data", ["a"]),
        ("meta_data", {"key": 3}),
        ("plugins", "sendmail"),
        ("limit_sales_channels", ["web", "carrier-pigeon"]),
        ("sales_channels", ["nope"]),
        ("seating_plan", 12345),
        ("seat_category_mapping", {"Stalls": 1}),
        ("item_meta_properties", "x"),
        ("slug", 12),
    ],
)
async def test_create_invalid_field_is_a_400_keyed_by_field(
    client: httpx.AsyncClient, world: World, field: str, value: Any
):
    r = await create(client, world.admin, minimal(**{field: value}))
    assert r.status_code == 400, r.text
    body = r.json()
    assert field in body, body
    messages = body[field]
    if isinstance(messages, dict):  # errors inside an object are keyed by its entries
        messages = [m for entry in messages.values() for m in entry]
    assert isinstance(messages, list) and messages
    assert all(isinstance(m, str) and m for m in messages)


async def test_create_reports_several_field_errors_at_once(client: httpx.AsyncClient, world: World):
    r = await create(
        client,
        world.admin,
        {"name": 5, "slug": "ok", "date_from": "yesterday", "currency": "x", "geo_lat": 100},
    )
    assert r.status_code == 400
    assert {"name", "date_from", "currency", "geo_lat"} <= set(r.json())


async def test_create_plain_string_name_becomes_english(client: httpx.AsyncClient, world: World):
    r = await create(client, world.admin, minimal(name="Plain", location="Main hall"))
    assert r.status_code == 201
    assert r.json()["name"] == {"en": "Plain"}
    assert r.json()["location"] == {"en": "Main hall"}


async def test_create_missing_required_fields(client: httpx.AsyncClient, world: World):
    r = await create(client, world.admin, {})
    assert r.status_code == 400
    assert r.json() == {
        "name": ["This field is required."],
        "slug": ["This field is required."],
        "date_from": ["This field is required."],
    }


async def test_create_empty_body_is_missing_fields_and_non_object_is_refused(
    client: httpx.AsyncClient, world: World
):
    r = await client.post(EVENTS, headers=auth(world.admin))
    assert r.status_code == 400
    assert r.json()["slug"] == ["This field is required."]
    r = await client.post(EVENTS, json=[minimal()], headers=auth(world.admin))
    assert r.status_code == 400
    assert "non_field_errors" in r.json()


async def test_create_malformed_json(client: httpx.AsyncClient, world: World):
    r = await client.post(
        EVENTS,
        content=b'{"slug": ',
        headers={**auth(world.admin), "Content-Type": "application/json"},
    )
    assert r.status_code == 400
    assert r.json()["detail"].startswith("JSON parse error")


async def test_create_ignores_read_only_and_unknown_fields(client: httpx.AsyncClient, world: World):
    body = minimal(
        public_url="https://evil.example/",
        valid_keys={"pretix_sig1": ["abc"]},
        best_availability_state=100,
        id=999,
        unknown="x",
    )
    r = await create(client, world.admin, body)
    assert r.status_code == 201, r.text
    out = r.json()
    assert out["public_url"] == "http://testserver/acme/fresh/"
    assert out["valid_keys"] == {}
    assert "unknown" not in out and "id" not in out


async def test_create_with_deprecated_sales_channels_only_sets_the_limit(
    client: httpx.AsyncClient, world: World
):
    r = await create(client, world.admin, minimal(sales_channels=["web"]))
    assert r.status_code == 201
    body = r.json()
    assert body["all_sales_channels"] is False
    assert body["limit_sales_channels"] == ["web"]
    assert body["sales_channels"] == ["web"]


async def test_create_event_series(client: httpx.AsyncClient, world: World):
    r = await create(client, world.admin, minimal(has_subevents=True))
    assert r.status_code == 201
    assert r.json()["has_subevents"] is True


# -- limited teams ------------------------------------------------------------------------------


async def test_limited_team_token_sees_the_event_it_created(
    client: httpx.AsyncClient, factory: Factory, world: World
):
    team = await factory.team(
        world.org,
        all_events=False,
        organizer_permissions=["organizer.events:create"],
        event_permissions=list(EVENT_PERMISSIONS),
    )
    token = await factory.token(team)
    listing = (await client.get(EVENTS, headers=auth(token))).json()
    assert listing["count"] == 0
    assert (await client.get(SUMMIT, headers=auth(token))).status_code == 403

    r = await create(client, token, minimal("mine"))
    assert r.status_code == 201, r.text

    r = await client.get(f"{EVENTS}mine/", headers=auth(token))
    assert r.status_code == 200
    listing = (await client.get(EVENTS, headers=auth(token))).json()
    assert [e["slug"] for e in listing["results"]] == ["mine"]
    r = await client.patch(f"{EVENTS}mine/", json={"currency": "GBP"}, headers=auth(token))
    assert r.status_code == 200
    # Still limited: the other event stays invisible.
    assert (await client.get(SUMMIT, headers=auth(token))).status_code == 403


async def test_event_created_by_limited_team_can_be_deleted(
    client: httpx.AsyncClient, factory: Factory, world: World
):
    team = await factory.team(
        world.org,
        all_events=False,
        organizer_permissions=["organizer.events:create"],
        event_permissions=list(EVENT_PERMISSIONS),
    )
    token = await factory.token(team)
    assert (await create(client, token, minimal("mine"))).status_code == 201
    r = await client.delete(f"{EVENTS}mine/", headers=auth(world.admin))
    assert r.status_code == 204
    assert (await client.get(f"{EVENTS}mine/", headers=auth(token))).status_code == 403
    assert (await client.get(EVENTS, headers=auth(token))).json()["count"] == 0


async def test_all_events_team_does_not_get_limit_rows(
    client: httpx.AsyncClient, factory: Factory, world: World
):
    assert (await create(client, world.admin, minimal("wide"))).status_code == 201
    listing = (await client.get(EVENTS, headers=auth(world.admin))).json()
    assert [e["slug"] for e in listing["results"]] == ["summit", "wide"]


# -- detail -------------------------------------------------------------------------------------


async def test_detail_of_factory_event(client: httpx.AsyncClient, world: World):
    r = await client.get(SUMMIT, headers=auth(world.admin))
    assert r.status_code == 200
    body = r.json()
    assert body["slug"] == "summit"
    assert body["name"] == {"en": "Summit"}
    assert instant(body["date_from"]) == dt.datetime(2030, 5, 1, 10, tzinfo=dt.UTC)
    assert body["valid_keys"] == {}
    assert body["public_url"] == "http://testserver/acme/summit/"


async def test_unknown_event_is_403(client: httpx.AsyncClient, world: World):
    r = await client.get(f"{EVENTS}nope/", headers=auth(world.admin))
    assert r.status_code == 403
    assert "detail" in r.json()


async def test_event_slug_lookup_is_exact(client: httpx.AsyncClient, world: World):
    r = await client.get(f"{EVENTS}SUMMIT/", headers=auth(world.admin))
    assert r.status_code == 403


# -- PATCH --------------------------------------------------------------------------------------


async def _make_full(client: httpx.AsyncClient, world: World) -> str:
    r = await create(client, world.admin, FULL)
    assert r.status_code == 201, r.text
    return f"{EVENTS}{FULL['slug']}/"


@pytest.mark.usefixtures("meta_properties")
async def test_patch_changes_only_supplied_fields(client: httpx.AsyncClient, world: World):
    url = await _make_full(client, world)
    before = (await client.get(url, headers=auth(world.admin))).json()
    r = await client.patch(
        url, json={"currency": "GBP", "location": None}, headers=auth(world.admin)
    )
    assert r.status_code == 200, r.text
    after = (await client.get(url, headers=auth(world.admin))).json()
    assert r.json() == after
    assert after["currency"] == "GBP"
    assert after["location"] is None
    changed = {k for k in after if after[k] != before[k]}
    assert changed == {"currency", "location"}


@pytest.mark.usefixtures("meta_properties")
@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("name", {"en": "Renamed", "fr": "Renommé"}),
        ("live", True),
        ("testmode", True),
        ("is_public", False),
        ("geo_lat", -33.9),
        ("meta_data", {"type": "festival"}),
        ("plugins", ["webcheckin"]),
        ("timezone", "America/New_York"),
        ("item_meta_properties", {"size": "L"}),
        ("limit_sales_channels", ["api"]),
    ],
)
async def test_patch_each_field(
    client: httpx.AsyncClient, world: World, factory, field: str, value: Any
):
    await factory.quota(world.event)  # so that the event may go live
    r = await client.patch(SUMMIT, json={field: value}, headers=auth(world.admin))
    assert r.status_code == 200, r.text
    detail = (await client.get(SUMMIT, headers=auth(world.admin))).json()
    assert detail[field] == value
    assert detail["slug"] == "summit"


async def test_patch_datetimes(client: httpx.AsyncClient, world: World):
    r = await client.patch(
        SUMMIT,
        json={"date_to": "2030-05-02T18:00:00+02:00", "presale_start": "2030-01-01T00:00:00Z"},
        headers=auth(world.admin),
    )
    assert r.status_code == 200
    detail = (await client.get(SUMMIT, headers=auth(world.admin))).json()
    assert instant(detail["date_to"]) == dt.datetime(2030, 5, 2, 16, tzinfo=dt.UTC)
    assert instant(detail["presale_start"]) == dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
    assert instant(detail["date_from"]) == dt.datetime(2030, 5, 1, 10, tzinfo=dt.UTC)


async def test_patch_validates_the_merged_state(client: httpx.AsyncClient, world: World):
    # summit starts 2030-05-01 10:00 UTC; an end before that is refused.
    r = await client.patch(
        SUMMIT, json={"date_to": "2030-04-30T10:00:00Z"}, headers=auth(world.admin)
    )
    assert r.status_code == 400
    assert list(r.json()) == ["date_to"]
    detail = (await client.get(SUMMIT, headers=auth(world.admin))).json()
    assert detail["date_to"] is None


async def test_patch_date_from_after_existing_date_to(client: httpx.AsyncClient, world: World):
    ok = await client.patch(
        SUMMIT, json={"date_to": "2030-05-02T10:00:00Z"}, headers=auth(world.admin)
    )
    assert ok.status_code == 200
    r = await client.patch(
        SUMMIT, json={"date_from": "2030-05-03T10:00:00Z"}, headers=auth(world.admin)
    )
    assert r.status_code == 400
    assert "date_to" in r.json()


async def test_patch_presale_end_before_existing_start(client: httpx.AsyncClient, world: World):
    ok = await client.patch(
        SUMMIT, json={"presale_start": "2030-03-01T00:00:00Z"}, headers=auth(world.admin)
    )
    assert ok.status_code == 200
    r = await client.patch(
        SUMMIT, json={"presale_end": "2030-02-01T00:00:00Z"}, headers=auth(world.admin)
    )
    assert r.status_code == 400
    assert list(r.json()) == ["presale_end"]


async def test_patch_slug_cannot_change(client: httpx.AsyncClient, world: World):
    r = await client.patch(SUMMIT, json={"slug": "renamed"}, headers=auth(world.admin))
    assert r.status_code == 400
    assert list(r.json()) == ["slug"]
    assert (await client.get(SUMMIT, headers=auth(world.admin))).status_code == 200
    same = await client.patch(SUMMIT, json={"slug": "summit"}, headers=auth(world.admin))
    assert same.status_code == 200


async def test_patch_has_subevents_cannot_change(client: httpx.AsyncClient, world: World):
    r = await client.patch(SUMMIT, json={"has_subevents": True}, headers=auth(world.admin))
    assert r.status_code == 400
    assert list(r.json()) == ["has_subevents"]
    detail = (await client.get(SUMMIT, headers=auth(world.admin))).json()
    assert detail["has_subevents"] is False


async def test_patch_live_is_allowed_after_creation(
    client: httpx.AsyncClient, world: World, factory
):
    await factory.quota(world.event)  # nothing sells without one (see test_go_live.py)
    r = await client.patch(SUMMIT, json={"live": True}, headers=auth(world.admin))
    assert r.status_code == 200
    assert r.json()["live"] is True


async def test_patch_plugin_alias_and_unknown_plugin(client: httpx.AsyncClient, world: World):
    r = await client.patch(
        SUMMIT, json={"plugins": ["pretix.plugins.autocheckin"]}, headers=auth(world.admin)
    )
    assert r.status_code == 200
    assert r.json()["plugins"] == ["autocheckin"]
    r = await client.patch(
        SUMMIT, json={"plugins": ["pretix.plugins.nope"]}, headers=auth(world.admin)
    )
    assert r.status_code == 400
    assert list(r.json()) == ["plugins"]


async def test_patch_invalid_value(client: httpx.AsyncClient, world: World):
    r = await client.patch(
        SUMMIT, json={"geo_lon": 200, "timezone": "Nowhere"}, headers=auth(world.admin)
    )
    assert r.status_code == 400
    assert set(r.json()) == {"geo_lon", "timezone"}


async def test_patch_ignores_read_only_fields(client: httpx.AsyncClient, world: World):
    r = await client.patch(
        SUMMIT,
        json={
            "public_url": "https://evil.example/",
            "valid_keys": {"x": ["y"]},
            "best_availability_state": 5,
            "testmode": True,
        },
        headers=auth(world.admin),
    )
    assert r.status_code == 200
    body = r.json()
    assert body["public_url"] == "http://testserver/acme/summit/"
    assert body["valid_keys"] == {}
    assert body["testmode"] is True


@pytest.mark.usefixtures("meta_properties")
async def test_patch_empty_body_changes_nothing(client: httpx.AsyncClient, world: World):
    url = await _make_full(client, world)
    before = (await client.get(url, headers=auth(world.admin))).json()
    r = await client.patch(url, json={}, headers=auth(world.admin))
    assert r.status_code == 200
    assert r.json() == before


async def test_patch_sales_channels(client: httpx.AsyncClient, world: World):
    r = await client.patch(
        SUMMIT,
        json={"all_sales_channels": False, "limit_sales_channels": ["api"]},
        headers=auth(world.admin),
    )
    assert r.status_code == 200
    assert r.json()["sales_channels"] == ["api"]
    r = await client.patch(SUMMIT, json={"all_sales_channels": True}, headers=auth(world.admin))
    assert r.status_code == 200
    assert r.json()["sales_channels"] == list(SALES_CHANNELS)


async def test_patch_deprecated_sales_channels(client: httpx.AsyncClient, world: World):
    r = await client.patch(
        SUMMIT, json={"sales_channels": ["box_office"]}, headers=auth(world.admin)
    )
    assert r.status_code == 200
    body = r.json()
    assert body["all_sales_channels"] is False
    assert body["limit_sales_channels"] == ["box_office"]
    assert body["sales_channels"] == ["box_office"]


async def test_patch_series_keeps_has_subevents(
    client: httpx.AsyncClient, factory: Factory, world: World
):
    await factory.event(world.org, "series", has_subevents=True)
    r = await client.patch(
        f"{EVENTS}series/", json={"name": {"en": "Tour"}}, headers=auth(world.admin)
    )
    assert r.status_code == 200
    assert r.json()["has_subevents"] is True
    assert r.json()["name"] == {"en": "Tour"}


# -- PUT ----------------------------------------------------------------------------------------


async def test_put_requires_the_full_object(client: httpx.AsyncClient, world: World):
    r = await client.put(SUMMIT, json={"currency": "GBP"}, headers=auth(world.admin))
    assert r.status_code == 400
    body = r.json()
    assert body["name"] == ["This field is required."]
    assert body["slug"] == ["This field is required."]
    assert body["date_from"] == ["This field is required."]
    detail = (await client.get(SUMMIT, headers=auth(world.admin))).json()
    assert detail["currency"] == "EUR"


@pytest.mark.usefixtures("meta_properties")
async def test_put_keeps_omitted_fields(client: httpx.AsyncClient, world: World):
    url = await _make_full(client, world)
    before = (await client.get(url, headers=auth(world.admin))).json()
    # Cross-field rules see the merged state: the kept end cannot precede the new start.
    body = {"name": "Reset", "slug": FULL["slug"], "date_from": "2031-05-01T10:00:00Z"}
    r = await client.put(url, json=body, headers=auth(world.admin))
    assert r.status_code == 400 and list(r.json()) == ["date_to"]
    body["date_from"] = "2031-04-01T10:00:00Z"
    r = await client.put(url, json=body, headers=auth(world.admin))
    assert r.status_code == 200, r.text
    detail = (await client.get(url, headers=auth(world.admin))).json()
    assert r.json() == detail
    assert detail["name"] == {"en": "Reset"}
    assert instant(detail["date_from"]) == dt.datetime(2031, 4, 1, 10, tzinfo=dt.UTC)
    assert {k: v for k, v in detail.items() if k not in ("name", "date_from")} == {
        k: v for k, v in before.items() if k not in ("name", "date_from")
    }
    r = await client.put(url, json={"name": "Reset"}, headers=auth(world.admin))
    assert r.status_code == 400
    assert r.json() == {
        "slug": ["This field is required."],
        "date_from": ["This field is required."],
    }


@pytest.mark.usefixtures("meta_properties")
async def test_put_full_object_round_trips(client: httpx.AsyncClient, world: World, factory):
    await factory.quota(world.event)  # going live needs one
    body = {**FULL, "slug": "summit", "live": True}
    r = await client.put(SUMMIT, json=body, headers=auth(world.admin))
    assert r.status_code == 200, r.text
    detail = (await client.get(SUMMIT, headers=auth(world.admin))).json()
    assert_matches(detail, body)


async def test_put_cannot_change_slug_or_series(client: httpx.AsyncClient, world: World):
    r = await client.put(SUMMIT, json=minimal("other"), headers=auth(world.admin))
    assert r.status_code == 400
    assert "slug" in r.json()
    r = await client.put(
        SUMMIT, json=minimal("summit", has_subevents=True), headers=auth(world.admin)
    )
    assert r.status_code == 400
    assert "has_subevents" in r.json()


async def test_put_validates_dates(client: httpx.AsyncClient, world: World):
    r = await client.put(
        SUMMIT, json=minimal("summit", date_to="2020-01-01T00:00:00Z"), headers=auth(world.admin)
    )
    assert r.status_code == 400
    assert list(r.json()) == ["date_to"]


async def test_put_ignores_read_only_fields(client: httpx.AsyncClient, world: World):
    body = minimal("summit", public_url="https://evil.example/", valid_keys={"a": ["b"]})
    r = await client.put(SUMMIT, json=body, headers=auth(world.admin))
    assert r.status_code == 200
    assert r.json()["public_url"] == "http://testserver/acme/summit/"
    assert r.json()["valid_keys"] == {}


# -- DELETE -------------------------------------------------------------------------------------


async def test_delete_removes_the_event(client: httpx.AsyncClient, world: World):
    r = await client.delete(SUMMIT, headers=auth(world.admin))
    assert r.status_code == 204
    assert r.content == b""
    r = await client.get(SUMMIT, headers=auth(world.admin))
    assert r.status_code == 403
    listing = (await client.get(EVENTS, headers=auth(world.admin))).json()
    assert listing["count"] == 0
    # The other organizer's event is untouched.
    other = await client.get("/api/v1/organizers/rival/events/expo/", headers=auth(world.outsider))
    assert other.status_code == 200


async def test_delete_twice_is_403(client: httpx.AsyncClient, world: World):
    assert (await client.delete(SUMMIT, headers=auth(world.admin))).status_code == 204
    assert (await client.delete(SUMMIT, headers=auth(world.admin))).status_code == 403


async def test_slug_can_be_reused_after_delete(client: httpx.AsyncClient, world: World):
    assert (await client.delete(SUMMIT, headers=auth(world.admin))).status_code == 204
    r = await create(client, world.admin, minimal("summit"))
    assert r.status_code == 201
    assert r.json()["slug"] == "summit"
