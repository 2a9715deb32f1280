"""Discounts: round trip, PUT / PATCH, validation, item references, filters and ordering."""

from __future__ import annotations

from typing import Any

import pytest

from admit.auth.permissions import EVENT_PERMISSIONS
from admit.events.plugins import SALES_CHANNELS
from tests.catalog_discounts.helpers import discount, item
from tests.factories import Factory, World, auth

DISCOUNTS = "/api/v1/organizers/acme/events/summit/discounts/"
OTHER = "/api/v1/organizers/rival/events/expo/discounts/"

DEFAULTS: dict[str, Any] = {
    "active": True,
    "internal_name": "",
    "position": 0,
    "all_sales_channels": True,
    "limit_sales_channels": [],
    "sales_channels": list(SALES_CHANNELS),
    "available_from": None,
    "available_until": None,
    "subevent_mode": "mixed",
    "subevent_date_from": None,
    "subevent_date_until": None,
    "condition_all_products": True,
    "condition_limit_products": [],
    "condition_apply_to_addons": True,
    "condition_ignore_voucher_discounted": False,
    "condition_min_count": 0,
    "condition_min_value": "0.00",
    "benefit_discount_matching_percent": "0.00",
    "benefit_only_apply_to_cheapest_n_matches": None,
    "benefit_same_products": True,
    "benefit_limit_products": [],
    "benefit_apply_to_addons": True,
    "benefit_ignore_voucher_discounted": False,
}


def full(condition: list[int], benefit: list[int]) -> dict[str, Any]:
    """Every field set to a value other than its default."""
    return {
        "active": False,
        "internal_name": "3 for 2",
        "position": 7,
        "all_sales_channels": False,
        "limit_sales_channels": ["web", "box_office"],
        "available_from": "2030-01-01T10:00:00Z",
        "available_until": "2030-02-01T10:00:00Z",
        "subevent_mode": "same",
        "subevent_date_from": "2030-03-01T00:00:00Z",
        "subevent_date_until": "2030-04-01T00:00:00Z",
        "condition_all_products": False,
        "condition_limit_products": condition,
        "condition_apply_to_addons": False,
        "condition_ignore_voucher_discounted": True,
        "condition_min_count": 3,
        "condition_min_value": "0.00",
        "benefit_discount_matching_percent": "100.00",
        "benefit_only_apply_to_cheapest_n_matches": 1,
        "benefit_same_products": False,
        "benefit_limit_products": benefit,
        "benefit_apply_to_addons": False,
        "benefit_ignore_voucher_discounted": True,
    }


def assert_field_errors(response: Any, *fields: str) -> dict:
    assert response.status_code == 400, response.text
    body = response.json()
    assert isinstance(body, dict) and body, body
    for field in fields:
        assert field in body, body
    return body


async def create(client: Any, token: str, **fields: Any) -> dict:
    response = await client.post(DISCOUNTS, json=fields, headers=auth(token))
    assert response.status_code == 201, response.text
    return response.json()


@pytest.fixture
async def items(factory: Factory, world: World) -> list[int]:
    return [(await item(factory, world.event, name={"en": f"T{n}"})).id for n in range(3)]


# -- create / read ---------------------------------------------------------------------------


async def test_round_trip_every_field(client, world: World, items):
    sent = full([items[1], items[0]], [items[2]])
    created = await create(client, world.admin, **sent)
    fetched = (await client.get(f"{DISCOUNTS}{created['id']}/", headers=auth(world.admin))).json()
    assert created == fetched
    assert set(fetched) == {"id", "sales_channels", *sent}
    for key, value in sent.items():
        if key == "condition_limit_products":
            assert fetched[key] == sorted(value)
        else:
            assert fetched[key] == value, key
    assert fetched["sales_channels"] == ["web", "box_office"]


async def test_empty_body_takes_the_defaults(client, world: World):
    created = await create(client, world.admin)
    assert {k: created[k] for k in DEFAULTS} == DEFAULTS


async def test_datetimes_keep_their_instant(client, world: World):
    created = await create(client, world.admin, available_from="2030-01-01T12:00:00+02:00")
    assert created["available_from"] == "2030-01-01T10:00:00Z"


async def test_duplicate_item_ids_are_stored_once(client, world: World, items):
    created = await create(
        client, world.admin, condition_limit_products=[items[0], items[0], items[1]]
    )
    assert created["condition_limit_products"] == [items[0], items[1]]


