"""The headless shop's fast lanes (``shop/cart_lane.py``, ``shop/checkout_lane.py``,
PostgreSQL): they answer exactly as the routes do and write the same rows, they leave
everything else to the routes, and a rush of concurrent checkouts sells exactly the quota.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from sqlalchemy import func, select

from admit.models import CartPosition, Job, Order, OrderPosition, OutgoingMail, SalesCount
from admit.orders import lane
from admit.shop import lane_shared
from tests.conftest import asgi_client
from tests.lane_spy import record_outcomes
from tests.shop import helpers as h

# What differs between two orders of the same cart contents.
_VARYING = {"code", "url", "cart_id", "expires", "seconds_left", "id", "Reference"}


def _same(body: Any) -> Any:
    if isinstance(body, dict):
        return {k: _same(v) for k, v in body.items() if k not in _VARYING}
    if isinstance(body, list):
        return [_same(v) for v in body]
    if isinstance(body, str) and body.startswith("Please transfer"):
        return body.split(", with the reference")[0]  # the reference is the order's code
    return body


class _Used:
    """Counts the requests a lane handled (its handler ran to an answer)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.answered = 0
        self.in_flight = 0
        self.most_in_flight = 0
        original = lane_shared.serve

        async def serve(request: Any, handle: Any, *rest: Any) -> Any:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            try:
                answer = await original(request, handle, *rest)
            except Exception:  # an answer too (the sold-out 400, say)
                self.answered += 1
                raise
            finally:
                self.in_flight -= 1
            self.answered += answer is not None
            return answer

        monkeypatch.setattr(lane_shared, "serve", serve)


def _route_only(monkeypatch: pytest.MonkeyPatch) -> None:
    async def declined(request: Any, handle: Any, *rest: Any) -> None:
        return None

    monkeypatch.setattr(lane_shared, "serve", declined)


async def _rows(factory: Any, order_code: str) -> dict[str, Any]:
    async with factory.sessionmaker() as session:
        order = await session.scalar(select(Order).where(Order.code == order_code))
        positions = list(
            await session.scalars(select(OrderPosition).where(OrderPosition.order_id == order.id))
        )
        mail = await session.scalar(select(OutgoingMail).where(OutgoingMail.order_id == order.id))
        job = await session.get(Job, mail.job_id)
    return {
        "order": (order.status, order.total, order.email, order.locale, order.sales_channel),
        "positions": [(p.item_id, p.price, p.tax_value, p.attendee_name_cached) for p in positions],
        "mail": (mail.to, mail.status, mail.subject.replace(order.code, "CODE")),
        "mail_body": mail.body.replace(order.code, "CODE").replace(order.secret, "SECRET"),
        "job": (job.kind, job.input == {"mail_id": mail.id}, job.status),
    }


async def test_the_lanes_answer_and_write_as_the_routes(
    client, world, factory, clean_app, monkeypatch
):
    shop = await h.setup(factory, world, size=5)
    record_outcomes(clean_app, monkeypatch, lane._checkouts)
    used = _Used(monkeypatch)
    found = []
    for via_lane in (True, False):
        if not via_lane:
            _route_only(monkeypatch)
        cart = await h.cart(client, world, {"item": shop.ticket.id})
        assert cart.status_code == 201, cart.text
        details = [{"id": cart.json()["positions"][0]["id"], "attendee_name": "Ada"}]
        placed = await h.buy(
            client,
            world,
            cart.json()["cart_id"],
            payment_provider="banktransfer",
            positions=details,
        )
        assert placed.status_code == 201, placed.text
        found.append((cart.json(), placed.json(), await _rows(factory, placed.json()["code"])))
    assert used.answered == 2  # the cart and the checkout of the first round
    (lane_cart, lane_order, lane_rows), (route_cart, route_order, route_rows) = found
    assert _same(lane_cart) == _same(route_cart)
    assert _same(lane_order) == _same(route_order)
    assert lane_rows == route_rows
    assert lane_order["positions"][0]["attendee_name"] == "Ada"
    async with factory.sessionmaker() as session:
        assert await session.scalar(select(func.count()).select_from(CartPosition)) == 0
        ledger = await session.scalar(
            select(SalesCount).where(SalesCount.item_id == shop.ticket.id)
        )
    assert (ledger.pending, ledger.paid, ledger.carts) == (2, 0, 0)


async def test_what_the_lanes_do_not_take_goes_the_routes_way(
    client, world, factory, clean_app, monkeypatch
):
    names = {"attendee_names_asked": True, "attendee_names_required": True}
    shop = await h.setup(factory, world, size=5, **names)
    outcomes = record_outcomes(clean_app, monkeypatch, lane._checkouts)
    used = _Used(monkeypatch)
    cart = await h.cart(client, world, {"item": shop.ticket.id})
    assert used.answered == 1
    cart_id = cart.json()["cart_id"]
    # a missing attendee name: the route's 400 naming it
    r = await h.buy(client, world, cart_id, payment_provider="banktransfer")
    assert r.status_code == 400 and "attendee_name" in r.text, r.text
    # an unknown payment method: the route's answer
    r = await h.buy(client, world, cart_id, payment_provider="nope")
    assert r.status_code == 400 and "not offered" in r.text, r.text
    # two products in one request, a voucher: the route
    r = await h.cart(client, world, {"item": shop.ticket.id}, {"item": shop.free.id})
    assert r.status_code == 201, r.text
    r = await h.cart(client, world, {"item": shop.ticket.id}, voucher="NOPE")
    assert r.status_code == 400, r.text
    assert used.answered == 1 and outcomes == []
    # the name given: the lane takes it
    position = cart.json()["positions"][0]["id"]
    details = [{"id": position, "attendee_name": "Ada"}]
    r = await h.buy(client, world, cart_id, payment_provider="banktransfer", positions=details)
    assert r.status_code == 201, r.text
    assert outcomes == ["done"]


