"""X-Idempotency-Key on the framework path: scoping, conflicts, running and expired claims,
server errors that leave the key retryable, the answer committed with the change, the
purge, and a rush of one key on order creation (PostgreSQL)."""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
from typing import Any

import pytest
from sqlalchemy import func, insert, select, update

from admit.db import utcnow
from admit.kit.idempotency import store
from admit.models import Checkin, IdempotencyKey, Order, Team
from admit.teams import routes as team_routes
from tests.checkin import helpers as checkin
from tests.factories import auth
from tests.orders import helpers as orders

TEAMS = "/api/v1/organizers/acme/teams/"


def keyed(token: str, key: str = "k-1") -> dict[str, str]:
    return {**auth(token), "X-Idempotency-Key": key}


async def count(factory: Any, model: Any, *where: Any) -> int:
    async with factory.sessionmaker() as session:
        return int(await session.scalar(select(func.count()).select_from(model).where(*where)))


async def test_without_the_header_nothing_is_stored(client, world, factory):
    r = await client.post(TEAMS, json={"name": "A"}, headers=auth(world.admin))
    assert r.status_code == 201
    assert await client.get(TEAMS, headers=keyed(world.admin)) is not None
    assert await count(factory, IdempotencyKey) == 0


async def test_a_malformed_key_is_400(client, world, factory):
    teams = await count(factory, Team)
    for bad in ("x" * 201, " ", "a\tb"):
        r = await client.post(TEAMS, json={"name": "A"}, headers=keyed(world.admin, bad))
        assert r.status_code == 400
        assert "X-Idempotency-Key" in r.json()["detail"]
    assert await count(factory, Team) == teams


async def test_keys_belong_to_their_credential(client, world, factory):
    other_admin = await factory.admin_token(world.org)
    a = await client.post(TEAMS, json={"name": "A"}, headers=keyed(world.admin))
    b = await client.post(TEAMS, json={"name": "A"}, headers=keyed(other_admin))
    assert (a.status_code, b.status_code) == (201, 201)
    assert a.json()["id"] != b.json()["id"]
    assert "idempotent-replayed" not in b.headers


async def test_another_method_or_path_is_409_naming_it(client, world):
    await client.post(TEAMS, json={"name": "A"}, headers=keyed(world.admin))
    r = await client.post(f"{TEAMS}?x=1", json={"name": "A"}, headers=keyed(world.admin))
    assert r.status_code == 409
    assert r.json()["detail"] == (
        "This idempotency key was already used for another request "
        "(POST /api/v1/organizers/acme/teams/): the path differs."
    )
    r = await client.put(TEAMS, json={"name": "B"}, headers=keyed(world.admin))
    assert r.status_code == 409
    assert r.json()["detail"].endswith("the method and body differ.")


async def _claim_row(factory: Any, token: str, key: str, expires: dt.datetime) -> None:
    credential = hashlib.sha256(f"authorization:Token {token}".encode()).hexdigest()
    body_hash = hashlib.sha256(b'{"name":"A"}').hexdigest()
    async with factory.sessionmaker() as session:
        await session.execute(
            insert(IdempotencyKey).values(
                credential=credential, key=key, method="POST", path=TEAMS, body_hash=body_hash,
                status=None, headers=[], body=b"", created=utcnow(), expires=expires,
            )
        )  # fmt: skip
        await session.commit()


async def test_a_running_claim_is_409_until_its_lease_runs_out(client, world, factory):
    await _claim_row(factory, world.admin, "k-1", utcnow() + store.LEASE)
    body = b'{"name":"A"}'
    headers = {**keyed(world.admin), "Content-Type": "application/json"}
    r = await client.post(TEAMS, content=body, headers=headers)
    assert r.status_code == 409
    assert r.headers["retry-after"] == "1"
    assert r.json() == {"detail": "A request with this idempotency key is still being processed."}
    async with factory.sessionmaker() as session:  # the first request died: its lease ends
        await session.execute(update(IdempotencyKey).values(expires=utcnow()))
        await session.commit()
    teams = await count(factory, Team)
    r = await client.post(TEAMS, content=body, headers=headers)
    assert r.status_code == 201
    again = await client.post(TEAMS, content=body, headers=headers)
    assert (again.status_code, again.content) == (201, r.content)
    assert await count(factory, Team) == teams + 1


