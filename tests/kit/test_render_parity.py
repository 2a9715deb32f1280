"""Every declared resource with a renderer answers its GETs byte for byte as its read schema
does (the Pydantic path), on rich data: money with its places, datetimes with microseconds
and offsets, i18n dicts with several languages, nulls, nested lists empty and full.

Generated over ``kit.resources.crud.MOUNTED``: a renderer added to any resource is compared here,
and fails the test until the data below gives it rows to compare.
"""

from __future__ import annotations

import difflib
import json
import re
from typing import Any

import httpx
import pytest

from admit.kit.resources import crud
from tests.factories import Factory, World, auth
from tests.seating.helpers import layout
from tests.uploads.helpers import upload_png

ORG = "/api/v1/organizers/acme"
E = f"{ORG}/events/summit"
S = f"{ORG}/events/series"
WHEN = "2030-06-01T10:00:00.123456+02:00"


async def _post(client: httpx.AsyncClient, h: dict[str, str], url: str, body: Any) -> Any:
    response = await client.post(url, json=body, headers=h)
    assert response.status_code == 201, (url, response.text)
    return response.json()


async def _organizer(
    client: httpx.AsyncClient, h: dict[str, str], factory: Factory, world: World
) -> str:
    """Gates, seating plans, meta properties, membership types and a team with members,
    invites and tokens; the team's id."""
    await _post(client, h, f"{ORG}/meta_properties/", {"name": "genre", "default": "rock"})
    await _post(
        client, h, f"{ORG}/meta_properties/", {"name": "age", "allowed_values": ["adult", "kid"]}
    )
    await _post(client, h, f"{ORG}/membershiptypes/", {"name": {"en": "Day", "de": "Tag"}})
    for name, identifier in (("North", "n1"), ("Süd", "")):
        await _post(client, h, f"{ORG}/gates/", {"name": name, "identifier": identifier})
    for name in ("Hall", "Arena"):
        await _post(client, h, f"{ORG}/seatingplans/", {"name": name, "layout": layout()})
    members = [await factory.user(fullname=name) for name in ("Ada", None)]
    team = await factory.team(world.org, members=members)
    for email in ("a@example.org", "b@example.org"):
        await _post(client, h, f"{ORG}/teams/{team.id}/invites/", {"email": email})
    for name in ("sync", "export"):
        await _post(client, h, f"{ORG}/teams/{team.id}/tokens/", {"name": name})
    return str(team.id)


