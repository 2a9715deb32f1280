"""Keyed first entries written with their key in the scan's own statement (PostgreSQL,
``checkin/keyed.py``): no group transaction, a recipe instead of a rendered body, and a replay
that renders the same bytes; taken keys, concurrent scans and a first entry written by
another transaction meanwhile leave no key without its entry.

On SQLite there is no lane: the tests that need it skip, the others then exercise the
framework path."""

from __future__ import annotations

import asyncio
import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import func, insert, select, text

from admit.kit.idempotency import lane as idempotency_lane
from admit.models import Answer, Checkin, answer_options
from tests.checkin import helpers as checkin
from tests.factories import auth
from tests.idempotency import taken_keys


async def _count(factory: Any, model: Any, *where: Any) -> int:
    async with factory.sessionmaker() as session:
        return int(await session.scalar(select(func.count()).select_from(model).where(*where)))


def _groups(monkeypatch: Any) -> list[int]:
    """Counts the keyed requests that joined a group transaction."""
    joined: list[int] = []
    original = idempotency_lane._Lane.join

    def join(self: Any) -> Any:
        joined.append(1)
        return original(self)

    monkeypatch.setattr(idempotency_lane._Lane, "join", join)
    return joined


def _lane_only(app: Any) -> None:
    if not app.state.db.fast.native:
        pytest.skip("the scan statement that writes keys is the PostgreSQL lane's")


async def _rich_ticket(factory: Any, world: Any) -> tuple[Any, Any]:
    """A ticket whose answer carries much: texts, attention, a localized order, odd names,
    a validity window, a price with cents, answers (one with options) shown at check-in."""
    item = await checkin.ticket(factory, world.event, checkin_attention=True, checkin_text="VIP")
    shirt = await checkin.question(
        factory, world.event, [item], "C", ["Small", "Größe L"], show_during_checkin=True,
        ask_during_checkin=False, text="T-shirt? \"quoted\" \\ back",
    )  # fmt: skip
    note = await checkin.question(
        factory, world.event, [item], "T", show_during_checkin=True, ask_during_checkin=False
    )
    until = dt.datetime.now(dt.UTC) + dt.timedelta(days=3)
    _order, positions = await checkin.order(
        factory, world.event, item, n=3, locale="de", checkin_text="Sagt hallo 🎟",
        position={
            "price": Decimal("12.50"), "valid_until": until,
            "attendee_name_parts": {"given_name": "Zoë", "family_name": "O'Brien \\ \"x\""},
            "attendee_name_cached": "Zoë O'Brien",
        },
    )  # fmt: skip
    async with factory.sessionmaker() as session:
        for pos in positions:
            await session.execute(
                insert(Answer).values(orderposition_id=pos.id, question_id=note.id, answer="½ ✓")
            )
            answer_id = (
                await session.execute(
                    insert(Answer)
                    .values(orderposition_id=pos.id, question_id=shirt.id, answer="Größe L")
                    .returning(Answer.id)
                )
            ).scalar_one()
            option = await session.scalar(
                text("SELECT id FROM question_options WHERE question_id = :q AND position = 1"),
                {"q": shirt.id},
            )
            await session.execute(
                insert(answer_options).values(answer_id=answer_id, option_id=option)
            )
        await session.commit()
    entrance = await checkin.checkin_list(factory, world.event)
    return positions, entrance


