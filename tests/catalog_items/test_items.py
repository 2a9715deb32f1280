"""Items: round trip field by field, defaults, PATCH/PUT, validation, references, delete."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import func, select

from admit.models import Event, ItemAddOn, ItemBundle, ItemVariation
from tests.catalog_items.helpers import (
    assert_errors,
    category,
    item,
    post,
    tax_rule,
    url,
    variation_ids,
)
from tests.catalog_items.test_field_parity import PARITY_DEFAULTS
from tests.factories import World, auth

ALL_CHANNELS = ["web", "api", "box_office", "resellers"]


def full_body(cat_id: int, rule_id: int) -> dict[str, Any]:
    return {
        "name": {"en": "Ticket", "de": "Karte"},
        "internal_name": "tkt",
        "default_price": "23.50",
        "category": cat_id,
        "tax_rule": rule_id,
        "active": False,
        "description": {"en": "Entry"},
        "free_price": True,
        "free_price_suggestion": "30.00",
        "original_price": "40.00",
        "admission": True,
        "personalized": True,
        "position": 7,
        "available_from": "2030-01-01T10:00:00Z",
        "available_until": "2030-02-01T10:00:00Z",
        "require_voucher": True,
        "hide_without_voucher": True,
        "allow_cancel": False,
        "min_per_order": 2,
        "max_per_order": 5,
        "checkin_attention": True,
        "checkin_text": "Check ID",
        "require_approval": True,
        "require_bundling": True,
        "generate_tickets": False,
        "allow_waitinglist": False,
        "show_quota_left": True,
        "issue_giftcard": False,
        "all_sales_channels": False,
        "limit_sales_channels": ["web", "box_office"],
        "meta_data": {"color": "red"},
    }


async def _setup(factory, world: World) -> tuple[int, int]:
    async with factory.sessionmaker() as session:
        event = await session.get(Event, world.event.id)
        event.item_meta_properties = {"color": "blue", "size": "M"}
        await session.commit()
    cat = await category(factory, world.event)
    rule = await tax_rule(factory, world.event, "19.00")
    return cat.id, rule.id


async def test_round_trip_every_field(client, world: World, factory):
    cat_id, rule_id = await _setup(factory, world)
    body = full_body(cat_id, rule_id)
    created = await post(client, world, "items/", body)
    expected = {
        **body,
        "id": created["id"],
        "tax_rate": "19.00",
        "picture": None,
        "sales_channels": ["web", "box_office"],
        "meta_data": {"color": "red", "size": "M"},
        "has_variations": False,
        "variations": [],
        "addons": [],
        "bundles": [],
        **PARITY_DEFAULTS,
    }
    assert created == expected
    got = await client.get(url(f"items/{created['id']}/"), headers=auth(world.admin))
    assert got.status_code == 200
    assert got.json() == expected


async def test_defaults(client, world: World):
    created = await post(client, world, "items/", {"name": "Plain"})
    assert created == {
        "id": created["id"],
        "name": {"en": "Plain"},
        "internal_name": None,
        "default_price": "0.00",
        "category": None,
        "tax_rule": None,
        "tax_rate": "0.00",
        "active": True,
        "description": None,
        "free_price": False,
        "free_price_suggestion": None,
        "original_price": None,
        "admission": False,
        "personalized": False,
        "position": 0,
        "picture": None,
        "available_from": None,
        "available_until": None,
        "require_voucher": False,
        "hide_without_voucher": False,
        "allow_cancel": True,
        "min_per_order": None,
        "max_per_order": None,
        "checkin_attention": False,
        "checkin_text": None,
        "require_approval": False,
        "require_bundling": False,
        "generate_tickets": None,
        "allow_waitinglist": True,
        "show_quota_left": None,
        "issue_giftcard": False,
        "all_sales_channels": True,
        "limit_sales_channels": [],
        "sales_channels": ALL_CHANNELS,
        "meta_data": {},
        "has_variations": False,
        "variations": [],
        "addons": [],
        "bundles": [],
        **PARITY_DEFAULTS,
    }


async def test_default_tax_rule_is_used_on_create_only(client, world: World, factory):
    await tax_rule(factory, world.event, "7.00")
    default = await tax_rule(factory, world.event, "19.00", default=True)
    created = await post(client, world, "items/", {"name": "x"})
    assert created["tax_rule"] == default.id
    assert created["tax_rate"] == "19.00"
    explicit_null = await post(client, world, "items/", {"name": "x", "tax_rule": None})
    assert explicit_null["tax_rule"] == default.id
    # An update never falls back to the default rule: omitted, the rule is kept ...
    path = url(f"items/{created['id']}/")
    body = {"name": "x", "default_price": "1.00"}
    put = await client.put(path, json=body, headers=auth(world.admin))
    assert put.json()["tax_rule"] == default.id
    # ... and an explicit null clears it.
    put = await client.put(path, json={**body, "tax_rule": None}, headers=auth(world.admin))
    assert put.json()["tax_rule"] is None
    assert put.json()["tax_rate"] == "0.00"


async def test_admission_defaults_to_personalized(client, world: World):
    created = await post(client, world, "items/", {"name": "x", "admission": True})
    assert created["personalized"] is True
    chosen = await post(
        client, world, "items/", {"name": "x", "admission": True, "personalized": False}
    )
    assert chosen["personalized"] is False
    path = url(f"items/{created['id']}/")
    patched = await client.patch(path, json={"admission": False}, headers=auth(world.admin))
    assert patched.json()["personalized"] is False


async def test_patch_changes_only_what_is_sent(client, world: World, factory):
    cat_id, rule_id = await _setup(factory, world)
    created = await post(client, world, "items/", full_body(cat_id, rule_id))
    path = url(f"items/{created['id']}/")
    response = await client.patch(
        path, json={"default_price": "12", "position": 1}, headers=auth(world.admin)
    )
    assert response.status_code == 200, response.text
    assert response.json() == {**created, "default_price": "12.00", "position": 1}


async def test_put_keeps_omitted_fields(client, world: World, factory):
    """The reference's PUT: required fields must be sent, omitted optional ones are kept."""
    cat_id, rule_id = await _setup(factory, world)
    created = await post(client, world, "items/", full_body(cat_id, rule_id))
    path = url(f"items/{created['id']}/")
    body = {"name": {"en": "Again"}, "default_price": "12.00"}
    response = await client.put(path, json=body, headers=auth(world.admin))
    assert response.status_code == 200, response.text
    assert response.json() == {**created, **body}
    assert (await client.get(path, headers=auth(world.admin))).json() == {**created, **body}