async def _seed(client: httpx.AsyncClient, h: dict[str, str]) -> dict[str, str]:
    """A rich catalog in ``summit`` and a series ``series``; the URL parameters to use."""
    r = await client.patch(
        f"{E}/", json={"item_meta_properties": {"color": "blue", "size": ""}}, headers=h
    )
    assert r.status_code == 200, r.text
    member = await _post(client, h, f"{ORG}/membershiptypes/", {"name": {"en": "Member"}})
    vat = await _post(
        client,
        h,
        f"{E}/taxrules/",
        {
            "name": {"en": "VAT", "de": "MwSt"},
            "rate": "19.00",
            "code": "S/standard",
            "custom_rules": [
                {"country": "AT", "address_type": "", "action": "vat", "rate": "20.00"}
            ],
        },
    )
    await _post(
        client,
        h,
        f"{E}/taxrules/",
        {"name": {"en": "Reduced"}, "rate": "7.5", "internal_name": "r"},
    )
    addons = await _post(
        client, h, f"{E}/categories/", {"name": {"en": "Extras"}, "is_addon": True}
    )
    drinks = await _post(
        client, h, f"{E}/categories/", {"name": {"en": "Drinks"}, "is_addon": True}
    )
    tickets = await _post(
        client,
        h,
        f"{E}/categories/",
        {
            "name": {"en": "Tickets", "de": "Eintrittskarten"},
            "description": {"en": "Grüße"},
            "position": 1,
        },
    )
    picture = await upload_png(client, h["Authorization"].split()[1])
    ticket = await _post(
        client,
        h,
        f"{E}/items/",
        {
            "name": {"en": "Ticket", "de": "Karte"},
            "default_price": "23",
            "category": tickets["id"],
            "tax_rule": vat["id"],
            "description": {"en": "Entry", "fr": "Entrée"},
            "admission": True,
            "available_from": WHEN,
            "original_price": "30.10",
            "meta_data": {"color": "red"},
            "picture": picture,
            "limit_sales_channels": ["web"],
            "all_sales_channels": False,
            "variations": [
                {"value": {"en": "Regular"}, "position": 1},
                {
                    "value": {"en": "VIP", "de": "VIP"},
                    "default_price": "1234.05",
                    "meta_data": {"size": "XL"},
                    "available_until": WHEN,
                },
            ],
            "addons": [
                {"addon_category": addons["id"], "max_count": 2, "price_included": True},
                {"addon_category": drinks["id"], "min_count": 1, "position": 1},
            ],
        },
    )
    shirt = await _post(
        client,
        h,
        f"{E}/items/",
        {
            "name": {"en": "Shirt"},
            "default_price": "0",
            "category": addons["id"],
            "free_price": True,
        },
    )
    await _post(
        client,
        h,
        f"{E}/items/",
        {
            "name": {"en": "Bundle"},
            "default_price": "10.5",
            "require_membership": True,
            "require_membership_types": [member["id"]],
            "bundles": [{"bundled_item": shirt["id"], "count": 2, "designated_price": "1.5"}],
        },
    )
    await _post(
        client,
        h,
        f"{E}/categories/",
        {
            "name": {"en": "Cross"},
            "cross_selling_mode": "both",
            "cross_selling_condition": "products",
            "cross_selling_match_products": [shirt["id"], ticket["id"]],
        },
    )
    variations = [v["id"] for v in ticket["variations"]]
    poster = await _post(
        client, h, f"{E}/items/", {"name": {"en": "Poster"}, "default_price": "1", "active": False}
    )
    bundles = f"{E}/items/{ticket['id']}/bundles/"
    await _post(client, h, bundles, {"bundled_item": shirt["id"]})
    await _post(
        client,
        h,
        bundles,
        {"bundled_item": poster["id"], "count": 3, "designated_price": "2.25"},
    )
    await _post(
        client,
        h,
        f"{E}/discounts/",
        {
            "internal_name": "Two for one",
            "condition_all_products": False,
            "condition_limit_products": [shirt["id"], ticket["id"]],
            "condition_min_count": 2,
            "benefit_discount_matching_percent": "50",
            "available_from": WHEN,
        },
    )
    await _post(
        client,
        h,
        f"{E}/discounts/",
        {"all_sales_channels": False, "limit_sales_channels": ["web"], "position": 1},
    )
    await _post(client, h, f"{E}/quotas/", {"name": "Unlimited", "items": [shirt["id"]]})
    await _post(
        client,
        h,
        f"{E}/quotas/",
        {
            "name": "Hall",
            "size": 10,
            "items": [ticket["id"], shirt["id"]],
            "variations": variations,
        },
    )
    choice = await _post(
        client,
        h,
        f"{E}/questions/",
        {
            "question": {"en": "Meal?", "de": "Essen?"},
            "type": "C",
            "identifier": "meal",
            "required": True,
            "items": [ticket["id"], shirt["id"]],
            "options": [
                {"answer": {"en": "Fish"}, "identifier": "fish"},
                {"answer": {"en": "Veg"}, "identifier": "veg", "position": 2},
            ],
        },
    )
    await _post(
        client,
        h,
        f"{E}/questions/",
        {
            "question": {"en": "How many?"},
            "type": "N",
            "identifier": "count",
            "valid_number_min": "1.5",
            "help_text": {"en": "A number"},
            "dependency_question": choice["id"],
            "dependency_values": [choice["options"][0]["identifier"]],
        },
    )
    await _post(
        client,
        h,
        f"{E}/questions/",
        {
            "question": {"en": "When?"},
            "type": "D",
            "identifier": "when",
            "valid_date_min": "2030-01-02",
        },
    )
    await _post(
        client,
        h,
        f"{E}/questions/",
        {
            "question": {"en": "Arrival"},
            "type": "W",
            "identifier": "at",
            "valid_datetime_max": WHEN,
        },
    )
    vouchers = [
        {"code": "PLAIN-001"},
        {
            "code": "SET-0002",
            "price_mode": "set",
            "value": "12.5",
            "item": ticket["id"],
            "valid_until": WHEN,
            "tag": "press",
            "comment": "für Presse",
            "budget": "100",
            "max_usages": 3,
        },
        {"code": "QUOTA-003", "quota": None, "variation": variations[1], "item": ticket["id"]},
    ]
    response = await client.post(f"{E}/vouchers/batch_create/", json=vouchers, headers=h)
    assert response.status_code == 201, response.text

    await _post(
        client,
        h,
        f"{ORG}/events/",
        {"name": {"en": "Series"}, "slug": "series", "date_from": WHEN, "has_subevents": True},
    )
    day = await _post(
        client,
        h,
        f"{S}/items/",
        {"name": {"en": "Day"}, "default_price": "5", "variations": [{"value": {"en": "Kid"}}]},
    )
    await _post(
        client,
        h,
        f"{S}/subevents/",
        {
            "name": {"en": "First", "de": "Erster"},
            "active": True,
            "date_from": WHEN,
            "date_to": "2030-06-02T10:00:00Z",
            "location": {"en": "Hall"},
            "geo_lat": 52.52,
            "geo_lon": 13.4,
            "meta_data": {"genre": "jazz"},
            "item_price_overrides": [{"item": day["id"], "price": "7.1", "available_from": WHEN}],
            "variation_price_overrides": [
                {"variation": day["variations"][0]["id"], "disabled": True}
            ],
        },
    )
    await _post(
        client,
        h,
        f"{S}/subevents/",
        {"name": {"en": "Second"}, "date_from": "2030-07-01T10:00:00Z"},
    )
    return {
        "organizer": "acme",
        "item": str(ticket["id"]),
        "question": str(choice["id"]),
    }