async def test_keyed_first_entries_replay_the_same_bytes_without_a_group(
    client, world, factory, clean_app, monkeypatch
):
    _lane_only(clean_app)
    groups = _groups(monkeypatch)
    positions, entrance = await _rich_ticket(factory, world)
    token, _device = await checkin.device(factory, world.org, gate="North", number=7)
    moment = "2026-11-25T19:30:00.123456+02:00"

    async def scan(n: int, secret: str) -> Any:
        headers = {**checkin.device_auth(token), "X-Idempotency-Key": f"door-{n}"}
        extra: dict[str, Any] = {"nonce": f"nonce-{n}", "use_order_locale": n == 0}
        if n == 1:
            extra["datetime"] = moment
        return await checkin.redeem(client, world, secret, [entrance.id], headers=headers, **extra)

    first = await asyncio.gather(*(scan(n, p.secret) for n, p in enumerate(positions)))
    assert [r.status_code for r in first] == [201] * 3
    assert groups == []  # written by the scan statement, not in a group
    body = first[1].json()
    assert body["position"]["checkins"][0]["datetime"] == moment  # as sent, offset kept
    assert body["checkin_texts"] and body["require_attention"] is True
    assert {a["answer"] for a in body["position"]["answers"]} == {"½ ✓", "Größe L"}
    async with factory.sessionmaker() as session:
        rows = (
            await session.execute(
                text(
                    "SELECT status, body, recipe ->> 'kind' AS kind FROM idempotency_keys "
                    "ORDER BY key"
                )
            )
        ).all()
    assert [(r.status, bytes(r.body), r.kind) for r in rows] == [(201, b"", "redeem")] * 3
    # The device moves to another gate: the replay still says where the scan was.
    async with factory.sessionmaker() as session:
        await session.execute(text("UPDATE devices SET gate_id = NULL"))
        await session.execute(text("UPDATE order_positions SET attendee_name_cached = 'later'"))
        await session.commit()
    again = await asyncio.gather(*(scan(n, p.secret) for n, p in enumerate(positions)))
    for a, b in zip(first, again, strict=True):
        assert (b.status_code, b.content) == (a.status_code, a.content)
        assert b.headers["idempotent-replayed"] == "true"
        assert b.headers["content-type"] == a.headers["content-type"]
    assert await _count(factory, Checkin) == 3
    assert groups == []


async def test_a_taken_key_admits_nothing_and_a_lapsed_one_is_taken_over(
    client, world, factory, clean_app
):
    _lane_only(clean_app)
    _order, positions = await checkin.order(factory, world.event, await checkin.ticket(
        factory, world.event), n=2)  # fmt: skip
    entrance = await checkin.checkin_list(factory, world.event)
    payload = {"secret": positions[0].secret, "lists": [entrance.id]}
    scan = await taken_keys.running_and_lapsed(
        client, factory, world, checkin.rpc_url(world, "redeem"), payload
    )
    taken_over = await taken_keys.refused_then_taken_over(scan, lambda: _count(factory, Checkin))
    replayed = await scan("lapsed")
    assert (replayed.status_code, replayed.content) == (201, taken_over.content)
    async with factory.sessionmaker() as session:
        kind = await session.scalar(
            text("SELECT recipe ->> 'kind' FROM idempotency_keys WHERE key = 'lapsed'")
        )
    assert kind == "redeem"


async def test_one_key_scanned_many_times_at_once_admits_once(client, world, factory):
    _order, positions = await checkin.order(factory, world.event, await checkin.ticket(
        factory, world.event), n=3)  # fmt: skip
    entrance = await checkin.checkin_list(factory, world.event)
    headers = {**auth(world.admin), "X-Idempotency-Key": "the-scan"}
    answers = await asyncio.gather(
        *(
            checkin.redeem(client, world, positions[0].secret, [entrance.id], headers=headers)
            for _ in range(25)
        )
    )
    assert await _count(factory, Checkin) == 1
    admitted = [r for r in answers if r.status_code == 201]
    assert all(r.status_code in (201, 409) for r in answers)
    assert len({r.content for r in admitted}) == 1
    assert sum("idempotent-replayed" not in r.headers for r in admitted) == 1
    # The same key for two tickets at once: one is admitted, the other refused for its body.
    headers = {**auth(world.admin), "X-Idempotency-Key": "two-tickets"}
    pair = await asyncio.gather(
        *(
            checkin.redeem(client, world, p.secret, [entrance.id], headers=headers)
            for p in positions[1:]
        )
    )
    assert sorted(r.status_code for r in pair) == [201, 409]
    refused = next(r for r in pair if r.status_code == 409)
    assert "body differs" in refused.json()["detail"]
    assert await _count(factory, Checkin) == 2


