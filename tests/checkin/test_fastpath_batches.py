"""First entries in batches (PostgreSQL): scans that arrive together share one statement, a
repeated secret goes in a later one and is answered as a second scan, and a scan the
database refuses fails alone."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest
from sqlalchemy import text

from admit.checkin import fastpath
from admit.db import utcnow
from admit.kit.lanes.fastread import FastReader
from tests.checkin import helpers as h
from tests.factories import World


@pytest.fixture
def fast(clean_app) -> FastReader:
    reader = clean_app.state.db.fast
    if not reader.native:
        pytest.skip("the batched fast path is PostgreSQL's")
    return reader


def _scan(secret: str, **kw: Any) -> fastpath.Scan:
    now = utcnow()
    fields: dict[str, Any] = dict(
        secret=secret,
        nonce=None,
        at=now,
        created=now,
        device=None,
        number=None,
        gate=None,
        source="barcode",
        questions=False,
    )
    return fastpath.Scan(**{**fields, **kw})


async def _together(
    fast: FastReader, world: World, list_id: int, scans: list[fastpath.Scan]
) -> list[Any]:
    """The scans submitted at once (one batch), each outcome or the exception it raised."""
    calls = (
        fastpath.find_and_admit(
            fast, organizer_id=world.org.id, list_id=list_id, allowed_events=None, scan=scan
        )
        for scan in scans
    )
    return await asyncio.gather(*calls, return_exceptions=True)


async def _successful(factory) -> int:
    async with factory.sessionmaker() as session:
        return int(await session.scalar(text("SELECT count(*) FROM checkins WHERE successful")))


async def test_a_repeated_secret_goes_in_a_later_statement(fast, world: World, factory):
    item = await h.ticket(factory, world.event)
    clist = await h.checkin_list(factory, world.event)
    _, (a, b) = await h.order(factory, world.event, item, n=2)
    before = fast.executed

    outcomes = await _together(
        fast, world, clist.id, [_scan(a.secret), _scan(a.secret), _scan(b.secret), _scan(a.secret)]
    )

    # [a, b], then [a], then [a]
    assert fast.executed - before == 3
    admitted = [new_id for _, new_id in outcomes]
    assert admitted[0] is not None and admitted[2] is not None
    assert admitted[1] is None and admitted[3] is None
    for found, _ in (outcomes[1], outcomes[3]):
        # the repeat read the first scan's entry: the general path answers already_redeemed
        (hit,) = found
        assert hit.match is not None and [s.id for s in hit.match.scans] == [admitted[0]]
    assert await _successful(factory) == 2


async def test_a_scan_the_database_refuses_fails_alone(fast, world: World, factory):
    item = await h.ticket(factory, world.event)
    clist = await h.checkin_list(factory, world.event)
    _, (a, b, c) = await h.order(factory, world.event, item, n=3)
    before = fast.executed

    # 40 characters do not fit raw_source_type (the API's validation never lets this through)
    outcomes = await _together(
        fast,
        world,
        clist.id,
        [_scan(a.secret), _scan(b.secret, source="x" * 40), _scan(c.secret)],
    )

    assert isinstance(outcomes[1], asyncpg.StringDataRightTruncationError)
    assert outcomes[0][1] is not None and outcomes[2][1] is not None
    assert fast.executed - before == 1 + 3  # the batch, then each scan alone
    assert await _successful(factory) == 2


async def test_unknown_secrets_and_lists_in_a_batch(fast, world: World, factory):
    item = await h.ticket(factory, world.event)
    clist = await h.checkin_list(factory, world.event)
    _, (a,) = await h.order(factory, world.event, item)

    outcomes = await _together(fast, world, clist.id, [_scan("nope"), _scan(a.secret)])
    (unknown,), none = outcomes[0]
    assert unknown.match is None and unknown.list.id == clist.id and none is None
    assert outcomes[1][1] is not None

    # a list of another organizer is not found at all
    elsewhere = await h.checkin_list(factory, world.other_event)
    (outcome,) = await _together(fast, world, elsewhere.id, [_scan(a.secret)])
    assert outcome == ([], None)
