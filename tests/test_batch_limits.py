"""Batch routes bound their lists (issue 35): ``vouchers/batch_create`` and
``cartpositions/bulk_create`` took any number of entries in one request (one transaction,
one quota check and write each). Past the documented limit the answer is 400, naming the
list (``non_field_errors`` for a list body, as the reference's list serializers; the named
field for ``render_batch``'s ``parts`` and the seats' ``ids``), and nothing is written."""

from __future__ import annotations

import pytest

from admit.carts import routes as cart_routes
from admit.seating.schemas import BULK_LIMIT as SEATS_LIMIT
from admit.tickets.routes import MAX_PARTS
from admit.vouchers import routes as voucher_routes
from tests.factories import World, auth

E = "/api/v1/organizers/{o}/events/{e}/"


def url(world: World, rest: str) -> str:
    return E.format(o=world.org.slug, e=world.event.slug) + rest


def too_many(limit: int) -> str:
    return f"Ensure this field has no more than {limit} elements."


async def count(client, world: World, rest: str) -> int:
    return (await client.get(url(world, rest), headers=auth(world.admin))).json()["count"]


async def test_voucher_batch_create_limit(client, world: World):
    assert voucher_routes.BATCH_LIMIT == 1000
    body = [{"code": f"CODE{i:05d}"} for i in range(voucher_routes.BATCH_LIMIT + 1)]
    response = await client.post(
        url(world, "vouchers/batch_create/"), json=body, headers=auth(world.admin)
    )
    assert response.status_code == 400, response.text
    assert response.json() == {"non_field_errors": [too_many(1000)]}
    assert await count(client, world, "vouchers/") == 0


async def test_voucher_batch_create_at_the_limit(client, world: World, monkeypatch):
    monkeypatch.setattr(voucher_routes, "BATCH_LIMIT", 3)
    body = [{"code": f"CODE{i}"} for i in range(4)]
    path = url(world, "vouchers/batch_create/")
    refused = await client.post(path, json=body, headers=auth(world.admin))
    assert refused.json() == {"non_field_errors": [too_many(3)]}
    taken = await client.post(path, json=body[:3], headers=auth(world.admin))
    assert taken.status_code == 201, taken.text
    assert await count(client, world, "vouchers/") == 3


async def test_cart_bulk_create_limit(client, world: World, monkeypatch):
    assert cart_routes.BULK_LIMIT == 1000
    path = url(world, "cartpositions/bulk_create/")
    body = [{"item": 1, "price": "1.00"}] * (cart_routes.BULK_LIMIT + 1)
    response = await client.post(path, json=body, headers=auth(world.admin))
    assert response.status_code == 400, response.text
    assert response.json() == {"non_field_errors": [too_many(1000)]}
    monkeypatch.setattr(cart_routes, "BULK_LIMIT", 2)
    response = await client.post(path, json=body[:2], headers=auth(world.admin))
    assert response.status_code == 200, response.text  # per-entry results (unknown item)
    assert len(response.json()["results"]) == 2


@pytest.mark.parametrize(
    ("rest", "field", "limit", "entry"),
    [
        ("ticketpdfrenderer/render_batch/", "parts", MAX_PARTS, {"orderposition": 1}),
        ("seats/bulk_block/", "ids", SEATS_LIMIT, 1),
    ],
)
async def test_other_batches_name_their_field(client, world: World, rest, field, limit, entry):
    response = await client.post(
        url(world, rest), json={field: [entry] * (limit + 1)}, headers=auth(world.admin)
    )
    assert response.status_code == 400, response.text
    assert field in response.json()