async def test_put_without_required_fields_is_400(client, world: World, factory):
    created = await post(client, world, "items/", {"name": "x", "default_price": "3.00"})
    path = url(f"items/{created['id']}/")
    response = await client.put(path, json={"name": "y"}, headers=auth(world.admin))
    assert response.status_code == 400
    assert response.json() == {"default_price": ["This field is required."]}
    response = await client.put(path, json={"position": 3}, headers=auth(world.admin))
    assert response.json() == {
        "name": ["This field is required."],
        "default_price": ["This field is required."],
    }
    # A missing required field is reported with the body's other errors.
    response = await client.put(path, json={"position": -1}, headers=auth(world.admin))
    assert response.json() == {
        "position": ["Ensure this value is greater than or equal to 0."],
        "name": ["This field is required."],
        "default_price": ["This field is required."],
    }
    assert (await client.get(path, headers=auth(world.admin))).json() == created


async def test_meta_data_patch_and_unknown_keys(client, world: World, factory):
    await _setup(factory, world)
    created = await post(client, world, "items/", {"name": "x", "meta_data": {"size": "L"}})
    path = url(f"items/{created['id']}/")
    headers = auth(world.admin)
    patched = await client.patch(path, json={"position": 2}, headers=headers)
    assert patched.json()["meta_data"] == {"color": "blue", "size": "L"}
    patched = await client.patch(path, json={"meta_data": {"color": "x"}}, headers=headers)
    assert patched.json()["meta_data"] == {"color": "x", "size": "M"}
    response = await client.patch(path, json={"meta_data": {"nope": "1"}}, headers=headers)
    assert assert_errors(response) == {
        "meta_data": ["Item meta data property 'nope' does not exist."]
    }
    response = await client.patch(path, json={"meta_data": {"color": 5}}, headers=headers)
    assert_errors(response, "meta_data")


