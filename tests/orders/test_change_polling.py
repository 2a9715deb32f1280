"""Change polling: ``GET orders/?modified_since=<previous X-Page-Generated>`` finds an order
after every kind of change to it (the order, positions, answers, payments, refunds, check-ins
through every redeem path, annulment, print logs, raw SQL) and never an untouched one; a change
whose transaction started before the page and committed after it is not lost."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy import text, update

from admit.checkin import fastpath
from admit.kit.stamps import page as page_stamp
from admit.kit.stamps.page import PG_MARGIN, REUSE
from admit.models import OrderPosition
from tests.checkin import helpers as ch
from tests.factories import World, auth
from tests.orders import helpers as h
from tests.orders.test_payments import call, place


class Poller:
    """An integration polling the event's order list (and, to compare, the organizer's)."""

    def __init__(self, client, world: World, factory) -> None:
        self.client, self.world, self.factory = client, world, factory
        self.native = not client._transport.app.state.db.is_sqlite

    async def page(self, since: str | None = None, *, both: bool = False) -> tuple[set[str], str]:
        params = {"modified_since": since} if since else {}
        urls = [h.url(self.world), f"/api/v1/organizers/{self.world.org.slug}/orders/"]
        found = []
        for url in urls if both else urls[:1]:
            r = await self.client.get(url, params=params, headers=auth(self.world.admin))
            assert r.status_code == 200, r.text
            found.append(({o["code"] for o in r.json()["results"]}, r.headers["X-Page-Generated"]))
        assert all(codes == found[0][0] for codes, _ in found), found
        return found[0]

    async def settle(self) -> str:
        """The next page's bound, once every earlier stamp is strictly older than it: a
        process hands out its last bound for REUSE seconds, PostgreSQL's lies a margin before
        the clock, SQLite's has milliseconds."""
        margin = PG_MARGIN.total_seconds() if self.native else 0.002
        await asyncio.sleep(REUSE + margin + 0.01)
        return (await self.page())[1]


async def _raw(factory, statement) -> None:
    async with factory.sessionmaker() as s:
        await s.execute(statement)
        await s.commit()


async def test_every_change_is_found_by_the_next_poll(client, world: World, factory, monkeypatch):
    item = await h.item(factory, world.event, "10.00")
    size = await h.question(factory, world.event, [item], "S", identifier="SIZE")
    door = await h.question(
        factory, world.event, [item], "S", identifier="DOOR", ask_during_checkin=True
    )
    clist = await ch.checkin_list(factory, world.event)
    order = await place(client, world, item.id, 2)
    other = await place(client, world, item.id)
    code = order["code"]
    first, second = (p["id"] for p in order["positions"])
    secret = order["positions"][0]["secret"]
    poller = Poller(client, world, factory)

    batches: list[int] = []
    statement = fastpath._statement

    async def counted(key, scans):
        batches.append(len(scans))
        return await statement(key, scans)

    monkeypatch.setattr(fastpath, "_statement", counted)

    def post(rest: str, body: Any = None) -> Callable[[], Awaitable[Any]]:
        return lambda: call(client, world, "POST", code, rest, body)

    def position(pk: int, rest: str, body: dict, method: str = "POST"):
        url = h.url(world, f"orderpositions/{pk}/{rest}")
        return lambda: client.request(method, url, json=body, headers=auth(world.admin))

    def redeem(**body: Any):
        return lambda: ch.redeem(client, world, secret, [clist.id], **body)

    steps: list[tuple[str, Callable[[], Awaitable[Any]], int]] = [
        ("extend", post("extend/", {"expires": "2999-01-01T00:00:00Z"}), 200),
        (
            "order PATCH",
            lambda: client.patch(
                h.url(world, f"orders/{code}/"),
                json={"comment": "VIP"},
                headers=auth(world.admin),
            ),
            200,
        ),
        (
            "position PATCH with an answer",
            position(second, "", {"answers": [{"question": size.id, "answer": "XL"}]}, "PATCH"),
            200,
        ),
        (
            "order change",
            post("change/", {"patch_positions": [{"position": second, "body": {"price": "5"}}]}),
            200,
        ),
        ("payment created", post("payments/", {"amount": "15.00"}), 201),
        ("payment confirmed (order paid)", post("payments/1/confirm/"), 200),
        # First entry: the lane's batched statement on PostgreSQL (the door question waits).
        ("entry through the redeem lane", redeem(nonce="n1", questions_supported=False), 201),
        ("exit", redeem(type="exit"), 201),
        ("entry with a check-in answer", redeem(answers={str(door.id): "Gate B"}), 201),
        (
            "annulment",
            lambda: client.post(
                ch.rpc_url(world, "annul"),
                json={"nonce": "n1", "lists": [clist.id]},
                headers=auth(world.admin),
            ),
            200,
        ),
        ("refund", post("payments/1/refund/", {"amount": "5.00"}), 200),
        ("mark paid", post("mark_paid/"), 200),
        ("print log", position(first, "printlog/", {"source": "door", "type": "badge"}), 201),
        (
            "raw SQL on a position",
            lambda: _raw(
                factory,
                update(OrderPosition).where(OrderPosition.id == first).values(company="ACME"),
            ),
            None,
        ),
        (
            "raw SQL on the order, stamp left alone",
            lambda: _raw(
                factory,
                text("UPDATE orders SET comment = 'raw' WHERE code = :code").bindparams(code=code),
            ),
            None,
        ),
    ]
    since = await poller.settle()
    for name, change, status in steps:
        found, _ = await poller.page(since)
        assert found == set(), f"before {name}: {found}"
        response = await change()
        if status is not None:
            assert response.status_code == status, (name, response.text)
        found, _ = await poller.page(since, both=True)
        assert found == {code}, f"{name}: {found}"
        since = await poller.settle()
    assert other["code"] != code
    if poller.native:
        assert batches, "the first entry did not go through the batched statement"


