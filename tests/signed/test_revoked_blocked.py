"""Revocation and block lists of signed events (issue 29): what goes on them (replaced and
canceled secrets; blocks and lifted blocks as tombstones), how devices sync them
(``created_since`` / ``updated_since`` with ``X-Page-Generated``), and what redeem answers
for them online and for forced offline uploads."""

from __future__ import annotations

import asyncio
import datetime as dt

import pytest
from sqlalchemy import select, text

from admit.models import BlockedSecret, Checkin
from admit.tickets.secrets import hooks
from tests.checkin import helpers as ch
from tests.factories import World, auth
from tests.orders import helpers as oh
from tests.signed.helpers import change, check_certifies, event_url, sell, sign_event


async def _list(client, world: World, name: str, token: str | None = None, **params):
    headers = auth(world.admin) if token is None else ch.device_auth(token)
    answer = await client.get(event_url(world, f"{name}/"), params=params, headers=headers)
    assert answer.status_code == 200, answer.text
    return answer


async def test_cancel_revokes_and_devices_sync_the_list(client, world: World, factory):
    await sign_event(client, world)
    item = await oh.item(factory, world.event)
    one = await sell(client, world, [{"item": item.id}, {"item": item.id}])
    two = await sell(client, world, [{"item": item.id}])
    token, _device = await ch.device(factory, world.org)

    empty = await _list(client, world, "revokedsecrets", token)
    assert empty.json()["results"] == []
    since = empty.headers["X-Page-Generated"]

    gone = one["positions"][1]
    canceled = await change(client, world, one["code"], cancel_positions=[{"position": gone["id"]}])
    assert canceled.status_code == 200, canceled.text
    whole = await client.post(
        event_url(world, f"orders/{two['code']}/mark_canceled/"), headers=auth(world.admin)
    )
    assert whole.status_code == 200, whole.text

    synced = await _list(client, world, "revokedsecrets", token, created_since=since)
    rows = synced.json()["results"]
    assert {r["secret"] for r in rows} == {gone["secret"], two["positions"][0]["secret"]}
    assert set(rows[0]) == {"id", "secret", "created"}
    created = [r["created"] for r in rows]
    assert created == sorted(created, reverse=True)  # default ordering: -created
    by_secret = await _list(client, world, "revokedsecrets", ordering="secret")
    assert [r["secret"] for r in by_secret.json()["results"]] == sorted(r["secret"] for r in rows)
    later = await _list(
        client, world, "revokedsecrets", created_since=synced.headers["X-Page-Generated"]
    )
    # The bound may hand back what was synced (never misses): nothing new appeared.
    assert {r["secret"] for r in later.json()["results"]} <= {r["secret"] for r in rows}
    bad = await client.get(
        event_url(world, "revokedsecrets/"),
        params={"created_since": "soon"},
        headers=auth(world.admin),
    )
    assert bad.status_code == 400 and "created_since" in bad.json()
    assert (
        await client.get(event_url(world, "revokedsecrets/"), headers=auth(world.nobody))
    ).status_code == 403

    # Redeem: the canceled ticket answers canceled; a replaced secret answers revoked, and a
    # forced upload of an offline scan of it checks the ticket in.
    entrance = await ch.checkin_list(factory, world.event)
    scan = await ch.redeem(client, world, gone["secret"], [entrance.id])
    assert scan.json()["reason"] == "canceled"
    kept = one["positions"][0]
    regenerated = await client.post(
        event_url(world, f"orders/{one['code']}/regenerate_secrets/"), headers=auth(world.admin)
    )
    assert regenerated.status_code == 200
    old = await ch.redeem(client, world, kept["secret"], [entrance.id], token=None)
    assert (old.status_code, old.json()["reason"]) == (200, "revoked")
    offline = await ch.redeem(
        client,
        world,
        kept["secret"],
        [entrance.id],
        force=True,
        nonce="offline-1",
        datetime="2026-01-01T10:00:00Z",
    )
    assert offline.status_code == 201, offline.text