async def test_deprecated_sales_channels(client, world: World):
    created = await post(client, world, "items/", {"name": "x", "sales_channels": ["web"]})
    assert created["all_sales_channels"] is False
    assert created["limit_sales_channels"] == ["web"]
    assert created["sales_channels"] == ["web"]
    every = await post(client, world, "items/", {"name": "x", "sales_channels": ALL_CHANNELS})
    assert every["all_sales_channels"] is True
    response = await client.post(
        url("items/"), json={"name": "x", "limit_sales_channels": ["tv"]}, headers=auth(world.admin)
    )
    assert_errors(response, "limit_sales_channels")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "name"),
        ({"name": "x"}, "default_price"),
        ({"name": {"en": ""}}, "name"),
        ({"name": "x", "default_price": "abc"}, "default_price"),
        ({"name": "x", "default_price": "1.234"}, "default_price"),
        ({"name": "x", "default_price": None}, "default_price"),
        ({"name": "x", "original_price": "x"}, "original_price"),
        ({"name": "x", "free_price_suggestion": True}, "free_price_suggestion"),
        ({"name": "x", "min_per_order": 0}, "min_per_order"),
        ({"name": "x", "max_per_order": 0}, "max_per_order"),
        ({"name": "x", "position": -1}, "position"),
        ({"name": "x", "available_from": "tomorrow"}, "available_from"),
        ({"name": "x", "generate_tickets": "maybe"}, "generate_tickets"),
        ({"name": "x", "active": None}, "active"),
        ({"name": "x", "category": True}, "category"),
        ({"name": "x", "category": 999999}, "category"),
        ({"name": "x", "tax_rule": 999999}, "tax_rule"),
        ({"name": "x", "tax_rule": 2**40}, "tax_rule"),
        ({"name": "x", "min_per_order": 5, "max_per_order": 2}, "non_field_errors"),
        (
            {
                "name": "x",
                "available_from": "2030-02-01T00:00:00Z",
                "available_until": "2030-01-01T00:00:00Z",
            },
            "non_field_errors",
        ),
        ({"name": "x", "personalized": True}, "non_field_errors"),
        ({"name": "x", "issue_giftcard": True, "admission": True}, "non_field_errors"),
    ],
)
async def test_validation(client, world: World, body, field):
    if field != "default_price":
        body = {"default_price": "1.00", **body}
    response = await client.post(url("items/"), json=body, headers=auth(world.admin))
    assert_errors(response, field)


async def test_cross_field_rules_apply_to_the_merged_state_on_patch(client, world: World):
    created = await post(client, world, "items/", {"name": "x", "min_per_order": 3})
    path = url(f"items/{created['id']}/")
    headers = auth(world.admin)
    assert_errors(
        await client.patch(path, json={"max_per_order": 2}, headers=headers), "non_field_errors"
    )
    assert_errors(
        await client.patch(path, json={"personalized": True}, headers=headers), "non_field_errors"
    )
    created = await post(client, world, "items/", {"name": "x", "admission": True})
    path = url(f"items/{created['id']}/")
    assert_errors(
        await client.patch(path, json={"issue_giftcard": True}, headers=headers),
        "non_field_errors",
    )


async def test_giftcard_refuses_taxed_rule(client, world: World, factory):
    rule = await tax_rule(factory, world.event, "19.00")
    free = await tax_rule(factory, world.event, "0.00")
    body = {"name": "x", "issue_giftcard": True, "tax_rule": rule.id}
    response = await client.post(
        url("items/"), json={"default_price": "1.00", **body}, headers=auth(world.admin)
    )
    assert_errors(response, "non_field_errors")
    created = await post(client, world, "items/", {**body, "tax_rule": free.id})
    assert created["issue_giftcard"] is True


