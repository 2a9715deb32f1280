"""Device sync of whole lists (issue 29): a device token may ask for pages of up to 1,000
rows on every list a scanner syncs, a team token keeps the reference's 50, junk sizes give
the default page as ever; the check-in list's tickets poll with ``modified_since`` and the
answer's ``X-Page-Generated``."""

from __future__ import annotations

import asyncio
import secrets
from urllib.parse import parse_qs, urlsplit

from admit.checkin.positions import LISTING
from admit.db import utcnow
from admit.kit.resources.keylists import kept_lists
from admit.models import BlockedSecret, Order, RevokedSecret
from admit.orders.listed import ORDERS as LISTING_OF_ORDERS
from admit.quotas import ledger
from tests.checkin import helpers as ch
from tests.factories import World, auth

ROWS = 1005  # more than a device's largest page


async def _orders(factory, world: World, n: int) -> None:
    """``n`` orders without positions, written straight to the database."""
    async with factory.sessionmaker() as session:
        for i in range(n):
            session.add(
                Order(
                    event_id=world.event.id,
                    code=f"D{i:05d}",
                    status="p",
                    secret=secrets.token_hex(16),
                    expires=utcnow(),
                    email="fan@example.org",
                )
            )
        await session.flush()
        await ledger.rebuild(session)
        await session.commit()


async def _sync_lists(factory, world: World) -> dict[str, int]:
    """A check-in list of ROWS tickets, as many revoked and blocked secrets, 60 more orders;
    the path of each list and how many rows it holds."""
    item = await ch.ticket(factory, world.event)
    _order, positions = await ch.order(factory, world.event, item, n=ROWS)
    clist = await ch.checkin_list(factory, world.event)
    async with factory.sessionmaker() as session:
        for i, pos in enumerate(positions):
            session.add(RevokedSecret(event_id=world.event.id, position_id=pos.id, secret=f"r{i}"))
            session.add(BlockedSecret(event_id=world.event.id, position_id=pos.id, secret=f"b{i}"))
        await session.commit()
    await _orders(factory, world, 60)
    return {
        f"checkinlists/{clist.id}/positions/": ROWS,
        "revokedsecrets/": ROWS,
        "blockedsecrets/": ROWS,
        "orders/": 61,
    }


async def _page(client, world: World, path: str, headers, **params):
    answer = await client.get(ch.event_url(world, path), params=params, headers=headers)
    assert answer.status_code == 200, (path, answer.text)
    return answer.json()


async def test_a_device_gets_up_to_1000_a_page_a_token_50(client, world: World, factory):
    lists = await _sync_lists(factory, world)
    token, _device = await ch.device(factory, world.org)
    device = ch.device_auth(token)
    admin = auth(world.admin)
    for path, total in lists.items():
        first = await _page(client, world, path, device, page_size=5000)
        assert first["count"] == total
        assert len(first["results"]) == min(total, 1000), path
        if total > 1000:
            assert parse_qs(urlsplit(first["next"]).query) == {
                "page_size": ["5000"],
                "page": ["2"],
            }
            rest = await _page(client, world, path, device, page_size=5000, page=2)
            assert len(rest["results"]) == total - 1000
            assert rest["next"] is None
            seen = {r["id"] for r in first["results"]} | {r["id"] for r in rest["results"]}
            assert len(seen) == total  # no row twice, none left out
        asked = await _page(client, world, path, device, page_size=60)
        assert len(asked["results"]) == 60, path
        # A team token keeps the reference's 50 however many it asks for.
        for size in (60, 1000):
            capped = await _page(client, world, path, admin, page_size=size)
            assert len(capped["results"]) == 50, path
        # Zero, negative or junk: the default page, for a device as for anyone.
        for junk in ("0", "-3", "abc", "1e3", ""):
            default = await _page(client, world, path, device, page_size=junk)
            assert len(default["results"]) == 50, (path, junk)
        plain = await _page(client, world, path, device)
        assert len(plain["results"]) == 50, path


async def test_list_positions_poll_with_modified_since(client, world: World, factory):
    item = await ch.ticket(factory, world.event)
    clist = await ch.checkin_list(factory, world.event)
    tickets = [(await ch.order(factory, world.event, item))[1][0] for _ in range(4)]
    token, _device = await ch.device(factory, world.org)
    device = ch.device_auth(token)
    path = f"checkinlists/{clist.id}/positions/"
    # The bound lies up to PG_MARGIN (and a reused probe) before the page: let the tickets'
    # own stamps fall behind it, or the poll hands them back too (a duplicate, not a miss).
    await asyncio.sleep(0.3)
    full = await client.get(ch.event_url(world, path), params={"page_size": 1000}, headers=device)
    assert full.status_code == 200, full.text
    assert full.json()["count"] == 4
    since = full.headers["X-Page-Generated"]

    scanned = await ch.redeem(client, world, tickets[1].secret, [clist.id], headers=device)
    assert scanned.json()["status"] == "ok", scanned.text
    renamed = await client.patch(
        ch.event_url(world, f"orderpositions/{tickets[3].id}/"),
        json={"attendee_name": "Renamed"},
        headers=auth(world.admin),
    )
    assert renamed.status_code == 200, renamed.text

    changed = await client.get(
        ch.event_url(world, path), params={"modified_since": since}, headers=device
    )
    assert changed.status_code == 200, changed.text
    rows = {r["id"]: r for r in changed.json()["results"]}
    assert set(rows) == {tickets[1].id, tickets[3].id}
    assert [c["list"] for c in rows[tickets[1].id]["checkins"]] == [clist.id]
    assert rows[tickets[3].id]["attendee_name"] == "Renamed"
    again = await client.get(
        ch.event_url(world, path),
        params={"modified_since": changed.headers["X-Page-Generated"]},
        headers=device,
    )
    # The bound may hand back what was just synced (never misses): nothing else changed.
    assert {r["id"] for r in again.json()["results"]} <= set(rows)
    bad = await client.get(
        ch.event_url(world, path), params={"modified_since": "yesterday"}, headers=device
    )
    assert bad.status_code == 400
    assert "modified_since" in bad.json()


