"""The fast lane (PostgreSQL): which requests it answers, what it leaves to the application,
and its credential cache."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from sqlalchemy import update

from admit import app as app_module
from admit.auth.credentials import hash_token
from admit.models import Device, TeamAPIToken
from tests.carts import helpers as carts
from tests.checkin import helpers as h
from tests.factories import World, auth


@pytest.fixture
def answered(clean_app, monkeypatch) -> list[tuple[str, int]]:
    """(route template, status) of every request a lane handler answered itself (or raised
    an error for)."""
    if not clean_app.state.db.fast.native:
        pytest.skip("the fast lane runs on PostgreSQL")
    seen: list[tuple[str, int]] = []
    for route in app_module.LANE.routes:

        def spy(handler: Any, template: str) -> Any:
            async def wrapped(request: Any) -> Any:
                try:
                    response = await handler(request)
                except Exception as exc:  # answered by the lane in the application's shape
                    seen.append((template, getattr(exc, "status", 500)))
                    raise
                if response is not None:
                    seen.append((template, response.status_code))
                return response

            return wrapped

        monkeypatch.setattr(route, "handler", spy(route.handler, route.template))
    return seen


async def _scan_setup(factory, world: World) -> tuple[Any, list[Any]]:
    item = await h.ticket(factory, world.event)
    clist = await h.checkin_list(factory, world.event)
    _, positions = await h.order(factory, world.event, item, n=3)
    return clist, positions


async def test_device_scans_take_the_lane_under_the_device_profile(
    client, world: World, factory, answered
):
    clist, positions = await _scan_setup(factory, world)
    token, device = await h.device(factory, world.org, gate="South")
    response = await h.redeem(
        client, world, positions[0].secret, [clist.id], headers=h.device_auth(token)
    )
    assert response.status_code == 201, response.text
    (checkin,) = response.json()["position"]["checkins"]
    assert checkin["device"] == device.id and checkin["gate"] == device.gate_id
    assert [status for _, status in answered] == [201]
    # A profile without check-in: the lane declines, the application refuses.
    async with factory.sessionmaker() as session:
        await session.execute(
            update(Device).where(Device.id == device.id).values(security_profile="no_scan")
        )
        await session.commit()
    client._transport.app.state.credential_cache.clear()
    denied = await h.redeem(
        client, world, positions[1].secret, [clist.id], headers=h.device_auth(token)
    )
    assert denied.status_code == 403
    assert len(answered) == 1


async def test_scans_with_answers_or_query_parameters_go_through_the_application(
    client, world: World, factory, answered
):
    clist, positions = await _scan_setup(factory, world)
    with_answers = await h.redeem(
        client, world, positions[0].secret, [clist.id], answers={"1": "x"}
    )
    assert with_answers.status_code == 201, with_answers.text
    expanded = await client.post(
        h.rpc_url(world, "redeem") + "?expand=item",
        json={"secret": positions[1].secret, "lists": [clist.id]},
        headers=auth(world.admin),
    )
    assert expanded.status_code == 201, expanded.text
    assert isinstance(expanded.json()["position"]["item"], dict)
    assert answered == []
    plain = await h.redeem(client, world, positions[2].secret, [clist.id])
    assert plain.status_code == 201
    assert [status for _, status in answered] == [201]


async def test_errors_raised_in_the_lane_have_the_applications_shape(
    client, world: World, factory, answered
):
    clist, positions = await _scan_setup(factory, world)
    response = await h.redeem(client, world, positions[0].secret, [clist.id, 999_999])
    assert response.status_code == 400
    assert response.json() == {"lists": ['Invalid pk "999999" - object does not exist.']}
    assert [status for _, status in answered] == [400]
    unknown = await h.redeem(client, world, "no-such-secret", [clist.id])
    assert unknown.status_code == 404 and unknown.json()["reason"] == "invalid"


async def test_a_revoked_token_stops_at_once_in_the_worker_that_revoked_it(
    client, world: World, factory, answered
):
    clist, positions = await _scan_setup(factory, world)
    token, _ = await h.device(factory, world.org)
    headers = h.device_auth(token)
    first = await h.redeem(client, world, positions[0].secret, [clist.id], headers=headers)
    assert first.status_code == 201
    revoke = await client.post("/api/v1/device/revoke", headers=headers)
    assert revoke.status_code == 200, revoke.text
    refused = await h.redeem(client, world, positions[1].secret, [clist.id], headers=headers)
    assert refused.status_code == 401


async def test_elsewhere_a_changed_credential_counts_once_the_cache_entry_expires(
    client, world: World, factory, answered
):
    """A change another worker made (here: straight in the database) is seen within
    ``ADMIT_CREDENTIAL_CACHE_SECONDS``; a new token is never refused for being unknown."""
    ticket = await carts.item(factory, world.event)
    await carts.quota(factory, world.event, 10, [ticket])
    body = {"item": ticket.id, "price": "1"}
    assert (await carts.post(client, world, body)).status_code == 201
    async with factory.sessionmaker() as session:
        await session.execute(
            update(TeamAPIToken)
            .where(TeamAPIToken.token_hash == hash_token(world.admin))
            .values(active=False)
        )
        await session.commit()
    settings = client._transport.app.state.settings
    cache = client._transport.app.state.credential_cache
    assert cache.ttl == settings.credential_cache_seconds > 0
    assert (await carts.post(client, world, body)).status_code == 201  # still cached
    await asyncio.sleep(cache.ttl + 0.05)
    response = await carts.post(client, world, body)
    assert response.status_code == 401
    fresh = await factory.admin_token(world.org)
    response = await client.post(carts.url(world), json=body, headers=auth(fresh))
    assert response.status_code == 201