async def test_block_and_unblock_leave_a_tombstone(client, world: World, factory):
    await sign_event(client, world)
    item = await oh.item(factory, world.event)
    order = await sell(client, world, [{"item": item.id}, {"item": item.id}])
    first, second = order["positions"]
    token, _device = await ch.device(factory, world.org)
    entrance = await ch.checkin_list(factory, world.event)
    start = (await _list(client, world, "blockedsecrets", token)).headers["X-Page-Generated"]

    blocked = await change(client, world, order["code"], add_block=[{"position": first["id"]}])
    assert blocked.status_code == 200, blocked.text
    rows = (await _list(client, world, "blockedsecrets", token, updated_since=start)).json()[
        "results"
    ]
    assert [(r["secret"], r["blocked"]) for r in rows] == [(first["secret"], True)]
    assert set(rows[0]) == {"id", "secret", "blocked", "updated"}
    scan = await ch.redeem(client, world, first["secret"], [entrance.id])
    assert (scan.status_code, scan.json()["reason"]) == (200, "blocked")
    # Online the block holds; a forced upload (the scan happened offline) goes in.
    forced = await ch.redeem(client, world, first["secret"], [entrance.id], force=True, nonce="n1")
    assert forced.status_code == 201

    unknown = await change(client, world, order["code"], add_block=[{"position": 999999}])
    assert unknown.status_code == 400 and "add_block" in unknown.json()

    mark = (await _list(client, world, "blockedsecrets")).headers["X-Page-Generated"]
    lifted = await change(client, world, order["code"], remove_block=[{"position": first["id"]}])
    assert lifted.status_code == 200, lifted.text
    rows = (await _list(client, world, "blockedsecrets", token, updated_since=mark)).json()[
        "results"
    ]
    assert [(r["secret"], r["blocked"]) for r in rows] == [(first["secret"], False)]
    assert (await _list(client, world, "blockedsecrets", blocked="true")).json()["results"] == []
    tombstones = (await _list(client, world, "blockedsecrets", blocked="false")).json()["results"]
    assert [r["secret"] for r in tombstones] == [first["secret"]]

    # A blocked ticket whose secret is re-issued stays blocked under its new secret.
    await change(client, world, order["code"], add_block=[{"position": second["id"]}])
    regenerated = await client.post(
        event_url(world, f"orders/{order['code']}/regenerate_secrets/"), headers=auth(world.admin)
    )
    new_second = next(p for p in regenerated.json()["positions"] if p["id"] == second["id"])
    current = {
        r["secret"]: r["blocked"]
        for r in (await _list(client, world, "blockedsecrets", blocked="true")).json()["results"]
    }
    assert current.get(new_second["secret"]) is True


async def test_validity_window_is_checked_at_the_door(client, world: World, factory):
    await sign_event(client, world)
    soon = dt.datetime.now(dt.UTC) + dt.timedelta(days=3)
    item = await oh.item(
        factory,
        world.event,
        validity_mode="fixed",
        validity_fixed_from=soon,
        validity_fixed_until=soon + dt.timedelta(hours=2),
    )
    order = await sell(client, world, [{"item": item.id}])
    secret = order["positions"][0]["secret"]
    entrance = await ch.checkin_list(factory, world.event)
    early = await ch.redeem(client, world, secret, [entrance.id])
    assert (early.status_code, early.json()["reason"]) == (200, "invalid_time")
    # An offline scan made inside the window, uploaded later, is accepted.
    inside = (soon + dt.timedelta(minutes=5)).isoformat()
    uploaded = await ch.redeem(client, world, secret, [entrance.id], datetime=inside, nonce="x")
    assert uploaded.status_code == 201, uploaded.text


async def test_concurrent_blocks_of_one_ticket_end_in_one_row(client, world: World, factory):
    """Blocks and unblocks of two tickets racing through both routes (the order change and
    the position PATCH): every request succeeds (a 409 with ``Retry-After`` is retried, as
    a client does) and the block list ends with one row per secret saying what it is."""
    await sign_event(client, world)
    item = await oh.item(factory, world.event)
    order = await sell(client, world, [{"item": item.id}, {"item": item.id}])
    first, second = order["positions"]

    async def retried(call) -> int:
        for _attempt in range(20):
            answer = await call()
            if answer.status_code != 409:
                return answer.status_code
            assert "Retry-After" in answer.headers
        return answer.status_code

    def by_change(position: dict, key: str):
        return lambda: change(client, world, order["code"], **{key: [{"position": position["id"]}]})

    def by_patch(position: dict, blocked: list[str] | None):
        return lambda: client.patch(
            event_url(world, f"orderpositions/{position['id']}/"),
            json={"blocked": blocked},
            headers=auth(world.admin),
        )

    for last in ("add_block", "remove_block", "add_block"):
        calls = [
            by_change(first, "add_block"),
            by_patch(first, None),
            by_change(second, "add_block"),
            by_patch(second, ["admin"]),
            by_change(first, "remove_block"),
            by_patch(second, None),
        ]
        results = await asyncio.gather(*(retried(c) for c in calls))
        assert set(results) == {200}, results
        # Then one more for each, so the final state is known.
        assert await retried(by_change(first, last)) == 200
        assert await retried(by_patch(second, ["admin"] if last == "add_block" else None)) == 200
        async with factory.sessionmaker() as s:
            rows = {r.secret: r.blocked for r in await s.scalars(select(BlockedSecret))}
        assert rows == {first["secret"]: last == "add_block", second["secret"]: last == "add_block"}