async def test_references_into_another_event_are_refused(client, world: World, factory):
    cat = await category(factory, world.other_event)
    rule = await tax_rule(factory, world.other_event, "19.00")
    body = {"name": "x", "category": cat.id, "tax_rule": rule.id}
    response = await client.post(
        url("items/"), json={"default_price": "1.00", **body}, headers=auth(world.admin)
    )
    assert assert_errors(response) == {
        "category": [f'Invalid pk "{cat.id}" - object does not exist.'],
        "tax_rule": [f'Invalid pk "{rule.id}" - object does not exist.'],
    }
    mine = await post(client, world, "items/", {"name": "x"})
    response = await client.patch(
        url(f"items/{mine['id']}/"), json={"category": cat.id}, headers=auth(world.admin)
    )
    assert_errors(response, "category")


async def test_other_event_item_is_404(client, world: World, factory):
    foreign = await item(factory, world.other_event)
    headers = auth(world.admin)
    for method in ("GET", "PATCH", "PUT", "DELETE"):
        body = None if method in ("GET", "DELETE") else {"name": "x"}
        response = await client.request(
            method, url(f"items/{foreign.id}/"), json=body, headers=headers
        )
        assert response.status_code == 404
        assert response.json() == {"detail": "Not found."}


async def test_create_with_nested_lists(client, world: World, factory):
    addon_cat = await category(factory, world.event, is_addon=True)
    other = await item(factory, world.event, variations=2)
    other_vars = await variation_ids(factory, other.id)
    body = {
        "name": "Combo",
        "default_price": "10.00",
        "variations": [
            {"value": {"en": "Small"}, "default_price": "8.00", "position": 1},
            {"value": "Large", "active": False},
        ],
        "addons": [
            {
                "addon_category": addon_cat.id,
                "min_count": 1,
                "max_count": 2,
                "position": 3,
                "multi_allowed": True,
                "price_included": True,
            }
        ],
        "bundles": [
            {
                "bundled_item": other.id,
                "bundled_variation": other_vars[1],
                "count": 2,
                "designated_price": "1.50",
            }
        ],
    }
    created = await post(client, world, "items/", body)
    assert created["has_variations"] is True
    large, small = created["variations"]  # ordered by position
    assert small["value"] == {"en": "Small"}
    assert small["default_price"] == "8.00" and small["price"] == "8.00"
    assert large["value"] == {"en": "Large"}
    assert large["default_price"] is None and large["price"] == "10.00"
    assert large["active"] is False
    (addon,) = created["addons"]
    assert {k: v for k, v in addon.items() if k != "id"} == body["addons"][0]
    (bundle,) = created["bundles"]
    assert {k: v for k, v in bundle.items() if k != "id"} == body["bundles"][0]
    got = await client.get(url(f"items/{created['id']}/"), headers=auth(world.admin))
    assert got.json() == created


async def test_nested_errors_are_reported_per_element(client, world: World, factory):
    plain_cat = await category(factory, world.event)
    foreign_cat = await category(factory, world.other_event, is_addon=True)
    with_vars = await item(factory, world.event, variations=1)
    body = {
        "name": "x",
        "variations": [{"value": "ok"}, {"value": ""}],
        "addons": [
            {"addon_category": plain_cat.id},
            {"addon_category": foreign_cat.id},
            {"addon_category": plain_cat.id, "min_count": 3, "max_count": 1},
        ],
        "bundles": [{"bundled_item": with_vars.id}, {"bundled_item": 999999}],
    }
    response = await client.post(
        url("items/"), json={"default_price": "1.00", **body}, headers=auth(world.admin)
    )
    assert response.status_code == 400, response.text
    errors = response.json()
    assert errors["variations"][0] == {}
    assert "value" in errors["variations"][1]
    # Pydantic refuses the whole body first when a nested element is malformed.
    body["variations"] = [{"value": "ok"}]
    response = await client.post(
        url("items/"), json={"default_price": "1.00", **body}, headers=auth(world.admin)
    )
    errors = assert_errors(response, "addons", "bundles")
    assert "addon_category" in errors["addons"][0]
    assert errors["addons"][1] == {
        "addon_category": [f'Invalid pk "{foreign_cat.id}" - object does not exist.']
    }
    assert "non_field_errors" in errors["addons"][2]
    assert errors["bundles"][0] == {
        "bundled_variation": ["A variation needs to be set for this item."]
    }
    assert errors["bundles"][1] == {
        "bundled_item": ['Invalid pk "999999" - object does not exist.']
    }