async def test_a_server_error_rolls_back_and_frees_the_key(client, world, factory, monkeypatch):
    original = team_routes.service.team_to_read

    def broken(team: Any) -> Any:
        raise RuntimeError("boom")

    teams = await count(factory, Team)
    monkeypatch.setattr(team_routes.service, "team_to_read", broken)
    with pytest.raises((AssertionError, RuntimeError)):  # 500, and the error goes on up
        await client.post(TEAMS, json={"name": "A"}, headers=keyed(world.admin))
    assert await count(factory, Team) == teams
    assert await count(factory, IdempotencyKey) == 0
    monkeypatch.setattr(team_routes.service, "team_to_read", original)
    r = await client.post(TEAMS, json={"name": "A"}, headers=keyed(world.admin))
    assert r.status_code == 201
    assert await count(factory, Team) == teams + 1


async def test_no_change_commits_without_its_answer(client, world, factory, monkeypatch):
    async def failing(*args: Any, **kwargs: Any) -> bool:
        raise RuntimeError("the answer could not be written")

    teams = await count(factory, Team)
    monkeypatch.setattr(store, "write_answer", failing)
    with pytest.raises(AssertionError, match="answered 500"):
        await client.post(TEAMS, json={"name": "A"}, headers=keyed(world.admin))
    assert await count(factory, Team) == teams  # the insert went with the failed answer
    assert await count(factory, IdempotencyKey) == 0


async def test_the_purge_removes_expired_answers(client, world, factory):
    await client.post(TEAMS, json={"name": "A"}, headers=keyed(world.admin, "old"))
    await client.post(TEAMS, json={"name": "B"}, headers=keyed(world.admin, "new"))
    async with factory.sessionmaker() as session:
        await session.execute(
            update(IdempotencyKey)
            .where(IdempotencyKey.key == "old")
            .values(expires=utcnow() - dt.timedelta(seconds=1))
        )
        await session.commit()
    async with factory.sessionmaker() as session:
        await store.purge_expired(session, utcnow())
        await session.commit()
        keys = list(await session.scalars(select(IdempotencyKey.key)))
    assert keys == ["new"]
    status = await client.post(TEAMS, json={"name": "B"}, headers=keyed(world.admin, "new"))
    assert status.headers["idempotent-replayed"] == "true"


async def test_keyed_redeem_off_the_lane_commits_its_scan_with_its_answer(client, world, factory):
    ticket = await checkin.ticket(factory, world.event)
    _order, (position,) = await checkin.order(factory, world.event, ticket)
    entrance = await checkin.checkin_list(factory, world.event)
    url = checkin.rpc_url(world, "redeem") + "?expand=item"  # a query: not the lane's
    body = {"secret": position.secret, "lists": [entrance.id]}
    first = await client.post(url, json=body, headers=keyed(world.admin))
    again = await client.post(url, json=body, headers=keyed(world.admin))
    assert first.status_code == 201, first.text
    assert (again.status_code, again.content) == (201, first.content)
    assert await count(factory, Checkin) == 1


async def test_one_key_on_a_hundred_concurrent_order_creations(client, world, factory, clean_app):
    if not clean_app.state.db.fast.native:
        pytest.skip("concurrent writers only overlap on PostgreSQL (SQLite serialises them)")
    item = await orders.item(factory, world.event, "10.00", quota=1000)
    headers = keyed(world.admin, "one-order")

    async def buy() -> Any:
        return await client.post(orders.url(world), json=orders.body(item.id), headers=headers)

    answers = await asyncio.gather(*(buy() for _ in range(100)))
    assert await count(factory, Order) == 1
    created = [r for r in answers if r.status_code == 201]
    fresh = [r for r in created if "idempotent-replayed" not in r.headers]
    assert len(fresh) == 1
    busy = [r for r in answers if r.status_code == 409]
    assert len(created) + len(busy) == 100
    assert all(r.content == fresh[0].content for r in created)
    assert all(r.json()["detail"].startswith("A request with this") for r in busy)
    replay = await buy()
    assert (replay.status_code, replay.content) == (201, fresh[0].content)
