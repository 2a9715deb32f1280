"""Invoice numbers: prefixes, shared sequences, per-order numbering, and (on PostgreSQL) fifty
payments at once getting fifty consecutive numbers, none twice and none missing, with the
transactions shown to overlap; a rolled-back issuer gives its number back (no gap)."""

from __future__ import annotations

import asyncio
import time

import pytest
from sqlalchemy import select

from admit.invoices import numbers, writing
from admit.kit.http.transaction import after_commit
from admit.models import Invoice
from tests.factories import World, auth
from tests.invoices import helpers as ih
from tests.lock_waits import PG_ONLY, lock_waits


async def test_prefixes_shared_sequences_and_per_order_numbers(client, world: World, factory):
    item = await ih.ticket(factory, world, "10.00")
    await ih.settings(client, world, invoice_numbers_prefix="ACME-%y%m-",
                      invoice_numbers_counter_length=3)  # fmt: skip
    first = await ih.order(client, world, [item])
    number = (await ih.action(client, world, first["code"], "create_invoice")).json()["number"]
    assert number.startswith("ACME-") and number.endswith("-001") and len(number) == 13
    # Another event of the organizer with the same prefix continues the same sequence.
    other = await factory.event(world.org, "fest")
    await client.patch("/api/v1/organizers/acme/events/fest/settings/",
                       json={"invoice_numbers_prefix": "ACME-%y%m-",
                             "invoice_numbers_counter_length": 3},
                       headers=auth(world.admin))  # fmt: skip
    fest_item = (await factory_item(factory, other)).id
    r = await client.post("/api/v1/organizers/acme/events/fest/orders/",
                          json={"email": "a@example.org", "positions": [{"item": fest_item}]},
                          headers=auth(world.admin))  # fmt: skip
    code = r.json()["code"]
    r = await client.post(f"/api/v1/organizers/acme/events/fest/orders/{code}/create_invoice/",
                          headers=auth(world.admin))  # fmt: skip
    assert r.json()["number"] == number[:-3] + "002"
    # Not consecutive: the order code and a counter of the order's invoices.
    await ih.settings(client, world, invoice_numbers_consecutive=False)
    second = await ih.order(client, world, [item])
    r = await ih.action(client, world, second["code"], "create_invoice")
    assert r.json()["number"].endswith(f"-{second['code']}-1")
    url = ih.event_url(world, f"invoices/{r.json()['number']}/reissue/")
    assert (await client.post(url, headers=auth(world.admin))).status_code == 204
    mine = await ih.invoices(client, world, order=second["code"])
    assert [i["number"].rsplit("-", 1)[1] for i in mine] == ["1", "2", "3"]
    # Test mode orders get their own sequence.
    await ih.settings(client, world, invoice_numbers_consecutive=True)
    test = await ih.order(client, world, [item], testmode=True)
    r = await ih.action(client, world, test["code"], "create_invoice")
    assert "-TEST-" in r.json()["number"] and r.json()["number"].endswith("-001")


async def factory_item(factory, event):
    from tests.orders import helpers as h

    return await h.item(factory, event, "10.00")


@pytest.mark.parametrize("bad", ["A/B", "X%H-", "a" * 151, "line\nbreak"])
async def test_bad_prefixes_are_refused(client, world: World, bad: str):
    body = {"invoice_numbers_prefix": bad}
    r = await client.patch(ih.event_url(world, "settings/"), json=body, headers=auth(world.admin))
    assert r.status_code == 400 and list(r.json()) == ["invoice_numbers_prefix"]