async def test_kept_keys_page_exactly_as_offset_does(
    client, world: World, factory, page_cache, clean_app
):
    """Deep and large pages of one list slice its kept keys (``kit/resources/keylists.py``):
    every page equals the page read with OFFSET, the keys are read once while nothing
    changes, and read again after a check-in and a rename that moves a ticket in the order."""
    page_cache.limit = 0  # every answer rendered, none kept
    item = await ch.ticket(factory, world.event)
    clist = await ch.checkin_list(factory, world.event)
    _order, tickets = await ch.order(factory, world.event, item, n=130)
    token, _device = await ch.device(factory, world.org)
    device = ch.device_auth(token)
    path = ch.event_url(world, f"checkinlists/{clist.id}/positions/")
    lists = kept_lists(clean_app.state.db.fast)
    asks = [{"page_size": 60, "page": n} for n in (1, 2, 3)]
    asks += [{"page_size": 40, "page": 3, "ordering": "-order__code,positionid"}]
    asks += [{"page_size": 1000}, {"page": 3, "has_checkin": "false"}]

    async def both(params: dict) -> tuple[bytes, bytes]:
        kept = await client.get(path, params=params, headers=device)
        LISTING.snapshot, saved = None, LISTING.snapshot
        try:
            offset = await client.get(path, params=params, headers=device)
        finally:
            LISTING.snapshot = saved
        assert kept.status_code == offset.status_code == 200, (params, kept.text)
        return kept.content, offset.content

    async def check_all() -> None:
        for params in asks:
            kept, offset = await both(params)
            assert kept == offset, params

    await asyncio.sleep(0.3)  # the tickets' stamps behind the first bound (see above)
    before = lists.reads
    await check_all()
    reads = lists.reads - before
    assert reads == 3  # one key list per filter and ordering asked for
    await check_all()
    assert lists.reads - before == reads  # nothing changed: the kept keys served every page
    scanned = await ch.redeem(client, world, tickets[5].secret, [clist.id], headers=device)
    assert scanned.json()["status"] == "ok"
    renamed = await client.patch(
        ch.event_url(world, f"orderpositions/{tickets[100].id}/"),
        json={"attendee_name": "AAA first"},
        headers=auth(world.admin),
    )
    assert renamed.status_code == 200, renamed.text
    await asyncio.sleep(0.3)
    await check_all()
    assert lists.reads - before == 2 * reads  # changed: read again, and still equal to OFFSET
    first = (await client.get(path, params={"page_size": 1000}, headers=device)).json()
    assert first["results"][0]["id"] == tickets[100].id
    past = await client.get(path, params={"page_size": 60, "page": 4}, headers=device)
    assert past.status_code == 404


async def test_kept_keys_of_orders_page_exactly_as_offset_does(
    client, world: World, factory, page_cache, clean_app
):
    """The event's orders list too (devices in the reference's "full" sync download it)."""
    page_cache.limit = 0
    item = await ch.ticket(factory, world.event)
    for status in ("p", "n", "p", "c"):
        await ch.order(factory, world.event, item, status=status, n=2)
    await _orders(factory, world, 70)
    token, _device = await ch.device(factory, world.org)
    device = ch.device_auth(token)
    path = ch.event_url(world, "orders/")
    lists = kept_lists(clean_app.state.db.fast)
    asks = [
        {"page_size": 60, "page": 2},
        {"page": 2},
        {"page": 2, "ordering": "-code"},
        {"page": 2, "status": "p", "include_canceled_positions": "true"},
        {"page_size": 1000, "exclude": "positions"},
    ]
    await asyncio.sleep(0.3)
    before = lists.reads
    for params in asks:
        kept = await client.get(path, params=params, headers=device)
        LISTING_OF_ORDERS.snapshot, saved = None, LISTING_OF_ORDERS.snapshot
        try:
            offset = await client.get(path, params=params, headers=device)
        finally:
            LISTING_OF_ORDERS.snapshot = saved
        assert kept.status_code == offset.status_code == 200, (params, kept.text)
        assert kept.json() == offset.json(), params
    assert lists.reads - before == 3  # the default order (three asks), -code, status=p
    past = await client.get(path, params={"page_size": 60, "page": 3}, headers=device)
    assert past.status_code == 404
