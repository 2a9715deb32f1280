"""Dates of an event series: create, detail, PUT / PATCH, delete, validation, overrides."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from admit.subevents import service
from tests.factories import Factory, World, auth
from tests.subevents.helpers import item, meta_property, series, subevent, variation

BASE = "/api/v1/organizers/acme/events/tour/subevents/"


@pytest.fixture
async def tour(factory: Factory, world: World):
    return await series(factory, world.org, "tour", meta_data={"region": "north"})


def full(item_id: int, variation_id: int) -> dict[str, Any]:
    return {
        "name": {"en": "Berlin", "de": "Berlin"},
        "active": True,
        "is_public": False,
        "date_from": "2031-04-01T09:00:00+02:00",
        "date_to": "2031-04-01T18:00:00+02:00",
        "date_admission": "2031-04-01T08:00:00+02:00",
        "presale_start": "2031-01-01T00:00:00Z",
        "presale_end": "2031-03-31T23:00:00Z",
        "frontpage_text": {"en": "Welcome"},
        "location": {"en": "Arena"},
        "geo_lat": 52.5,
        "geo_lon": 13.4,
        "meta_data": {"type": "concert"},
        "seating_plan": None,
        "seat_category_mapping": {},
        "item_price_overrides": [
            {
                "item": item_id,
                "price": "12.50",
                "disabled": True,
                "available_from": "2031-01-02T00:00:00Z",
                "available_until": "2031-03-01T00:00:00Z",
            }
        ],
        "variation_price_overrides": [
            {
                "variation": variation_id,
                "price": None,
                "disabled": False,
                "available_from": None,
                "available_until": None,
            }
        ],
    }


@pytest.fixture
async def catalog(factory: Factory, world: World, tour) -> dict[str, Any]:
    await meta_property(factory, world.org, "type")
    await meta_property(factory, world.org, "region")
    ticket = await item(factory, tour)
    shirt = await item(factory, tour, "Shirt")
    red = await variation(factory, shirt)
    return {"item": ticket, "shirt": shirt, "variation": red}


async def test_create_round_trips_every_field(client: httpx.AsyncClient, world: World, catalog):
    body = full(catalog["item"].id, catalog["variation"].id)
    r = await client.post(BASE, json=body, headers=auth(world.admin))
    assert r.status_code == 201, r.text
    created = r.json()
    assert created["event"] == "tour"
    assert created["date_from"] == "2031-04-01T07:00:00Z"
    assert created["presale_end"] == "2031-03-31T23:00:00Z"
    assert created["item_price_overrides"] == [
        {
            "item": catalog["item"].id,
            "price": "12.50",
            "disabled": True,
            "available_from": "2031-01-02T00:00:00Z",
            "available_until": "2031-03-01T00:00:00Z",
        }
    ]
    assert created["variation_price_overrides"] == body["variation_price_overrides"]
    for key in ("name", "active", "is_public", "location", "frontpage_text", "geo_lat"):
        assert created[key] == body[key], key
    assert created["meta_data"] == {"type": "concert"}
    assert set(created) == set(body) | {"id", "event", "last_modified"}
    detail = await client.get(f"{BASE}{created['id']}/", headers=auth(world.admin))
    assert detail.status_code == 200
    assert detail.json() == created


async def test_create_minimal_has_defaults(client: httpx.AsyncClient, world: World, tour):
    r = await client.post(
        BASE, json={"name": "Solo", "date_from": "2031-01-01T10:00:00Z"}, headers=auth(world.admin)
    )
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["name"] == {"en": "Solo"}
    assert body["active"] is False and body["is_public"] is True
    assert body["date_to"] is None and body["location"] is None
    assert body["item_price_overrides"] == [] and body["variation_price_overrides"] == []
    assert body["meta_data"] == {} and body["seat_category_mapping"] == {}
    assert body["seating_plan"] is None


async def test_create_on_a_single_event_is_400(client: httpx.AsyncClient, world: World):
    url = "/api/v1/organizers/acme/events/summit/subevents/"
    r = await client.post(
        url, json={"name": "X", "date_from": "2031-01-01T10:00:00Z"}, headers=auth(world.admin)
    )
    assert r.status_code == 400
    assert list(r.json()) == ["non_field_errors"]
    listing = await client.get(url, headers=auth(world.admin))
    assert listing.status_code == 200
    assert listing.json()["count"] == 0


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"name": None}, "name"),
        ({"name": {"en": " "}}, "name"),
        ({"date_from": None}, "date_from"),
        ({"date_from": "2031-01-01"}, "date_from"),
        ({"date_to": "2030-01-01T00:00:00Z"}, "date_to"),
        (
            {"presale_start": "2031-02-01T00:00:00Z", "presale_end": "2031-01-01T00:00:00Z"},
            "presale_end",
        ),
        ({"geo_lat": 91}, "geo_lat"),
        ({"geo_lon": -181}, "geo_lon"),
        ({"geo_lat": True}, "geo_lat"),
        ({"active": "perhaps"}, "active"),
        ({"seating_plan": 3}, "seating_plan"),
        ({"seat_category_mapping": {"Stalls": 1}}, "seat_category_mapping"),
        ({"meta_data": {"nope": "x"}}, "meta_data"),
        ({"meta_data": {"type": 3}}, "meta_data"),
        ({"item_price_overrides": [{"item": 1, "price": "1.234"}]}, "item_price_overrides"),
        ({"item_price_overrides": [{"price": "1.00"}]}, "item_price_overrides"),
        ({"item_price_overrides": "x"}, "item_price_overrides"),
        ({"variation_price_overrides": [{"variation": "x"}]}, "variation_price_overrides"),
    ],
)
async def test_validation_is_keyed_by_field(
    client: httpx.AsyncClient, world: World, catalog, patch: dict, field: str
):
    body = {"name": "Date", "date_from": "2031-01-01T10:00:00Z", **patch}
    r = await client.post(BASE, json=body, headers=auth(world.admin))
    assert r.status_code == 400, r.text
    assert list(r.json()) == [field]
    assert (await client.get(BASE, headers=auth(world.admin))).json()["count"] == 0


async def test_meta_data_rules(client: httpx.AsyncClient, world: World, factory: Factory, tour):
    await meta_property(factory, world.org, "genre", allowed_values=["rock", "jazz"])
    await meta_property(factory, world.org, "region", required=True)
    await meta_property(factory, world.org, "hall", required=True, default="main")
    base = {"name": "D", "date_from": "2031-01-01T10:00:00Z"}
    # region is inherited from the event, hall has a default: both satisfied.
    ok = await client.post(
        BASE, json={**base, "meta_data": {"genre": "jazz"}}, headers=auth(world.admin)
    )
    assert ok.status_code == 201, ok.text
    assert ok.json()["meta_data"] == {"genre": "jazz"}
    bad = await client.post(
        BASE, json={**base, "meta_data": {"genre": "pop"}}, headers=auth(world.admin)
    )
    assert bad.status_code == 400
    assert bad.json() == {"meta_data": ["Meta data property 'genre' does not allow value 'pop'."]}
    unknown = await client.post(
        BASE, json={**base, "meta_data": {"x": "1"}}, headers=auth(world.admin)
    )
    assert unknown.json() == {"meta_data": ["Meta data property 'x' does not exist."]}


async def test_required_meta_without_any_fallback(
    client: httpx.AsyncClient, world: World, factory: Factory, tour
):
    await meta_property(factory, world.org, "city", required=True)
    base = {"name": "D", "date_from": "2031-01-01T10:00:00Z"}
    r = await client.post(BASE, json=base, headers=auth(world.admin))
    assert r.status_code == 400
    assert r.json() == {"meta_data": ["Meta data property 'city' is required."]}
    r = await client.post(
        BASE, json={**base, "meta_data": {"city": "Rome"}}, headers=auth(world.admin)
    )
    assert r.status_code == 201


# -- overrides --------------------------------------------------------------------------------


async def test_overrides_must_belong_to_this_event(
    client: httpx.AsyncClient, world: World, factory: Factory, catalog
):
    other = await series(factory, world.org, "other")
    foreign_item = await item(factory, other)
    foreign_var = await variation(factory, foreign_item)
    base = {"name": "D", "date_from": "2031-01-01T10:00:00Z"}
    for pk in (foreign_item.id, 99999, 2**40):
        r = await client.post(
            BASE,
            json={**base, "item_price_overrides": [{"item": catalog["item"].id}, {"item": pk}]},
            headers=auth(world.admin),
        )
        assert r.status_code == 400
        assert r.json() == {
            "item_price_overrides": [{}, {"item": [f'Invalid pk "{pk}" - object does not exist.']}]
        }
    r = await client.post(
        BASE,
        json={**base, "variation_price_overrides": [{"variation": foreign_var.id}]},
        headers=auth(world.admin),
    )
    assert r.status_code == 400
    assert r.json() == {
        "variation_price_overrides": [
            {"variation": [f'Invalid pk "{foreign_var.id}" - object does not exist.']}
        ]
    }


async def test_one_override_per_item_and_variation(
    client: httpx.AsyncClient, world: World, catalog
):
    base = {"name": "D", "date_from": "2031-01-01T10:00:00Z"}
    pk = catalog["item"].id
    r = await client.post(
        BASE,
        json={**base, "item_price_overrides": [{"item": pk}, {"item": pk}]},
        headers=auth(world.admin),
    )
    assert r.status_code == 400
    body = r.json()["item_price_overrides"]
    assert body[0] == {} and list(body[1]) == ["item"]
    vpk = catalog["variation"].id
    r = await client.post(
        BASE,
        json={**base, "variation_price_overrides": [{"variation": vpk}, {"variation": vpk}]},
        headers=auth(world.admin),
    )
    assert r.status_code == 400
    assert list(r.json()["variation_price_overrides"][1]) == ["variation"]


async def test_patch_replaces_overrides_and_keeps_them_otherwise(
    client: httpx.AsyncClient, world: World, factory: Factory, tour, catalog
):
    sub = await subevent(factory, tour, items=[catalog["item"]], variations=[catalog["variation"]])
    url = f"{BASE}{sub.id}/"
    r = await client.patch(url, json={"name": "Renamed"}, headers=auth(world.admin))
    assert r.status_code == 200, r.text
    assert r.json()["item_price_overrides"][0]["price"] == "9.50"
    assert len(r.json()["variation_price_overrides"]) == 1
    r = await client.patch(
        url,
        json={"item_price_overrides": [{"item": catalog["shirt"].id, "price": "3"}]},
        headers=auth(world.admin),
    )
    assert r.status_code == 200, r.text
    assert [(o["item"], o["price"]) for o in r.json()["item_price_overrides"]] == [
        (catalog["shirt"].id, "3.00")
    ]
    assert len(r.json()["variation_price_overrides"]) == 1
    r = await client.patch(url, json={"variation_price_overrides": []}, headers=auth(world.admin))
    assert r.json()["variation_price_overrides"] == []
    assert (await client.get(url, headers=auth(world.admin))).json() == r.json()


# -- PATCH / PUT ------------------------------------------------------------------------------


async def test_patch_changes_only_supplied_fields(client: httpx.AsyncClient, world: World, catalog):
    body = full(catalog["item"].id, catalog["variation"].id)
    created = (await client.post(BASE, json=body, headers=auth(world.admin))).json()
    url = f"{BASE}{created['id']}/"
    r = await client.patch(url, json={"location": None, "active": False}, headers=auth(world.admin))
    assert r.status_code == 200, r.text
    changed = {k for k in r.json() if r.json()[k] != created[k]}
    assert changed == {"location", "active", "last_modified"}


async def test_patch_validates_merged_state(client: httpx.AsyncClient, world: World, factory, tour):
    sub = await subevent(factory, tour)  # starts 2030-06-01 10:00 UTC
    url = f"{BASE}{sub.id}/"
    r = await client.patch(url, json={"date_to": "2030-05-01T00:00:00Z"}, headers=auth(world.admin))
    assert r.status_code == 400
    assert list(r.json()) == ["date_to"]


async def test_patch_leaves_stale_meta_alone_unless_named(
    client: httpx.AsyncClient, world: World, factory: Factory, tour
):
    sub = await subevent(factory, tour, meta_data={"legacy": "1"})
    url = f"{BASE}{sub.id}/"
    r = await client.patch(url, json={"active": True}, headers=auth(world.admin))
    assert r.status_code == 200
    r = await client.patch(url, json={"meta_data": {"legacy": "2"}}, headers=auth(world.admin))
    assert r.status_code == 400
    assert list(r.json()) == ["meta_data"]


async def test_put_keeps_omitted_fields(client: httpx.AsyncClient, world: World, catalog):
    body = full(catalog["item"].id, catalog["variation"].id)
    created = (await client.post(BASE, json=body, headers=auth(world.admin))).json()
    url = f"{BASE}{created['id']}/"
    r = await client.put(
        url, json={"name": "Reset", "date_from": "2031-04-01T10:00:00Z"}, headers=auth(world.admin)
    )
    assert r.status_code == 200, r.text
    out = r.json()
    changed = {"name", "date_from", "last_modified"}
    assert {k: v for k, v in out.items() if k not in changed} == {
        k: v for k, v in created.items() if k not in changed
    }
    assert out["item_price_overrides"] and out["variation_price_overrides"]
    r = await client.put(url, json={"name": "Reset"}, headers=auth(world.admin))
    assert r.status_code == 400
    assert list(r.json()) == ["date_from"]


async def test_read_only_fields_are_ignored(client: httpx.AsyncClient, world: World, factory, tour):
    sub = await subevent(factory, tour)
    r = await client.patch(
        f"{BASE}{sub.id}/",
        json={"id": 999, "event": "summit", "last_modified": "2000-01-01T00:00:00Z"},
        headers=auth(world.admin),
    )
    assert r.status_code == 200
    assert r.json()["id"] == sub.id and r.json()["event"] == "tour"
    assert not r.json()["last_modified"].startswith("2000")


# -- lookup and delete ------------------------------------------------------------------------


async def test_unknown_or_foreign_date_is_404(
    client: httpx.AsyncClient, world: World, factory: Factory, tour
):
    other = await series(factory, world.org, "other")
    foreign = await subevent(factory, other)
    for pk in (foreign.id, 99999, "abc", 2**40):
        for method in ("GET", "PATCH", "DELETE"):
            r = await client.request(
                method,
                f"{BASE}{pk}/",
                json={} if method == "PATCH" else None,
                headers=auth(world.admin),
            )
            assert r.status_code == 404, (method, pk)
            assert r.json() == {"detail": "Not found."}


async def test_delete(client: httpx.AsyncClient, world: World, factory: Factory, tour, catalog):
    sub = await subevent(factory, tour, items=[catalog["item"]])
    r = await client.delete(f"{BASE}{sub.id}/", headers=auth(world.admin))
    assert r.status_code == 204
    assert (await client.get(f"{BASE}{sub.id}/", headers=auth(world.admin))).status_code == 404


async def test_delete_refused_by_a_guard(
    client: httpx.AsyncClient, world: World, factory: Factory, tour, monkeypatch
):
    sub = await subevent(factory, tour)

    async def has_orders(_session, obj) -> str | None:
        return "The date has orders." if obj.id == sub.id else None

    monkeypatch.setattr(service, "deletion_guards", [has_orders])
    r = await client.delete(f"{BASE}{sub.id}/", headers=auth(world.admin))
    assert r.status_code == 403
    assert r.json() == {"detail": "The date has orders."}
    assert (await client.get(f"{BASE}{sub.id}/", headers=auth(world.admin))).status_code == 200


async def test_write_needs_subevents_permission(
    client: httpx.AsyncClient, world: World, factory: Factory, tour
):
    team = await factory.team(world.org, event_permissions=["event.items:write"])
    token = await factory.token(team)
    body = {"name": "D", "date_from": "2031-01-01T10:00:00Z"}
    assert (await client.post(BASE, json=body, headers=auth(token))).status_code == 403
    assert (await client.get(BASE, headers=auth(token))).status_code == 200
    team = await factory.team(world.org, event_permissions=["event.subevents:write"])
    token = await factory.token(team)
    assert (await client.post(BASE, json=body, headers=auth(token))).status_code == 201
