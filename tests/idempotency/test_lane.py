"""Keyed requests on the fast lane (PostgreSQL): they stay on the lane, commit their answers
with their changes (the cart call writes a key's row itself, ``kit/idempotency/inline``; the
other lanes in group transactions), and replay exactly.

On SQLite there is no lane: the same tests then exercise the framework path."""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

import asyncpg
import pytest
from sqlalchemy import func, select, text

from admit.carts import fastpath
from admit.kit.idempotency import lane as idempotency_lane
from admit.kit.idempotency import store
from admit.models import CartPosition, Checkin, IdempotencyKey
from tests.carts import helpers as carts
from tests.checkin import helpers as checkin
from tests.factories import auth
from tests.idempotency import taken_keys
from tests.lane_spy import record_outcomes


async def _count(factory: Any, model: Any, *where: Any) -> int:
    async with factory.sessionmaker() as session:
        return int(await session.scalar(select(func.count()).select_from(model).where(*where)))


def _lane_groups_used(app: Any) -> bool:
    lane = idempotency_lane._lanes.get(id(app.state.db.fast))
    return lane is not None and lane.fast is app.state.db.fast


def auth_header(world: Any) -> bytes:
    return auth(world.admin)["Authorization"].encode()


async def test_keyed_cart_rush_sells_exactly_and_replays(
    client, world, factory, clean_app, monkeypatch
):
    outcomes = _cart_outcomes(clean_app, monkeypatch)
    ticket = await carts.item(factory, world.event)
    await carts.quota(factory, world.event, 20, [ticket], name="Main")
    url = carts.url(world)

    async def post(n: int) -> Any:
        headers = {**auth(world.admin), "X-Idempotency-Key": f"cart-{n}"}
        return await client.post(url, json={"item": ticket.id, "price": "5"}, headers=headers)

    first = await asyncio.gather(*(post(n) for n in range(30)))
    statuses = sorted(r.status_code for r in first)
    assert statuses == [201] * 20 + [400] * 10
    assert await _count(factory, CartPosition) == 20
    if outcomes is not None:  # every one sold or refused on the lane, none declined
        assert sorted(outcomes) == ["created"] * 20 + ["sold_out"] * 10
    stored = await _count(factory, IdempotencyKey, IdempotencyKey.status.is_not(None))
    assert stored == 30
    again = await asyncio.gather(*(post(n) for n in range(30)))
    for a, b in zip(first, again, strict=True):
        assert (b.status_code, b.content) == (a.status_code, a.content)
        assert b.headers["idempotent-replayed"] == "true"
        assert "idempotent-replayed" not in a.headers
    assert await _count(factory, CartPosition) == 20
    if outcomes is not None:  # the repeats came to the lane (sold out now: it wrote nothing)
        assert outcomes[30:] == ["sold_out"] * 30


def _cart_outcomes(app: Any, monkeypatch: Any) -> list[str] | None:
    """The cart lane's outcomes (None off PostgreSQL, where there is no lane)."""
    if not app.state.db.fast.native:
        return None
    return record_outcomes(app, monkeypatch, fastpath._sales)


async def test_one_key_many_times_at_once_sells_once(client, world, factory):
    ticket = await carts.item(factory, world.event)
    await carts.quota(factory, world.event, 100, [ticket])
    headers = {**auth(world.admin), "X-Idempotency-Key": "the-one"}
    body = {"item": ticket.id, "price": "5"}
    answers = await asyncio.gather(
        *(client.post(carts.url(world), json=body, headers=headers) for _ in range(25))
    )
    assert await _count(factory, CartPosition) == 1
    created = [r for r in answers if r.status_code == 201]
    assert created
    assert all(r.status_code in (201, 409) for r in answers)
    assert len({r.content for r in created}) == 1
    assert sum("idempotent-replayed" not in r.headers for r in created) == 1


async def test_keyed_redeem_on_the_lane(client, world, factory, clean_app):
    ticket = await checkin.ticket(factory, world.event)
    _order, positions = await checkin.order(factory, world.event, ticket, n=12)
    entrance = await checkin.checkin_list(factory, world.event)

    async def scan(n: int, secret: str) -> Any:
        headers = {**auth(world.admin), "X-Idempotency-Key": f"scan-{n}"}
        return await checkin.redeem(client, world, secret, [entrance.id], headers=headers)

    first = await asyncio.gather(*(scan(n, p.secret) for n, p in enumerate(positions)))
    assert [r.status_code for r in first] == [201] * 12
    unknown = await scan(99, "no-such-secret")
    assert unknown.status_code == 404
    again = await asyncio.gather(*(scan(n, p.secret) for n, p in enumerate(positions)))
    assert [(r.status_code, r.content) for r in again] == [
        (r.status_code, r.content) for r in first
    ]
    assert await _count(factory, Checkin, Checkin.successful) == 12
    repeat_unknown = await scan(99, "no-such-secret")
    assert (repeat_unknown.status_code, repeat_unknown.content) == (404, unknown.content)
    assert await _count(factory, Checkin, Checkin.successful.is_(False)) == 1
    # Without a key the same secret is scanned again: a second (refused) entry.
    plain = await checkin.redeem(client, world, positions[0].secret, [entrance.id])
    assert plain.json()["status"] == "error"
    if clean_app.state.db.fast.native:
        assert _lane_groups_used(clean_app)