# -- update ----------------------------------------------------------------------------------


async def test_patch_changes_only_the_fields_sent(client, world: World, items):
    created = await create(client, world.admin, **full([items[0]], [items[1]]))
    url = f"{DISCOUNTS}{created['id']}/"
    response = await client.patch(url, json={"active": True}, headers=auth(world.admin))
    assert response.status_code == 200, response.text
    assert response.json() == {**created, "active": True}
    response = await client.patch(
        url, json={"benefit_limit_products": [items[2], items[1]]}, headers=auth(world.admin)
    )
    assert response.json()["benefit_limit_products"] == [items[1], items[2]]
    assert response.json()["condition_limit_products"] == [items[0]]
    fetched = (await client.get(url, headers=auth(world.admin))).json()
    assert fetched == response.json()


async def test_put_keeps_omitted_fields(client, world: World, items):
    created = await create(client, world.admin, **full([items[0]], [items[1]]))
    url = f"{DISCOUNTS}{created['id']}/"
    response = await client.put(url, json={"internal_name": "new"}, headers=auth(world.admin))
    assert response.status_code == 200, response.text
    assert response.json() == {**created, "internal_name": "new"}


async def test_patch_validates_the_merged_state(client, world: World):
    created = await create(client, world.admin, condition_min_count=2)
    url = f"{DISCOUNTS}{created['id']}/"
    response = await client.patch(url, json={"condition_min_value": "5"}, headers=auth(world.admin))
    assert_field_errors(response, "non_field_errors")
    response = await client.patch(
        url, json={"condition_min_value": "5", "condition_min_count": 0}, headers=auth(world.admin)
    )
    assert response.status_code == 200
    assert response.json()["condition_min_value"] == "5.00"


async def test_patch_benefit_products_alone_keeps_the_rule(client, world: World, items):
    created = await create(
        client, world.admin, benefit_same_products=False, benefit_limit_products=[items[0]]
    )
    url = f"{DISCOUNTS}{created['id']}/"
    response = await client.patch(
        url, json={"benefit_limit_products": []}, headers=auth(world.admin)
    )
    assert_field_errors(response, "benefit_limit_products")


# -- sales channels --------------------------------------------------------------------------


async def test_deprecated_sales_channels_sets_the_limit(client, world: World):
    created = await create(client, world.admin, sales_channels=["web"])
    assert created["all_sales_channels"] is False
    assert created["limit_sales_channels"] == ["web"]
    assert created["sales_channels"] == ["web"]
    url = f"{DISCOUNTS}{created['id']}/"
    response = await client.patch(
        url, json={"sales_channels": list(SALES_CHANNELS)}, headers=auth(world.admin)
    )
    assert response.json()["all_sales_channels"] is True
    assert response.json()["sales_channels"] == list(SALES_CHANNELS)


async def test_new_channel_fields_win_over_the_deprecated_one(client, world: World):
    created = await create(
        client,
        world.admin,
        sales_channels=["web"],
        all_sales_channels=False,
        limit_sales_channels=["api"],
    )
    assert created["limit_sales_channels"] == ["api"]
    assert created["sales_channels"] == ["api"]


async def test_patch_of_another_field_keeps_the_channels(client, world: World):
    created = await create(
        client, world.admin, all_sales_channels=False, limit_sales_channels=["api"]
    )
    url = f"{DISCOUNTS}{created['id']}/"
    response = await client.patch(url, json={"position": 3}, headers=auth(world.admin))
    assert response.json()["limit_sales_channels"] == ["api"]
    assert response.json()["all_sales_channels"] is False