async def test_fifty_concurrent_payments_get_fifty_consecutive_numbers(
    client, world: World, factory, database_url: str, monkeypatch
):
    if not database_url.startswith("postgresql"):
        pytest.skip(PG_ONLY)
    await ih.settings(client, world, invoice_generate="paid")
    # A product (and quota) each: payments of one product also queue on its sales ledger row,
    # which would serialise them before they reach the invoice counter.
    codes = []
    for _ in range(50):
        item = await ih.ticket(factory, world, "10.00")
        codes.append((await ih.order(client, world, [item]))["code"])

    # Instrument the counter: when each transaction took its number (the one statement that
    # writes the invoice on PostgreSQL, ``writing._write_pg``), and when it committed.
    holding = {"now": 0, "most": 0}
    waits: list[float] = []
    real_write = writing._write_pg

    async def write(session, plan, guarded):
        holding["now"] += 1
        holding["most"] = max(holding["most"], holding["now"])
        started = time.perf_counter()
        issued = await real_write(session, plan, guarded)
        waits.append(time.perf_counter() - started)
        # The counter row stays locked until the commit, which follows this one statement:
        # so briefly that on a quiet machine the rivals could miss it. Held as a slower
        # payment would hold it, the rivals queue behind it (seen below).
        await asyncio.sleep(0.01)

        async def released() -> None:
            holding["now"] -= 1

        after_commit(session, released)
        return issued

    monkeypatch.setattr(writing, "_write_pg", write)
    retried = []

    async def pay(code: str):
        """As a client does: a lock wait past the bound is 409 with Retry-After; try again."""
        for _ in range(5):
            answer = await ih.action(client, world, code, "mark_paid")
            if answer.status_code != 409:
                return answer
            retried.append(code)
            await asyncio.sleep(float(answer.headers.get("retry-after", "1")))
        return answer

    async with lock_waits(factory) as waiting_seen:  # seen from PostgreSQL itself
        answers = await asyncio.gather(*(pay(c) for c in codes))
    assert [a.status_code for a in answers] == [200] * 50, [
        a.text for a in answers if a.status_code != 200
    ]

    async with factory.sessionmaker() as s:
        rows = (await s.execute(select(Invoice.invoice_no, Invoice.order_id))).all()
    got = sorted(int(no) for no, _ in rows)
    assert got == list(range(1, 51))  # fifty, consecutive, none twice, none missing
    assert len({order for _, order in rows}) == 50
    # The race happened: many transactions were after the counter at the same time (between
    # asking for a number and their commit), the later ones waiting for the earlier ones' row
    # lock, so some waited far longer than an uncontended update takes.
    assert holding["most"] >= 5, holding
    assert max(waiting_seen) >= 1, waiting_seen
    assert len(retried) <= 10, retried  # on a loaded machine a few may wait past the bound
    assert max(waits) > 5 * min(waits), (min(waits), max(waits))


async def test_a_rolled_back_issuer_gives_its_number_back(clean_app, world: World, database_url):
    if not database_url.startswith("postgresql"):
        pytest.skip(PG_ONLY)
    sessionmaker = clean_app.state.db.sessionmaker

    async def issuer(index: int) -> int | None:
        async with sessionmaker() as session:
            value = await numbers.take(session, world.org.id, "RACE-")
            await asyncio.sleep(0.01)  # hold the lock so the others queue behind it
            if index % 3 == 0:
                await session.rollback()
                return None
            await session.commit()
            return value

    results = await asyncio.gather(*(issuer(i) for i in range(12)))
    kept = sorted(v for v in results if v is not None)
    assert kept == list(range(1, len(kept) + 1)) and len(kept) == 8


async def test_concurrent_create_invoice_on_one_order_makes_one(
    client, world: World, factory, database_url: str
):
    """Ten ``create_invoice`` calls for one order at once: the order's row lock lets one issue
    it; the others wait for that lock (seen in PostgreSQL) and then find it issued (400)."""
    if not database_url.startswith("postgresql"):
        pytest.skip(PG_ONLY)
    item = await ih.ticket(factory, world, "10.00")
    code = (await ih.order(client, world, [item]))["code"]
    async with lock_waits(factory) as waiting_seen:
        answers = await asyncio.gather(
            *(ih.action(client, world, code, "create_invoice") for _ in range(10))
        )
    statuses = sorted(a.status_code for a in answers)
    assert statuses.count(201) == 1, [a.text for a in answers]
    assert set(statuses) <= {201, 400, 409}, [a.text for a in answers]
    async with factory.sessionmaker() as s:
        assert len((await s.execute(select(Invoice.id))).all()) == 1
    assert max(waiting_seen) >= 1, waiting_seen  # the calls did meet at the order's lock
