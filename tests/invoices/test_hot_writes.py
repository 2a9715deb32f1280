"""The transaction's hot writes (``kit/lanes/hot_writes``): a payment's sales totals ride with
its invoice's number in one statement, and the two hot rows are locked in one order by
every writer, so payments and cancellations of one product at once never deadlock."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import select, text

from admit.kit.http.transaction import before_commit, commit, run_before_commit
from admit.kit.lanes import hot_writes
from admit.models import Invoice
from admit.quotas import ledger
from tests.factories import World
from tests.invoices import helpers as ih
from tests.lock_waits import PG_ONLY, lock_waits

DEADLOCKS = text("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")


async def _deadlocks(factory) -> int:
    async with factory.sessionmaker() as s:
        await s.execute(text("SELECT pg_stat_clear_snapshot()"))
        return int(await s.scalar(DEADLOCKS) or 0)


async def test_payments_and_cancellations_of_one_product_at_once(
    client, world: World, factory, database_url: str
):
    """Twenty payments (each: the product's totals row, then the invoice counter) and twenty
    cancellations (each: the counter for the cancellation invoice, then the totals row) of
    one product at once: every one succeeds, no deadlock is detected, the numbers run
    without a gap and the totals agree with a recount (checked after every test)."""
    if not database_url.startswith("postgresql"):
        pytest.skip(PG_ONLY)
    item = await ih.ticket(factory, world, "10.00")
    await ih.settings(client, world, **ih.ISSUER, invoice_generate="paid")
    orders = [await ih.order(client, world, [item]) for _ in range(40)]
    to_cancel, to_pay = orders[:20], orders[20:]
    for order in to_cancel:
        assert (await ih.action(client, world, order["code"], "mark_paid")).status_code == 200
    deadlocks_before = await _deadlocks(factory)
    retried: list[str] = []

    async def act(code: str, name: str):
        for _ in range(5):
            answer = await ih.action(client, world, code, name)
            if answer.status_code != 409:
                return answer
            retried.append(f"{name} {code}: {answer.text}")
            await asyncio.sleep(0.2)
        return answer

    work = [act(o["code"], "mark_paid") for o in to_pay]
    work += [act(o["code"], "mark_canceled") for o in to_cancel]
    async with lock_waits(factory) as waits:
        answers = await asyncio.gather(*work)
    assert [a.status_code for a in answers] == [200] * 40, [a.text for a in answers]
    assert max(waits) >= 1, "no request waited for another's lock: the race did not happen"
    await asyncio.sleep(1.5)  # a backend reports its statistics within a second of idling
    assert await _deadlocks(factory) == deadlocks_before
    assert not retried, retried
    async with factory.sessionmaker() as s:
        rows = (await s.execute(select(Invoice.invoice_no, Invoice.is_cancellation))).all()
    assert sorted(int(no) for no, _ in rows) == list(range(1, 61))
    assert sum(1 for _, cancellation in rows if cancellation) == 20


async def test_deferred_writes_run_before_the_commit_and_never_after_a_rollback(
    factory, world: World, database_url: str
):
    """Without a statement to ride along, the deferred write runs right before the commit
    (the same write deferred twice: the first is sent at once); a transaction rolled back
    after deferring leaves nothing for the session's next one."""
    if not database_url.startswith("postgresql"):
        pytest.skip("other dialects run a deferred write at once")
    key = (await ih.ticket(factory, world, "5.00"), 0, 0)
    async with factory.sessionmaker() as s:
        await ledger._apply_last(s, {key: (0, 0, 1)})
        assert hot_writes.pending(s) and key not in await ledger.stored(s)  # not sent yet
        await ledger._apply_last(s, {key: (0, 0, 2)})
        assert (await ledger.stored(s))[key] == (0, 0, 1)  # the first one went
        await commit(s)
        assert not hot_writes.pending(s)
        assert (await ledger.stored(s))[key] == (0, 0, 3)

        await ledger._apply_last(s, {key: (0, 0, 2)})

        async def fails(_session) -> None:
            raise RuntimeError("a before-commit step failed")

        before_commit(s, "fails", fails, hot_locks=True)
        with pytest.raises(RuntimeError):
            await run_before_commit(s)
        await s.rollback()
        assert not hot_writes.pending(s)
        await commit(s)
        assert (await ledger.stored(s))[key] == (0, 0, 3)
        await ledger.apply(s, {key: (0, 0, -3)})  # as found: the test's ledger check agrees
        await s.commit()


async def test_the_first_numbers_of_a_sequence_paid_at_once_for_one_product(
    client, world: World, factory, database_url: str
):
    """Sixteen first payments at once of one product, where no number of the sequence exists
    yet (its counter row is created by the first of them): all succeed, none deadlocks."""
    if not database_url.startswith("postgresql"):
        pytest.skip(PG_ONLY)
    item = await ih.ticket(factory, world, "10.00")
    await ih.settings(client, world, **ih.ISSUER, invoice_generate="paid")
    orders = [await ih.order(client, world, [item, item]) for _ in range(16)]
    deadlocks_before = await _deadlocks(factory)
    async with lock_waits(factory) as waits:
        answers = await asyncio.gather(
            *(ih.action(client, world, o["code"], "mark_paid") for o in orders)
        )
    assert [a.status_code for a in answers] == [200] * 16, [a.text for a in answers]
    assert max(waits) >= 1, "no request waited for another's lock: the race did not happen"
    await asyncio.sleep(1.5)
    assert await _deadlocks(factory) == deadlocks_before
    async with factory.sessionmaker() as s:
        numbers = sorted(int(no) for no in await s.scalars(select(Invoice.invoice_no)))
    assert numbers == list(range(1, 17))