def _urls(resource: crud.Resource[Any], params: dict[str, str]) -> list[str]:
    events = ["summit", "series"] if "{event}" in resource.path else [""]
    urls = []
    for event in events:
        path = resource.path.replace("{event}", event)
        path = re.sub(r"{(\w+)}", lambda m: params[m.group(1)], path)
        urls.append(f"/api/v1{path}/")
    return urls


def _variants(resource: crud.Resource[Any], url: str, count: int) -> list[str]:
    """The list with a small page, another ordering and every boolean filter."""
    out = [url]
    if count > 1:
        out += [f"{url}?page_size=1&page=2", f"{url}?page_size=1&page={count}"]
    if resource.ordering is not None:
        out += [f"{url}?ordering=-{name}" for name in resource.ordering.fields]
    for flt in resource.filters.filters:
        if flt.parse.__name__ == "parse_bool":
            out += [f"{url}?{flt.name}=true", f"{url}?{flt.name}=false"]
    return out


# Resources whose rows this test does not seed, with the test that compares them instead.
COMPARED_ELSEWHERE = {"checkins": "tests/checkin/test_row_parity.py"}


async def _compare(
    client: httpx.AsyncClient, h: dict[str, str], resource: Any, url: str, monkeypatch: Any
) -> httpx.Response:
    rendered = await client.get(url, headers=h)
    with monkeypatch.context() as patch:
        patch.setattr(type(resource), "renderer", None)
        schema = await client.get(url, headers=h)
    assert rendered.status_code == schema.status_code, (url, rendered.text, schema.text)
    if rendered.content != schema.content:
        a = json.dumps(rendered.json(), indent=1, sort_keys=True).splitlines()
        b = json.dumps(schema.json(), indent=1, sort_keys=True).splitlines()
        diff = "\n".join(difflib.unified_diff(b, a, "read schema", "renderer", lineterm=""))
        pytest.fail(f"{url}: the renderer differs from the read schema\n{diff or 'key order'}")
    return rendered


async def test_every_renderer_answers_as_its_read_schema(
    client: httpx.AsyncClient, world: World, factory: Factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = auth(world.admin)
    team = await _organizer(client, h, factory, world)
    params = {**await _seed(client, h), "team": team}
    rendered = [r for r in crud.MOUNTED if r.renderer is not None]
    assert len(rendered) >= 7
    for resource in rendered:
        if resource.name in COMPARED_ELSEWHERE:
            continue
        compared = 0
        for url in _urls(resource, params):
            first = await _compare(client, h, resource, url, monkeypatch)
            if first.status_code == 404:
                continue  # the parent (an item, a question) is the other event's
            body = first.json()
            for variant in _variants(resource, url, body["count"])[1:]:
                await _compare(client, h, resource, variant, monkeypatch)
            if "retrieve" in resource.actions:
                for row in body["results"]:
                    await _compare(client, h, resource, f"{url}{row['id']}/", monkeypatch)
                await _compare(client, h, resource, f"{url}99999/", monkeypatch)  # a 404
            compared += body["count"]
        assert compared >= 2, f"{resource.name}: seed rows to compare its renderer with"
