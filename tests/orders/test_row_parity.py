"""Orders and positions rendered from rows (``orders/order_rows.py``, the GETs) answer byte
for byte as the ORM renderers (``serialize.py`` + ``downloads_field.py``) that creation,
PATCH and the actions answer with, on data that fills every field: money with its places,
datetimes with microseconds, nulls and empty lists beside full ones, answers of every kind
with chosen options, seats, print logs, check-ins (shown and not), fees and positions
canceled or not, payments and refunds (gift card details), a customer, every order state
and every rule of ``downloads``; each flag (``include_canceled_*``, ``pdf_data``), orderings,
filters and small pages.

A PATCH with an empty body changes nothing and answers through the ORM renderer: it is the
reference each GET is compared with. List results are compared with the details.
"""

from __future__ import annotations

import difflib
import json

import httpx
import orjson
import pytest
from sqlalchemy import select

from admit.models import OrderPosition
from tests.factories import Factory, World, auth
from tests.orders import helpers as oh
from tests.orders import rich

FLAGS = (
    "",
    "?include_canceled_positions=true",
    "?include_canceled_fees=true",
    "?pdf_data=true",
    "?include_canceled_positions=true&include_canceled_fees=true&pdf_data=true",
)


def _diff(url: str, expected: bytes, got: bytes) -> str:
    a = json.dumps(json.loads(expected), indent=1).splitlines()
    b = json.dumps(json.loads(got), indent=1).splitlines()
    text = "\n".join(difflib.unified_diff(a, b, "ORM", "rows", lineterm=""))
    return f"{url}: the rows renderer differs\n{text or 'key order or spacing'}"


async def _compare(client: httpx.AsyncClient, h: dict[str, str], url: str) -> httpx.Response:
    """GET (rows) against PATCH {} (ORM) of the same URL."""
    rows = await client.get(url, headers=h)
    orm = await client.patch(url, json={}, headers=h)
    assert rows.status_code == orm.status_code, (url, rows.text, orm.text)
    if rows.status_code == 200 and rows.content != orm.content:
        pytest.fail(_diff(url, orm.content, rows.content))
    return rows


def _same_as_details(url: str, listed: httpx.Response, details: dict[str, bytes]) -> int:
    assert listed.status_code == 200, (url, listed.text)
    results = listed.json()["results"]
    for result in results:
        key = str(result.get("code", result.get("id")))
        got = orjson.dumps(result)
        if got != details[key]:
            pytest.fail(_diff(url, details[key], got))
    return len(results)


async def test_orders_render_as_the_orm_path(
    client: httpx.AsyncClient, world: World, factory: Factory
) -> None:
    h = auth(world.admin)
    codes, _ = await rich.seed(client, world, factory)
    base = oh.url(world)
    for flags in FLAGS:
        details = {}
        for code in codes:
            detail = await _compare(client, h, f"{base}{code}/{flags}")
            assert detail.status_code == 200
            details[code] = detail.content
        sep = "&" if flags else "?"
        variants = [
            "",
            f"{sep}ordering=-code",
            f"{sep}ordering=status,-datetime",
            f"{sep}page_size=2&page=2",
            f"{sep}page_size=3&page=3",
            f"{sep}status__in=p,N",
            f"{sep}search=ada",
        ]
        seen = 0
        for variant in variants:
            seen += _same_as_details(
                base + flags + variant, await client.get(base + flags + variant, headers=h), details
            )
        assert seen >= len(codes) + 7
        if "pdf_data" not in flags:  # event endpoints only
            organizer = f"/api/v1/organizers/{world.org.slug}/orders/{flags}"
            listed = await client.get(organizer, headers=h)
            assert _same_as_details(organizer, listed, details) == len(codes)
    full = json.loads(details[codes[0]])
    # The data reached every renderer branch (else this test would compare little).
    assert full["customer"] == "CUST42" and full["refunds"][0]["payment"] == 2
    assert full["payments"][1]["details"]["gift_card"]["secret"] == "GIFT-XYZ"
    assert len(full["fees"]) == 2 and len(full["positions"]) == 4
    first = full["positions"][0]
    assert first["seat"]["name"] and len(first["print_logs"]) == 2 and len(first["checkins"]) == 2
    assert first["answers"][1]["option_identifiers"] == ["O0", "O1"] and first["pdf_data"]
    assert full["downloads"] and first["downloads"] and not full["positions"][2]["downloads"]


async def test_positions_render_as_the_orm_path(
    client: httpx.AsyncClient, world: World, factory: Factory
) -> None:
    h = auth(world.admin)
    await rich.seed(client, world, factory)
    base = oh.url(world, "orderpositions/")
    async with factory.sessionmaker() as s:
        ids = list(await s.scalars(select(OrderPosition.id).order_by(OrderPosition.id)))
    for flags in FLAGS:
        details = {}
        for pid in ids:
            detail = await _compare(client, h, f"{base}{pid}/{flags}")
            if detail.status_code == 200:
                details[str(pid)] = detail.content
        assert len(details) >= len(ids) - 1
        sep = "&" if flags else "?"
        for variant in (
            "",
            f"{sep}ordering=-attendee_name",
            f"{sep}ordering=order__code,-positionid",
            f"{sep}page_size=4&page=2",
            f"{sep}has_checkin=true",
            f"{sep}order__status=p",
        ):
            url = base + flags + variant
            _same_as_details(url, await client.get(url, headers=h), details)
    missing = await client.get(f"{base}99999999/", headers=h)
    assert missing.status_code == 404


async def test_creation_answers_as_the_detail(
    client: httpx.AsyncClient, world: World, factory: Factory
) -> None:
    h = auth(world.admin)
    c = await rich.catalog(factory, world)
    created = await client.post(oh.url(world), json=rich.rich_order(c), headers=h)
    assert created.status_code == 201, created.text
    detail = await client.get(f"{oh.url(world)}{created.json()['code']}/", headers=h)
    # Equal as JSON: PostgreSQL keeps a JSONB object's keys in its own order (the invoice
    # address), which the creation answer, rendered from the request's rows, cannot know.
    if detail.json() != created.json():
        pytest.fail(_diff("creation", created.content, detail.content))