async def test_a_failed_group_commits_nothing_and_frees_the_keys(client, world, factory, clean_app):
    if not clean_app.state.db.fast.native:
        pytest.skip("group transactions are the PostgreSQL lane's")
    ticket = await checkin.ticket(factory, world.event)
    _order, positions = await checkin.order(factory, world.event, ticket, n=1)
    entrance = await checkin.checkin_list(factory, world.event)
    headers = {**auth(world.admin), "X-Idempotency-Key": "doomed"}
    original = idempotency_lane._Lane._finish

    async def broken(self: Any, link: Any, group: Any) -> bool:
        await link.execute("SELECT 1/0")  # the transaction is lost
        return True

    idempotency_lane._Lane._finish = broken  # type: ignore[method-assign]
    try:
        failed = await checkin.redeem(  # forced: a keyed first entry needs no group
            client, world, positions[0].secret, [entrance.id], headers=headers, force=True
        )
    except AssertionError:  # the client fixture refuses 5xx: check the effect below
        failed = None
    finally:
        idempotency_lane._Lane._finish = original  # type: ignore[method-assign]
    assert failed is None
    assert await _count(factory, Checkin) == 0
    assert await _count(factory, IdempotencyKey) == 0
    retried = await checkin.redeem(
        client, world, positions[0].secret, [entrance.id], headers=headers, force=True
    )
    assert retried.status_code == 201
    assert await _count(factory, Checkin) == 1
    async with factory.sessionmaker() as session:
        status = await session.scalar(text("SELECT status FROM idempotency_keys"))
    assert status == 201


async def test_the_cart_call_respects_a_taken_key_and_takes_over_a_lapsed_one(
    client, world, factory, clean_app, monkeypatch
):
    """The key's row written by the cart call itself: a running claim of another request
    (its lease not run out) makes it write nothing (409); a lapsed one is taken over."""
    outcomes = _cart_outcomes(clean_app, monkeypatch)
    ticket = await carts.item(factory, world.event)
    await carts.quota(factory, world.event, 10, [ticket])
    post = await taken_keys.running_and_lapsed(
        client, factory, world, carts.url(world), {"item": ticket.id, "price": "5"}
    )
    taken_over = await taken_keys.refused_then_taken_over(
        post, lambda: _count(factory, CartPosition)
    )
    async with factory.sessionmaker() as session:
        row = (
            await session.execute(
                text("SELECT status, body FROM idempotency_keys WHERE key = 'lapsed'")
            )
        ).one()
    assert (row.status, bytes(row.body)) == (201, taken_over.content)
    if outcomes is not None:
        assert outcomes == ["taken", "created"]


async def test_stored_answers_keep_any_bytes(client, world, factory, clean_app):
    """The group's closing script carries answers as literals: quotes, backslashes, SQL and
    non-ASCII text in a body must come back byte for byte."""
    ticket = await carts.item(factory, world.event)
    await carts.quota(factory, world.event, 5, [ticket])
    name = "O'Brien\\'); DROP TABLE orders; -- $$ \\x00 ü 🎟"
    headers = {**auth(world.admin), "X-Idempotency-Key": "odd-bytes"}
    body = {"item": ticket.id, "price": "5", "attendee_name": name}
    first = await client.post(carts.url(world), json=body, headers=headers)
    assert first.status_code == 201
    assert first.json()["attendee_name"] == name
    again = await client.post(carts.url(world), json=body, headers=headers)
    assert (again.status_code, again.content) == (201, first.content)
    assert again.headers["idempotent-replayed"] == "true"
    assert await _count(factory, CartPosition) == 1
    async with factory.sessionmaker() as session:
        stored = await session.scalar(text("SELECT body FROM idempotency_keys"))
    assert bytes(stored) == first.content


async def test_a_claim_taken_over_is_not_answered(clean_app):
    """The closing script commits nothing when a claim no longer carries its stamp (its
    lease ran out and another request took the key over)."""
    db = clean_app.state.db
    if not db.fast.native:
        pytest.skip("group transactions are the PostgreSQL lane's")
    request = store.Request("cred", "taken", "POST", "/x", "h")
    claim = await store.claim(db, request)
    assert isinstance(claim, store.Claim)
    stale = store.Claim(claim.id, claim.created - dt.timedelta(seconds=1), request)
    answer = store.Answer(201, [["content-type", "application/json"]], b"{}")
    pool = await db.fast.pool()
    async with pool.acquire() as conn:
        await conn.execute("BEGIN")
        script = store.pg_closing_script([(stale, answer)], [], store.utcnow())
        with pytest.raises(asyncpg.DataError):
            await conn.execute(script)
        await conn.execute("ROLLBACK")
        fine = store.pg_closing_script([(claim, answer)], [], store.utcnow())
        await conn.execute("BEGIN")
        assert await conn.execute(fine) == "COMMIT"
    async with db.sessionmaker() as session:
        row = (await session.execute(text("SELECT status, body FROM idempotency_keys"))).one()
    assert (row.status, bytes(row.body)) == (201, b"{}")
