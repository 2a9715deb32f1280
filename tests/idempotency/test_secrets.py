"""Answers that carry a secret are never kept by ``X-Idempotency-Key`` (they were stored in
plain text for a day beside the hash the README promises): those routes refuse a key with 400
before they run; and keys of callers without credentials are kept per client address, not in
one namespace shared by everyone."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy import func, select

from admit.kit.idempotency.secret import REFUSED
from admit.models import IdempotencyKey, TeamAPIToken, Webhook
from tests.conftest import _no_server_errors
from tests.devices.helpers import device_auth, make_device
from tests.factories import World, auth

ORG = "/api/v1/organizers/acme"


async def count(factory: Any, model: Any) -> int:
    async with factory.sessionmaker() as session:
        return int(await session.scalar(select(func.count()).select_from(model)))


async def stored_bodies(factory: Any) -> list[bytes]:
    async with factory.sessionmaker() as session:
        return [bytes(b or b"") for b in await session.scalars(select(IdempotencyKey.body))]


def refused(response: httpx.Response) -> None:
    assert response.status_code == 400, response.text
    assert response.json() == {"detail": REFUSED}


async def test_a_new_team_token_is_never_kept(client, world: World, factory):
    team = (await client.get(f"{ORG}/teams/", headers=auth(world.admin))).json()["results"][0]
    url = f"{ORG}/teams/{team['id']}/tokens/"
    before = await count(factory, TeamAPIToken)
    for path in (url, url.rstrip("/")):
        keyed = {**auth(world.admin), "X-Idempotency-Key": "token-1"}
        refused(await client.post(path, json={"name": "sync"}, headers=keyed))
    assert await count(factory, TeamAPIToken) == before
    assert await count(factory, IdempotencyKey) == 0
    made = await client.post(url, json={"name": "sync"}, headers=auth(world.admin))
    assert made.status_code == 201 and made.json()["token"]
    # Other keyed writes of the same caller still work (and are kept).
    keyed = {**auth(world.admin), "X-Idempotency-Key": "team-1"}
    first = await client.post(f"{ORG}/teams/", json={"name": "Door"}, headers=keyed)
    again = await client.post(f"{ORG}/teams/", json={"name": "Door"}, headers=keyed)
    assert first.status_code == 201 and again.headers["idempotent-replayed"] == "true"
    assert made.json()["token"].encode() not in b"".join(await stored_bodies(factory))


async def test_device_and_webhook_secrets_are_never_kept(client, world: World, factory):
    _device, token = await make_device(factory, world.org)
    keyed = {**device_auth(token), "X-Idempotency-Key": "roll-1"}
    refused(await client.post("/api/v1/device/roll", headers=keyed))
    info = await client.get("/api/v1/device/info", headers=device_auth(token))
    assert info.status_code == 200  # not rolled: the old token still works
    initialize = {"token": "x", "hardware_brand": "a", "hardware_model": "b"}
    anonymous = {"X-Idempotency-Key": "init-1"}
    refused(await client.post("/api/v1/device/initialize", json=initialize, headers=anonymous))

    hook = {"target_url": "https://hooks.example.org/in", "action_types": ["pretix.event.added"]}
    keyed = {**auth(world.admin), "X-Idempotency-Key": "hook-1"}
    refused(await client.post(f"{ORG}/webhooks/", json=hook, headers=keyed))
    assert await count(factory, Webhook) == 0
    made = await client.post(f"{ORG}/webhooks/", json=hook, headers=auth(world.admin))
    assert made.status_code == 201, made.text
    rotate = f"{ORG}/webhooks/{made.json()['id']}/rotate_secret/"
    refused(await client.post(rotate, headers=keyed))
    assert await count(factory, IdempotencyKey) == 0


async def test_callers_without_credentials_do_not_share_keys(clean_app, world: World):
    """Two clients without a credential send the same key: each gets its own answer (before,
    the second got the first one's stored answer, or a 409 about the first one's body)."""

    def from_address(address: str) -> httpx.AsyncClient:
        transport = httpx.ASGITransport(app=clean_app, client=(address, 40000))
        return httpx.AsyncClient(
            transport=transport,
            base_url="http://testserver",
            event_hooks={"response": [_no_server_errors]},
        )

    key = {"X-Idempotency-Key": "shared"}
    async with (
        from_address("198.51.100.1") as first,
        from_address("198.51.100.2") as second,
        from_address("198.51.100.3") as third,
    ):
        a = await first.post(f"{ORG}/teams/", json={"name": "A"}, headers=key)
        assert a.status_code == 401
        b = await second.post(f"{ORG}/teams/", json={"name": "B"}, headers=key)
        assert b.status_code == 401, b.text  # not 409 "the body differs"
        c = await third.post(f"{ORG}/teams/", json={"name": "A"}, headers=key)
        assert c.status_code == 401 and "idempotent-replayed" not in c.headers
        # The same client is still answered from its own key.
        d = await first.post(f"{ORG}/teams/", json={"name": "A"}, headers=key)
        assert d.headers.get("idempotent-replayed") == "true"