# -- validation ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("active", "sometimes"),
        ("internal_name", "x" * 191),
        ("position", -1),
        ("position", "first"),
        ("position", 2**31),
        ("all_sales_channels", None),
        ("limit_sales_channels", ["web", "carrier-pigeon"]),
        ("limit_sales_channels", "web"),
        ("sales_channels", ["nope"]),
        ("available_from", "tomorrow"),
        ("available_until", "2030-01-01"),
        ("subevent_mode", "other"),
        ("subevent_mode", None),
        ("subevent_date_from", 12),
        ("condition_limit_products", "1"),
        ("condition_limit_products", ["x"]),
        ("condition_limit_products", [0]),
        ("condition_min_count", -1),
        ("condition_min_count", 1.5),
        ("condition_min_value", "-1.00"),
        ("condition_min_value", "1.001"),
        ("condition_min_value", "lots"),
        ("benefit_discount_matching_percent", "-0.01"),
        ("benefit_discount_matching_percent", "100.01"),
        ("benefit_discount_matching_percent", None),
        ("benefit_only_apply_to_cheapest_n_matches", 0),
        ("benefit_only_apply_to_cheapest_n_matches", -2),
        ("benefit_same_products", "no way"),
        ("benefit_limit_products", [None]),
    ],
)
async def test_invalid_values_are_400_keyed_by_field(client, world: World, field, value):
    response = await client.post(DISCOUNTS, json={field: value}, headers=auth(world.admin))
    assert_field_errors(response, field)


@pytest.mark.parametrize("percent", ["0", "0.00", "100", "100.00", "33.33"])
async def test_percent_bounds_are_inclusive(client, world: World, percent):
    created = await create(client, world.admin, benefit_discount_matching_percent=percent)
    assert created["benefit_discount_matching_percent"] == f"{float(percent):.2f}"


@pytest.mark.parametrize("mode", ["mixed", "same", "distinct"])
async def test_every_subevent_mode_is_accepted(client, world: World, mode):
    assert (await create(client, world.admin, subevent_mode=mode))["subevent_mode"] == mode


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ({"condition_min_count": 2, "condition_min_value": "10.00"}, "non_field_errors"),
        ({"subevent_mode": "distinct", "condition_min_value": "10.00"}, "condition_min_value"),
        ({"subevent_mode": "distinct", "benefit_same_products": False}, "subevent_mode"),
        (
            {"benefit_only_apply_to_cheapest_n_matches": 1},
            "benefit_only_apply_to_cheapest_n_matches",
        ),
        (
            {"benefit_only_apply_to_cheapest_n_matches": 1, "condition_min_value": "5"},
            "benefit_only_apply_to_cheapest_n_matches",
        ),
        ({"benefit_same_products": False}, "benefit_limit_products"),
        (
            {"available_from": "2030-02-01T00:00:00Z", "available_until": "2030-01-01T00:00:00Z"},
            "available_until",
        ),
        (
            {
                "subevent_date_from": "2030-02-01T00:00:00Z",
                "subevent_date_until": "2030-01-31T23:59:59Z",
            },
            "subevent_date_until",
        ),
    ],
)
async def test_cross_field_rules(client, world: World, body, key):
    response = await client.post(DISCOUNTS, json=body, headers=auth(world.admin))
    errors = assert_field_errors(response, key)
    if "benefit_same_products" not in body:
        assert list(errors) == [key]


async def test_cross_field_rules_that_hold(client, world: World, items):
    ok = [
        {"condition_min_count": 3, "benefit_only_apply_to_cheapest_n_matches": 1},
        {"condition_min_value": "50.00"},
        {"subevent_mode": "distinct", "condition_min_count": 2},
        {"benefit_same_products": False, "benefit_limit_products": [items[0]]},
        {"available_from": "2030-01-01T00:00:00Z", "available_until": "2030-01-01T00:00:00Z"},
    ]
    for body in ok:
        response = await client.post(DISCOUNTS, json=body, headers=auth(world.admin))
        assert response.status_code == 201, (body, response.text)


@pytest.mark.parametrize("field", ["condition_limit_products", "benefit_limit_products"])
async def test_items_of_another_event_are_refused(client, world: World, factory, items, field):
    foreign = await item(factory, world.other_event)
    body = {field: [items[0], foreign.id, 99999], "benefit_same_products": False}
    body.setdefault("benefit_limit_products", [items[0]])
    response = await client.post(DISCOUNTS, json=body, headers=auth(world.admin))
    errors = assert_field_errors(response, field)
    assert errors[field] == [
        f'Invalid pk "{foreign.id}" - object does not exist.',
        'Invalid pk "99999" - object does not exist.',
    ]


async def test_items_of_another_event_are_refused_on_patch(client, world: World, factory, items):
    created = await create(client, world.admin, condition_limit_products=[items[0]])
    foreign = await item(factory, world.other_event)
    url = f"{DISCOUNTS}{created['id']}/"
    response = await client.patch(
        url, json={"condition_limit_products": [foreign.id]}, headers=auth(world.admin)
    )
    assert_field_errors(response, "condition_limit_products")
    fetched = (await client.get(url, headers=auth(world.admin))).json()
    assert fetched["condition_limit_products"] == [items[0]]


