"""Tax rules: round trip, PUT / PATCH, validation, the default flag, delete and in-use."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from admit.auth.permissions import EVENT_PERMISSIONS
from admit.models import Item, TaxRule
from tests.catalog_taxes.helpers import item, tax_rule
from tests.factories import Factory, World, auth

RULES = "/api/v1/organizers/acme/events/summit/taxrules/"
OTHER_RULES = "/api/v1/organizers/rival/events/expo/taxrules/"

FULL: dict[str, Any] = {
    "name": {"en": "VAT", "de": "MwSt"},
    "internal_name": "standard VAT",
    "rate": "19.00",
    "code": "S/standard",
    "price_includes_tax": False,
    "default": True,
    "eu_reverse_charge": True,
    "home_country": "DE",
    "keep_gross_if_rate_changes": True,
    "custom_rules": [
        {
            "country": "EU",
            "address_type": "business_vat_id",
            "action": "reverse",
            "code": "AE",
            "invoice_text": {"en": "Reverse charge", "de": "Steuerschuldnerschaft"},
        },
        {"country": "AT", "address_type": "individual", "action": "vat", "rate": "20.00"},
        {"country": "ZZ", "address_type": "", "action": "no", "code": "E/VATEX-EU-79-C"},
        {"country": "CH", "address_type": "business", "action": "block"},
        {"country": "US", "address_type": "", "action": "require_approval", "rate": "0.00"},
    ],
}

DEFAULTS: dict[str, Any] = {
    "internal_name": None,
    "code": None,
    "price_includes_tax": True,
    "default": False,
    "eu_reverse_charge": False,
    "home_country": "",
    "keep_gross_if_rate_changes": False,
    "custom_rules": None,
}


def assert_field_errors(response: Any, *fields: str) -> dict:
    assert response.status_code == 400, response.text
    body = response.json()
    assert isinstance(body, dict) and body, body
    for field in fields:
        assert field in body, body
    return body


async def create(client: Any, token: str, **fields: Any) -> dict:
    fields.setdefault("name", {"en": "VAT"})
    fields.setdefault("rate", "19.00")
    response = await client.post(RULES, json=fields, headers=auth(token))
    assert response.status_code == 201, response.text
    return response.json()


# -- create / read ---------------------------------------------------------------------------


async def test_round_trip_every_field(client, world: World):
    created = await create(client, world.admin, **FULL)
    fetched = (await client.get(f"{RULES}{created['id']}/", headers=auth(world.admin))).json()
    assert created == fetched
    assert set(fetched) == {"id", *FULL}
    for key, value in FULL.items():
        assert fetched[key] == value, key


async def test_minimal_create_takes_the_defaults(client, world: World):
    created = await create(client, world.admin, name="VAT", rate="7")
    assert created["name"] == {"en": "VAT"}
    assert created["rate"] == "7.00"
    for key, value in DEFAULTS.items():
        assert created[key] == value, key


@pytest.mark.parametrize("sent", [{}, {"internal_name": ""}, {"internal_name": None}])
async def test_unset_internal_name_is_null_everywhere(client, world: World, sent):
    created = await create(client, world.admin, name="VAT", rate="7", **sent)
    url = f"{RULES}{created['id']}/"
    fetched = (await client.get(url, headers=auth(world.admin))).json()
    listed = (await client.get(RULES, headers=auth(world.admin))).json()["results"]
    assert created["internal_name"] is fetched["internal_name"] is None
    assert [r["internal_name"] for r in listed] == [None]
    named = await client.patch(url, json={"internal_name": "x"}, headers=auth(world.admin))
    assert named.json()["internal_name"] == "x"
    cleared = await client.patch(url, json={"internal_name": None}, headers=auth(world.admin))
    assert cleared.json()["internal_name"] is None


@pytest.mark.parametrize("missing", ["name", "rate"])
async def test_name_and_rate_are_required(client, world: World, missing):
    body = {"name": {"en": "VAT"}, "rate": "19.00"}
    del body[missing]
    response = await client.post(RULES, json=body, headers=auth(world.admin))
    assert assert_field_errors(response, missing)[missing] == ["This field is required."]


async def test_list_is_ordered_by_id_and_paginated(client, world: World, factory: Factory):
    ids = [(await tax_rule(factory, world.event, rate=r)).id for r in (7, 19, 0)]
    await tax_rule(factory, world.other_event)
    body = (await client.get(RULES, headers=auth(world.admin))).json()
    assert body["count"] == 3
    assert [r["id"] for r in body["results"]] == sorted(ids)
    page = (await client.get(f"{RULES}?page_size=2&page=2", headers=auth(world.admin))).json()
    assert [r["id"] for r in page["results"]] == [max(ids)]
    assert (await client.get(f"{RULES}?page=3", headers=auth(world.admin))).status_code == 404


async def test_list_takes_a_fixed_number_of_queries(client, world, factory, count_queries):
    counts = []
    await client.get(RULES, headers=auth(world.admin))  # warm the credential cache
    for total in (5, 60):
        while await _count(factory) < total:
            await tax_rule(factory, world.event)
        with count_queries() as q:
            response = await client.get(RULES, headers=auth(world.admin))
        assert response.json()["count"] == total
        counts.append(q.count)
    assert counts[0] == counts[1]


async def _count(factory: Factory) -> int:
    async with factory.sessionmaker() as session:
        return len((await session.scalars(select(TaxRule.id))).all())


async def test_another_events_rule_is_not_found(client, world: World, factory: Factory):
    foreign = await tax_rule(factory, world.other_event)
    url = f"{RULES}{foreign.id}/"
    assert (await client.get(url, headers=auth(world.admin))).status_code == 404
    response = await client.patch(url, json={"rate": "1.00"}, headers=auth(world.admin))
    assert response.status_code == 404
    assert (await client.delete(url, headers=auth(world.admin))).status_code == 404
    response = await client.get(f"{OTHER_RULES}{foreign.id}/", headers=auth(world.outsider))
    assert response.json()["rate"] == "19.00"


async def test_unknown_id_is_404(client, world: World):
    response = await client.get(f"{RULES}999/", headers=auth(world.admin))
    assert response.status_code == 404
    assert response.json() == {"detail": "Not found."}


# -- update ----------------------------------------------------------------------------------


async def test_patch_changes_only_the_fields_sent(client, world: World):
    created = await create(client, world.admin, **FULL)
    url = f"{RULES}{created['id']}/"
    response = await client.patch(url, json={"rate": "20.00"}, headers=auth(world.admin))
    assert response.status_code == 200, response.text
    assert response.json() == {**created, "rate": "20.00"}
    assert (await client.get(url, headers=auth(world.admin))).json()["rate"] == "20.00"


async def test_put_keeps_omitted_fields(client, world: World):
    created = await create(client, world.admin, **FULL)
    url = f"{RULES}{created['id']}/"
    response = await client.put(
        url, json={"name": "Reduced", "rate": "7"}, headers=auth(world.admin)
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body == {**created, "name": {"en": "Reduced"}, "rate": "7.00"}


async def test_put_requires_the_required_fields(client, world: World):
    created = await create(client, world.admin)
    url = f"{RULES}{created['id']}/"
    response = await client.put(url, json={"name": "VAT"}, headers=auth(world.admin))
    assert_field_errors(response, "rate")


async def test_patch_validates_the_merged_state(client, world: World):
    created = await create(client, world.admin, home_country="DE", eu_reverse_charge=True)
    url = f"{RULES}{created['id']}/"
    response = await client.patch(url, json={"home_country": ""}, headers=auth(world.admin))
    assert_field_errors(response, "home_country")
    response = await client.patch(url, json={"home_country": None}, headers=auth(world.admin))
    assert_field_errors(response, "home_country")
    response = await client.patch(url, json={"eu_reverse_charge": False}, headers=auth(world.admin))
    assert response.status_code == 200


async def test_patch_of_custom_rules_keeps_them_valid(client, world: World):
    created = await create(client, world.admin, **FULL)
    url = f"{RULES}{created['id']}/"
    response = await client.patch(url, json={"internal_name": "x"}, headers=auth(world.admin))
    assert response.json()["custom_rules"] == FULL["custom_rules"]
    response = await client.patch(url, json={"custom_rules": None}, headers=auth(world.admin))
    assert response.json()["custom_rules"] is None
    response = await client.patch(url, json={"custom_rules": []}, headers=auth(world.admin))
    assert response.json()["custom_rules"] == []


# -- the default flag ------------------------------------------------------------------------


async def test_one_default_rule_per_event(client, world: World, factory: Factory):
    foreign = await tax_rule(factory, world.other_event, default=True)
    first = await create(client, world.admin, default=True)
    second = await create(client, world.admin)
    assert second["default"] is False
    url = f"{RULES}{second['id']}/"
    response = await client.patch(url, json={"default": True}, headers=auth(world.admin))
    assert response.json()["default"] is True
    first_now = (await client.get(f"{RULES}{first['id']}/", headers=auth(world.admin))).json()
    assert first_now["default"] is False
    third = await create(client, world.admin, default=True)
    defaults = [
        r["id"]
        for r in (await client.get(RULES, headers=auth(world.admin))).json()["results"]
        if r["default"]
    ]
    assert defaults == [third["id"]]
    async with factory.sessionmaker() as session:
        assert (await session.get(TaxRule, foreign.id)).default is True


async def test_unsetting_default_leaves_no_default(client, world: World):
    rule = await create(client, world.admin, default=True)
    url = f"{RULES}{rule['id']}/"
    response = await client.patch(url, json={"default": False}, headers=auth(world.admin))
    assert response.json()["default"] is False


# -- validation ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("name", ""),
        ("name", {"en": " "}),
        ("name", None),
        ("rate", "-0.01"),
        ("rate", "100.01"),
        ("rate", "abc"),
        ("rate", "19.001"),
        ("rate", True),
        ("rate", None),
        ("code", "S"),
        ("code", "S/other"),
        ("code", "E/"),
        ("code", "E/VATEX-eu-79-c"),
        ("code", "E/79"),
        ("code", "X"),
        ("code", 5),
        ("home_country", "XX"),
        ("home_country", "de"),
        ("home_country", "DEU"),
        ("price_includes_tax", "maybe"),
        ("default", None),
        ("eu_reverse_charge", "x"),
        ("keep_gross_if_rate_changes", 3),
        ("internal_name", "x" * 191),
        ("custom_rules", {"country": "DE"}),
        ("custom_rules", "rules"),
    ],
)
async def test_invalid_values_are_400_keyed_by_field(client, world: World, field, value):
    body = {"name": "VAT", "rate": "19.00", field: value}
    response = await client.post(RULES, json=body, headers=auth(world.admin))
    assert_field_errors(response, field)


@pytest.mark.parametrize(
    "code",
    [*"S/standard S/reduced S/averaged AE O E E/VATEX-EU-132-1F Z G K L M B".split(), None],
)
async def test_every_listed_code_is_accepted(client, world: World, code):
    assert (await create(client, world.admin, code=code))["code"] == code


@pytest.mark.parametrize("rate", ["0", "0.00", "100", "100.00", "7.5", 19])
async def test_rate_bounds_are_inclusive(client, world: World, rate):
    created = await create(client, world.admin, rate=rate)
    assert created["rate"] == f"{float(rate):.2f}"


async def test_reverse_charge_needs_a_home_country(client, world: World):
    response = await client.post(
        RULES,
        json={"name": "VAT", "rate": "19", "eu_reverse_charge": True},
        headers=auth(world.admin),
    )
    assert list(assert_field_errors(response, "home_country")) == ["home_country"]


async def test_home_country_null_means_empty(client, world: World):
    assert (await create(client, world.admin, home_country=None))["home_country"] == ""


@pytest.mark.parametrize(
    ("rule", "key"),
    [
        ({"address_type": "", "action": "vat"}, "country"),
        ({"country": "DE", "action": "vat"}, "address_type"),
        ({"country": "DE", "address_type": ""}, "action"),
        ({"country": "XX", "address_type": "", "action": "vat"}, "country"),
        ({"country": "de", "address_type": "", "action": "vat"}, "country"),
        ({"country": "DE", "address_type": "company", "action": "vat"}, "address_type"),
        ({"country": "DE", "address_type": "", "action": "tax"}, "action"),
        ({"country": "DE", "address_type": "", "action": "vat", "rate": "101"}, "rate"),
        ({"country": "DE", "address_type": "", "action": "vat", "rate": "-1"}, "rate"),
        ({"country": "DE", "address_type": "", "action": "vat", "rate": "x"}, "rate"),
        ({"country": "DE", "address_type": "", "action": "vat", "code": "Q"}, "code"),
        ({"country": "DE", "address_type": "", "action": "vat", "invoice_text": 3}, "invoice_text"),
        ({"country": "DE", "address_type": "", "action": "vat", "colour": "red"}, "colour"),
    ],
)
async def test_custom_rule_structure_is_validated(client, world: World, rule, key):
    good = {"country": "ZZ", "address_type": "", "action": "no"}
    body = {"name": "VAT", "rate": "19", "custom_rules": [good, rule]}
    response = await client.post(RULES, json=body, headers=auth(world.admin))
    errors = assert_field_errors(response, "custom_rules")["custom_rules"]
    assert errors[0] == {} and key in errors[1], errors


async def test_custom_rule_that_is_not_an_object(client, world: World):
    body = {"name": "VAT", "rate": "19", "custom_rules": ["vat"]}
    response = await client.post(RULES, json=body, headers=auth(world.admin))
    assert_field_errors(response, "custom_rules")


async def test_custom_rule_form_keys_are_dropped(client, world: World):
    rule = {"country": "DE", "address_type": "", "action": "vat", "ORDER": 1, "DELETE": False}
    created = await create(client, world.admin, custom_rules=[rule])
    assert created["custom_rules"] == [{"country": "DE", "address_type": "", "action": "vat"}]


async def test_custom_rule_rate_is_normalised(client, world: World):
    rule = {"country": "DE", "address_type": "", "action": "vat", "rate": "7", "invoice_text": "x"}
    created = await create(client, world.admin, custom_rules=[rule])
    assert created["custom_rules"][0]["rate"] == "7.00"
    assert created["custom_rules"][0]["invoice_text"] == {"en": "x"}


async def test_read_only_id_is_ignored(client, world: World):
    created = await create(client, world.admin, id=4242)
    assert created["id"] != 4242


# -- delete ----------------------------------------------------------------------------------


async def test_delete(client, world: World):
    rule = await create(client, world.admin)
    url = f"{RULES}{rule['id']}/"
    assert (await client.delete(url, headers=auth(world.admin))).status_code == 204
    assert (await client.get(url, headers=auth(world.admin))).status_code == 404


async def test_delete_refused_while_an_item_uses_the_rule(client, world: World, factory):
    rule = await tax_rule(factory, world.event)
    product = await item(factory, world.event, tax_rule_id=rule.id)
    url = f"{RULES}{rule.id}/"
    response = await client.delete(url, headers=auth(world.admin))
    assert response.status_code == 403
    assert response.json() == {
        "detail": "This tax rule can not be deleted as it is currently in use."
    }
    assert (await client.get(url, headers=auth(world.admin))).status_code == 200
    async with factory.sessionmaker() as session:
        (await session.get(Item, product.id)).tax_rule_id = None
        await session.commit()
    assert (await client.delete(url, headers=auth(world.admin))).status_code == 204
    async with factory.sessionmaker() as session:
        assert (await session.scalars(select(TaxRule).where(TaxRule.id == rule.id))).first() is None


# -- permissions -----------------------------------------------------------------------------


async def test_reading_needs_no_permission_writing_needs_tax_write(client, world, factory):
    rule = await tax_rule(factory, world.event)
    others = [p for p in EVENT_PERMISSIONS if p != "event.settings.tax:write"]
    weak = await factory.token(await factory.team(world.org, event_permissions=others))
    assert (await client.get(RULES, headers=auth(world.nobody))).status_code == 200
    url = f"{RULES}{rule.id}/"
    assert (await client.get(url, headers=auth(world.nobody))).status_code == 200
    body = {"name": "VAT", "rate": "19"}
    assert (await client.post(RULES, json=body, headers=auth(weak))).status_code == 403
    assert (await client.patch(url, json=body, headers=auth(weak))).status_code == 403
    assert (await client.delete(url, headers=auth(weak))).status_code == 403
    strong = await factory.token(
        await factory.team(world.org, event_permissions=["event.settings.tax:write"])
    )
    assert (await client.post(RULES, json=body, headers=auth(strong))).status_code == 201