async def test_a_first_entry_written_meanwhile_leaves_no_key_without_its_entry(
    client, world, factory, clean_app
):
    """Another transaction writes the ticket's first entry after the scan statement read the
    ticket: the statement's entry is refused, so it must not keep the key's row either; the
    scan then goes the general way and is answered as a second entry."""
    _lane_only(clean_app)
    _order, (position,) = await checkin.order(factory, world.event, await checkin.ticket(
        factory, world.event))  # fmt: skip
    entrance = await checkin.checkin_list(factory, world.event)
    pool = await clean_app.state.db.fast.pool()
    async with pool.acquire() as other:
        await other.execute("BEGIN")
        await other.execute(
            "INSERT INTO checkins (event_id, list_id, position_id, seq, type, datetime, "
            "created, successful, auto_checked_in, forced) "
            "VALUES ($1, $2, $3, 1, 'entry', now(), now(), true, false, false)",
            world.event.id, entrance.id, position.id,
        )  # fmt: skip
        headers = {**auth(world.admin), "X-Idempotency-Key": "meanwhile"}
        scan = asyncio.ensure_future(
            checkin.redeem(client, world, position.secret, [entrance.id], headers=headers)
        )
        await asyncio.sleep(0.5)  # the statement read the ticket and waits on the entry
        assert not scan.done()
        await other.execute("COMMIT")
        answer = await scan
    assert answer.status_code == 200
    assert answer.json()["reason"] == "already_redeemed"
    assert await _count(factory, Checkin, Checkin.successful) == 1
    async with factory.sessionmaker() as session:
        row = (
            await session.execute(text("SELECT status, body, recipe FROM idempotency_keys"))
        ).one()
    assert (row.status, bytes(row.body), row.recipe) == (200, answer.content, None)


@pytest.mark.parametrize(
    "written_by_another_version",
    [
        "recipe = jsonb_set(recipe::jsonb, '{v}', '\"0123456789abcdef\"')::json",
        "recipe = jsonb_set(recipe::jsonb, '{kind}', '\"redeem-v0\"')::json",
        "recipe = jsonb_set(recipe::jsonb, '{found,p_id}', '\"not a number\"')::json",
        "recipe = jsonb_set(recipe::jsonb, '{request}', '{\"lists\": \"all\"}')::json",
    ],
    ids=["lookup-changed", "unknown-kind", "column-types-changed", "request-changed"],
)
async def test_a_recipe_this_version_cannot_render_is_refused_not_replayed_wrongly(
    client, world, factory, clean_app, written_by_another_version: str
):
    """A recipe written before a deploy that changed what it is made of: the repeat gets a
    409 saying the request was carried out, never a 500 or an answer passed off as the
    first; nothing runs again."""
    _lane_only(clean_app)
    _order, (position,) = await checkin.order(factory, world.event, await checkin.ticket(
        factory, world.event))  # fmt: skip
    entrance = await checkin.checkin_list(factory, world.event)
    headers = {**auth(world.admin), "X-Idempotency-Key": "before-the-deploy"}

    async def scan() -> Any:
        return await checkin.redeem(client, world, position.secret, [entrance.id], headers=headers)

    first = await scan()
    assert first.status_code == 201
    async with factory.sessionmaker() as session:
        await session.execute(text(f"UPDATE idempotency_keys SET {written_by_another_version}"))
        await session.commit()
    again = await scan()
    assert again.status_code == 409
    assert "carried out" in again.json()["detail"]
    assert again.headers["idempotent-replayed"] == "true"
    assert await _count(factory, Checkin) == 1