# -- list, filter, ordering ------------------------------------------------------------------


async def test_list_filter_and_ordering(client, world: World, factory: Factory):
    a = await discount(factory, world.event, position=3, active=True)
    b = await discount(factory, world.event, position=1, active=False)
    c = await discount(factory, world.event, position=2, active=True)
    d = await discount(factory, world.event, position=1, active=True)
    await discount(factory, world.other_event, position=0)

    async def ids(query: str = "") -> list[int]:
        response = await client.get(f"{DISCOUNTS}{query}", headers=auth(world.admin))
        assert response.status_code == 200, response.text
        return [r["id"] for r in response.json()["results"]]

    assert await ids() == [b.id, d.id, c.id, a.id]
    assert await ids("?ordering=position") == [b.id, d.id, c.id, a.id]
    assert await ids("?ordering=-position") == [a.id, c.id, d.id, b.id]
    assert await ids("?ordering=id") == [a.id, b.id, c.id, d.id]
    assert await ids("?ordering=-id") == [d.id, c.id, b.id, a.id]
    assert await ids("?active=true") == [d.id, c.id, a.id]
    assert await ids("?active=false") == [b.id]
    assert await ids("?active=false&ordering=-id") == [b.id]
    assert await ids("?ordering=internal_name") == await ids("")  # unknown: ignored
    response = await client.get(f"{DISCOUNTS}?active=perhaps", headers=auth(world.admin))
    assert_field_errors(response, "active")


async def test_list_takes_a_fixed_number_of_queries(client, world, factory, count_queries):
    products = [await item(factory, world.event) for _ in range(3)]
    counts = []
    made = 0
    for total in (5, 60):
        while made < total:
            await discount(
                factory,
                world.event,
                position=made,
                condition_items=products[:2],
                benefit_items=products[1:],
            )
            made += 1
        with count_queries() as q:
            response = await client.get(DISCOUNTS, headers=auth(world.admin))
        body = response.json()
        assert body["count"] == total
        assert all(len(r["benefit_limit_products"]) == 2 for r in body["results"])
        counts.append(q.count)
    assert counts[0] == counts[1]


async def test_another_events_discount_is_not_found(client, world: World, factory):
    foreign = await discount(factory, world.other_event)
    url = f"{DISCOUNTS}{foreign.id}/"
    assert (await client.get(url, headers=auth(world.admin))).status_code == 404
    assert (await client.patch(url, json={}, headers=auth(world.admin))).status_code == 404
    assert (await client.delete(url, headers=auth(world.admin))).status_code == 404
    response = await client.get(f"{OTHER}{foreign.id}/", headers=auth(world.outsider))
    assert response.status_code == 200


# -- delete and permissions ------------------------------------------------------------------


async def test_delete(client, world: World, items):
    created = await create(client, world.admin, condition_limit_products=items)
    url = f"{DISCOUNTS}{created['id']}/"
    assert (await client.delete(url, headers=auth(world.admin))).status_code == 204
    assert (await client.get(url, headers=auth(world.admin))).status_code == 404
    assert (await client.delete(url, headers=auth(world.admin))).status_code == 404


async def test_reading_needs_no_permission_writing_needs_items_write(client, world, factory):
    existing = await discount(factory, world.event)
    url = f"{DISCOUNTS}{existing.id}/"
    others = [p for p in EVENT_PERMISSIONS if p != "event.items:write"]
    weak = await factory.token(await factory.team(world.org, event_permissions=others))
    assert (await client.get(DISCOUNTS, headers=auth(world.nobody))).status_code == 200
    assert (await client.get(url, headers=auth(world.nobody))).status_code == 200
    assert (await client.post(DISCOUNTS, json={}, headers=auth(weak))).status_code == 403
    assert (await client.put(url, json={}, headers=auth(weak))).status_code == 403
    assert (await client.delete(url, headers=auth(weak))).status_code == 403
    strong = await factory.token(
        await factory.team(world.org, event_permissions=["event.items:write"])
    )
    assert (await client.post(DISCOUNTS, json={}, headers=auth(strong))).status_code == 201