async def test_block_list_upsert_under_a_real_race(client, world: World, factory, database_url):
    """Two transactions write the block list row of one secret at once (PostgreSQL): the
    second waits for the first (seen in ``pg_stat_activity``), then updates the row the first
    inserted; nothing fails and one row remains, with the last writer's value."""
    if not database_url.startswith("postgresql"):
        pytest.skip("a row lock race needs PostgreSQL (SQLite serializes writers)")
    await sign_event(client, world)
    item = await oh.item(factory, world.event)
    order = await sell(client, world, [{"item": item.id}])
    position = order["positions"][0]

    def write(blocked: bool):
        return lambda sync: hooks.write_block(
            sync, world.event.id, position["id"], position["secret"], blocked
        )

    async with factory.sessionmaker() as holder, factory.sessionmaker() as waiter:
        await holder.run_sync(write(True))  # inserted, not committed
        holder_pid = (await holder.execute(text("SELECT pg_backend_pid()"))).scalar_one()
        racing = asyncio.ensure_future(_commit_after(waiter, write(False)))
        waited = await _waits_for(factory, holder_pid)
        assert waited, "the second writer never waited for the first"
        assert not racing.done()
        await holder.commit()
        await racing
    async with factory.sessionmaker() as s:
        rows = list(await s.scalars(select(BlockedSecret)))
    assert [(r.secret, r.blocked) for r in rows] == [(position["secret"], False)]


async def _commit_after(session, work) -> None:
    await session.run_sync(work)
    await session.commit()


_WAITING = text(
    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
    "AND wait_event_type = 'Lock' AND :holder = ANY(pg_blocking_pids(pid))"
)


async def _waits_for(factory, holder: int) -> bool:
    for _ in range(400):
        async with factory.sessionmaker() as s:
            if (await s.execute(_WAITING, {"holder": holder})).scalar_one():
                return True
        await asyncio.sleep(0.01)
    return False


async def test_failed_offline_scans_are_uploaded_to_the_history(client, world: World, factory):
    await sign_event(client, world)
    item = await oh.item(factory, world.event)
    order = await sell(client, world, [{"item": item.id}])
    position = order["positions"][0]
    entrance = await ch.checkin_list(factory, world.event)
    token, device = await ch.device(factory, world.org)
    path = event_url(world, f"checkinlists/{entrance.id}/failed_checkins/")
    body = {
        "error_reason": "revoked",
        "raw_barcode": position["secret"],
        "datetime": "2026-05-01T10:00:00Z",
        "position": position["id"],
        "raw_item": item.id,
    }
    uploaded = await client.post(path, json=body, headers=ch.device_auth(token))
    assert uploaded.status_code == 201, uploaded.text
    row = uploaded.json()
    assert (row["successful"], row["error_reason"], row["position"]) == (
        False, "revoked", position["id"],
    )  # fmt: skip
    assert (row["device"], row["list"], row["type"]) == (device.id, entrance.id, "entry")
    history = await client.get(
        event_url(world, "checkins/"), params={"successful": "false"}, headers=auth(world.admin)
    )
    assert [c["id"] for c in history.json()["results"]] == [row["id"]]
    async with factory.sessionmaker() as s:
        stored = await s.get(Checkin, row["id"])
    assert (stored.raw_barcode, stored.raw_item_id) == (position["secret"], item.id)

    bad = await client.post(
        path, json={**body, "error_reason": "bored", "raw_item": 999999}, headers=auth(world.admin)
    )
    assert bad.status_code == 400 and "error_reason" in bad.json()
    unknown = await client.post(path, json={**body, "raw_item": 999999}, headers=auth(world.admin))
    assert unknown.status_code == 400 and "raw_item" in unknown.json()
    missing = await client.post(
        event_url(world, "checkinlists/999999/failed_checkins/"), json=body,
        headers=auth(world.admin),
    )  # fmt: skip
    assert missing.status_code == 404
    denied = await client.post(path, json=body, headers=auth(world.nobody))
    assert denied.status_code == 403


async def test_a_reactivated_order_gets_new_signed_secrets(client, world: World, factory):
    key = await sign_event(client, world)
    item = await oh.item(factory, world.event)
    order = await sell(client, world, [{"item": item.id}])
    old = order["positions"][0]["secret"]
    url = event_url(world, f"orders/{order['code']}/")
    assert (await client.post(f"{url}mark_canceled/", headers=auth(world.admin))).is_success
    back = await client.post(f"{url}reactivate/", headers=auth(world.admin))
    assert back.status_code == 200, back.text
    position = back.json()["positions"][0]
    assert position["secret"] != old  # the old one stays revoked for good
    check_certifies(position["secret"], key, position)
    revoked = (await _list(client, world, "revokedsecrets")).json()["results"]
    assert old in {r["secret"] for r in revoked}
    assert position["secret"] not in {r["secret"] for r in revoked}