@pytest.mark.parametrize("quota", [12])
async def test_a_rush_of_checkouts_sells_exactly_the_quota(
    client, world, factory, clean_app, monkeypatch, quota
):
    """Many buyers at once against a small quota: exactly the quota sold (carts and orders),
    none twice, every other buyer told why; the checkouts overlapped and shared calls."""
    shop = await h.setup(factory, world, size=quota)
    batches: list[int] = []
    flush = lane._checkouts._flush

    async def spy(key: Any, items: list[Any]) -> Any:
        batches.append(len(items))
        return await flush(key, items)

    if not clean_app.state.db.fast.native:
        pytest.skip("the fast lanes are PostgreSQL's")
    monkeypatch.setattr(lane._checkouts, "_flush", spy)
    used = _Used(monkeypatch)
    buyers = quota * 4
    spans: list[tuple[float, float]] = []

    async def buyer(c: Any, n: int) -> tuple[Any, Any]:
        cart = await h.cart(c, world, {"item": shop.ticket.id})
        if cart.status_code != 201:
            return cart, None
        start = time.perf_counter()
        body = {"email": f"b{n}@example.org", "payment_provider": "banktransfer"}
        order = await h.buy(c, world, cart.json()["cart_id"], **body)
        spans.append((start, time.perf_counter()))
        return cart, order

    async with asgi_client(clean_app) as c:
        results = await asyncio.gather(*(buyer(c, n) for n in range(buyers)))
    carts = [cart for cart, _ in results]
    orders = [order for _, order in results if order is not None]
    assert sum(r.status_code == 201 for r in carts) == quota
    refused = [r for r in carts if r.status_code != 201]
    assert all(r.status_code == 400 for r in refused), [r.text for r in refused]
    assert all('quota "Tickets"' in r.json()["non_field_errors"][0] for r in refused)
    assert [r.status_code for r in orders] == [201] * quota, [r.text for r in orders]
    assert len({r.json()["code"] for r in orders}) == quota
    async with factory.sessionmaker() as session:
        sold = await session.scalar(
            select(func.count())
            .select_from(OrderPosition)
            .where(OrderPosition.item_id == shop.ticket.id)
        )
        ledger = await session.scalar(
            select(SalesCount).where(SalesCount.item_id == shop.ticket.id)
        )
        left = await session.scalar(select(func.count()).select_from(CartPosition))
    assert sold == quota and left == 0
    assert (ledger.pending, ledger.carts) == (quota, 0)
    # The race happened: checkouts overlapped in time, in the lane, sharing database calls.
    overlapping = max(sum(s < end and e > start for s, e in spans) for start, end in spans)
    assert overlapping > 1
    assert used.most_in_flight > 1
    assert used.answered == buyers + quota  # every cart request and every checkout
    assert sum(batches) == quota and max(batches) > 1, batches


async def test_a_cart_changed_before_the_call_goes_the_routes_way(
    client, world, factory, clean_app, monkeypatch
):
    """The call checks that the cart's rows are exactly those the lane validated: one added
    meanwhile makes it write nothing, and the route checks out the whole cart."""
    shop = await h.setup(factory, world, size=5)
    outcomes = record_outcomes(clean_app, monkeypatch, lane._checkouts)
    cart = await h.cart(client, world, {"item": shop.ticket.id})
    cart_id = cart.json()["cart_id"]
    submit = lane.submit

    async def meanwhile(pool: Any, event: Any, pending: Any) -> Any:
        async with asgi_client(clean_app) as other:
            more = await h.cart(other, world, {"item": shop.ticket.id}, cart_id=cart_id)
        assert more.status_code == 201, more.text
        return await submit(pool, event, pending)

    monkeypatch.setattr(lane, "submit", meanwhile)
    r = await h.buy(client, world, cart_id, payment_provider="banktransfer")
    assert r.status_code == 201, r.text
    assert outcomes == ["declined"]
    assert len(r.json()["positions"]) == 2  # the route took the cart as it is now
    async with factory.sessionmaker() as session:
        assert await session.scalar(select(func.count()).select_from(Order)) == 1
        assert await session.scalar(select(func.count()).select_from(CartPosition)) == 0


async def test_a_catalog_changed_since_the_copy_goes_the_routes_way(
    client, world, factory, clean_app, monkeypatch
):
    """An organizer's change after the copy was kept: the copy is read again (or the call
    finds it stale), never sold against."""
    shop = await h.setup(factory, world, size=5)
    outcomes = record_outcomes(clean_app, monkeypatch, lane._checkouts)
    cart = await h.cart(client, world, {"item": shop.ticket.id})
    async with factory.sessionmaker() as session:
        item = await session.get(type(shop.ticket), shop.ticket.id)
        item.max_per_order = 0  # (0: no limit) a change that moves the stamp only
        item.min_per_order = 2
        await session.commit()
    r = await h.buy(client, world, cart.json()["cart_id"], payment_provider="banktransfer")
    assert r.status_code == 400 and "at least 2" in r.text, r.text
    assert outcomes == []