async def test_failed_scans_leave_the_order_alone(client, world: World, factory):
    item = await h.item(factory, world.event, "10.00")
    clist = await ch.checkin_list(factory, world.event)
    order = await place(client, world, item.id)  # pending: a scan fails
    poller = Poller(client, world, factory)
    since = await poller.settle()
    r = await ch.redeem(client, world, order["positions"][0]["secret"], [clist.id])
    assert r.json()["status"] == "error" and r.json()["reason"] == "unpaid"
    assert (await poller.page(since))[0] == set()


async def test_a_change_committed_after_the_page_is_found_next_time(client, world: World, factory):
    """The writer's transaction starts (and stamps the order) before the page is read and
    commits after it: the change is in the page (SQLite: the page waits for the writer) or in
    the next poll (PostgreSQL: the page's bound is the writer's start)."""
    item = await h.item(factory, world.event, "10.00")
    order = await place(client, world, item.id)
    poller = Poller(client, world, factory)
    since = await poller.settle()
    async with factory.sessionmaker() as writer:
        await writer.execute(
            update(OrderPosition)
            .where(OrderPosition.id == order["positions"][0]["id"])
            .values(attendee_email="late@example.org")
        )
        await asyncio.sleep(0.3)  # well past the margin: the clock alone would miss it
        listing = asyncio.create_task(
            client.get(h.url(world), params={"modified_since": since}, headers=auth(world.admin))
        )
        if poller.native:
            # The page is read and answered while the writer is still open (a read never
            # waits for a writer there): awaited, not given a fixed time.
            await asyncio.wait_for(asyncio.shield(listing), 60)
        else:
            # The page waits for the writer: it is not done however long the writer stays.
            done, _ = await asyncio.wait({listing}, timeout=0.5)
            assert not done
        await writer.commit()
    r = await listing
    shown = {o["code"]: o["positions"][0]["attendee_email"] for o in r.json()["results"]}
    generated = r.headers["X-Page-Generated"]
    found, _ = await poller.page(generated)
    if poller.native:
        # Read before the commit: the change is not in it. (The order itself may be: its
        # creation is in the page whenever a transaction of another test's connection was
        # open, making the bound older; a duplicate, never a miss.)
        assert "late@example.org" not in shown.values()
        assert found == {order["code"]}
    else:
        assert shown == {order["code"]: "late@example.org"}


async def test_concurrent_scans_of_one_orders_tickets_all_get_in(client, world: World, factory):
    """Scans of the tickets of the same orders on two lists at once (PostgreSQL: concurrent
    batch statements whose triggers stamp the same orders): every scan gets in, every order
    is stamped."""
    item = await ch.ticket(factory, world.event)
    lists = [await ch.checkin_list(factory, world.event, name) for name in ("North", "South")]
    orders = [await ch.order(factory, world.event, item, n=4) for _ in range(6)]
    poller = Poller(client, world, factory)
    since = await poller.settle()
    # Each list scans the tickets in another order: its batches meet the orders the other way.
    scans = [
        ch.redeem(client, world, pos.secret, [clist.id])
        for k, clist in enumerate(lists)
        for _, positions in (orders if k == 0 else orders[::-1])
        for pos in (positions if k == 0 else positions[::-1])
    ]
    responses = await asyncio.gather(*scans)
    assert [r.status_code for r in responses] == [201] * len(scans)
    found, _ = await poller.page(since)
    assert found == {order.code for order, _ in orders}


async def test_a_process_hands_out_its_last_bound_again(client, world: World, factory, monkeypatch):
    """Within REUSE a process answers with the bound it read before: older, so still exact."""
    monkeypatch.setattr(page_stamp, "REUSE", 60.0)
    item = await h.item(factory, world.event, "10.00")
    order = await place(client, world, item.id)
    poller = Poller(client, world, factory)
    await poller.settle()
    page_stamp._last.clear()  # the next page reads a bound of its own (then kept for 60 s)
    _, first = await poller.page()
    assert (await poller.page(first))[0] == set()
    r = await client.patch(
        h.url(world, f"orders/{order['code']}/"), json={"comment": "x"}, headers=auth(world.admin)
    )
    assert r.status_code == 200
    found, second = await poller.page(first)
    assert second == first and found == {order["code"]}