async def test_nested_lists_are_ignored_on_update(client, world: World):
    created = await post(client, world, "items/", {"name": "x", "variations": [{"value": "A"}]})
    path = url(f"items/{created['id']}/")
    headers = auth(world.admin)
    for method in ("PATCH", "PUT"):
        response = await client.request(
            method,
            path,
            json={
                "name": "y",
                "default_price": "1.00",
                "variations": [],
                "addons": [{"addon_category": 1}],
            },
            headers=headers,
        )
        assert response.status_code == 200, response.text
        assert [v["value"] for v in response.json()["variations"]] == [{"en": "A"}]
        assert response.json()["addons"] == []


async def test_delete_removes_nested_objects(client, world: World, factory):
    addon_cat = await category(factory, world.event, is_addon=True)
    other = await item(factory, world.event)
    created = await post(
        client,
        world,
        "items/",
        {
            "name": "x",
            "variations": [{"value": "A"}],
            "addons": [{"addon_category": addon_cat.id}],
            "bundles": [{"bundled_item": other.id}],
        },
    )
    headers = auth(world.admin)
    response = await client.delete(url(f"items/{created['id']}/"), headers=headers)
    assert response.status_code == 204
    assert (await client.get(url(f"items/{created['id']}/"), headers=headers)).status_code == 404
    async with factory.sessionmaker() as session:
        for model, column in (
            (ItemVariation, ItemVariation.item_id),
            (ItemAddOn, ItemAddOn.base_item_id),
            (ItemBundle, ItemBundle.base_item_id),
        ):
            count = await session.scalar(
                select(func.count()).select_from(model).where(column == created["id"])
            )
            assert count == 0
    # The bundled item itself stays.
    assert (await client.get(url(f"items/{other.id}/"), headers=headers)).status_code == 200


async def test_deleting_a_bundled_item_drops_the_bundle(client, world: World, factory):
    other = await item(factory, world.event)
    created = await post(
        client, world, "items/", {"name": "x", "bundles": [{"bundled_item": other.id}]}
    )
    headers = auth(world.admin)
    assert (await client.delete(url(f"items/{other.id}/"), headers=headers)).status_code == 204
    got = await client.get(url(f"items/{created['id']}/"), headers=headers)
    assert got.json()["bundles"] == []


async def test_internal_name_is_null_when_unset(client, world: World):
    """As the reference shows it: null, not an empty string (items and categories)."""
    headers = auth(world.admin)
    for path, body in (
        ("items/", {"name": "x", "default_price": "1.00"}),
        ("categories/", {"name": "x"}),
    ):
        created = await post(client, world, path, body)
        assert created["internal_name"] is None
        detail = url(f"{path}{created['id']}/")
        listed = (await client.get(url(path), headers=headers)).json()["results"]
        assert [r["internal_name"] for r in listed if r["id"] == created["id"]] == [None]
        named = await client.patch(detail, json={"internal_name": "back"}, headers=headers)
        assert named.json()["internal_name"] == "back"
        cleared = await client.patch(detail, json={"internal_name": None}, headers=headers)
        assert cleared.json()["internal_name"] is None
        assert (await client.get(detail, headers=headers)).json()["internal_name"] is None
