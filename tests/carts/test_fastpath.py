"""The cart fast path (PostgreSQL): taken by plain requests, declined by all others, and
answering exactly as the general path does either way.

Each scenario runs twice on two fresh events of the same organizer: once as it comes (the
lane) and once with the lane switched off (the general path). The answers must agree in
status and body (ids, cart ids and timestamps aside), and the lane must have done what the
scenario expects of it (created, sold out, declined).
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from sqlalchemy import select

from admit import app as app_module
from admit.carts import fastpath
from admit.models import Event, Item, Quota, Voucher
from admit.quotas import availability, ledger
from tests.carts import helpers as h
from tests.factories import Factory, World, auth
from tests.lane_spy import record_outcomes


def test_every_counter_that_reduces_availability_is_covered_by_the_lane() -> None:
    """A new blocking counter needs the fast path to count it or decline where it applies."""
    assert set(availability.blocking_counters) <= fastpath.COVERED_COUNTERS


@dataclass
class Run:
    client: Any
    world: World
    factory: Factory
    event: Event
    answers: list[tuple[int, Any]] = field(default_factory=list)

    async def post(self, body: dict[str, Any]) -> dict[str, Any]:
        response = await h.post(self.client, self.world, body, self.event)
        self.answers.append((response.status_code, _comparable(response.json())))
        return response.json()

    async def item(self, name: str = "Ticket", **kw: Any) -> Item:
        return await h.item(self.factory, self.event, name, **kw)


def _comparable(body: Any) -> Any:
    """The body without what differs between two runs by construction."""
    if isinstance(body, dict) and "id" in body:
        body = dict(body)
        for key in ("id", "datetime", "expires", "item", "variation", "subevent"):
            body.pop(key)
        if body["cart_id"] != "mine@api":
            body["cart_id"] = len(body["cart_id"])
        body.pop("addon_to")
        for nested in ("addons", "bundled"):
            body[nested] = [_comparable(b) for b in body[nested]]
    return body


Scenario = Callable[[Run], Awaitable[None]]


async def plain_until_sold_out(run: Run) -> None:
    ticket = await run.item()
    await h.quota(run.factory, run.event, 2, [ticket], name="Main")
    for _ in range(3):
        await run.post({"item": ticket.id, "price": "12.50"})


async def every_plain_field(run: Run) -> None:
    ticket = await run.item()
    await h.quota(run.factory, run.event, 5, [ticket])
    expires = (dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).replace(microsecond=0)
    await run.post(
        {
            "item": ticket.id,
            "price": "3",
            "attendee_name_parts": {"given_name": "Ada", "family_name": "Lovelace"},
            "attendee_email": "ada@example.org",
            "cart_id": "mine@api",
            "expires": expires.isoformat(),
            "sales_channel": "box_office",
            "includes_tax": False,
            "answers": [],
            "addons": [],
            "seat": None,
            "voucher": "",
        }
    )
    await run.post({"item": ticket.id, "price": "3", "attendee_name": "Grace Hopper"})


async def variations(run: Run) -> None:
    shirt = await run.item("Shirt")
    red = await h.variation(run.factory, shirt, "Red")
    blue = await h.variation(run.factory, shirt, "Blue")
    await h.quota(run.factory, run.event, 1, [shirt], [red], name="Red shirts")
    await run.post({"item": shirt.id, "variation": red.id, "price": "1"})
    await run.post({"item": shirt.id, "variation": red.id, "price": "1"})  # sold out
    await run.post({"item": shirt.id, "variation": blue.id, "price": "1"})  # no quota
    await run.post({"item": shirt.id, "price": "1"})  # a variation is required
    other = await run.item("Other")
    await run.post({"item": other.id, "variation": red.id, "price": "1"})


async def references_and_input(run: Run) -> None:
    ticket = await run.item()
    await run.post({"item": ticket.id, "price": "1"})  # no quota
    await run.post({"item": 999_999_999, "price": "1"})
    await h.quota(run.factory, run.event, 5, [ticket])
    await run.post({"item": ticket.id})  # no price
    await run.post({"item": ticket.id, "price": "1", "subevent": 5})
    both_names = {"attendee_name": "A", "attendee_name_parts": {"given_name": "B"}}
    await run.post({"item": ticket.id, "price": "1", **both_names})
    await run.post({"item": ticket.id, "price": "1", "cart_id": "no-suffix"})
    await run.post({"item": ticket.id, "price": "1", "sales_channel": "carrier-pigeon"})
    await run.post({"item": ticket.id, "price": "1", "expires": "2001-01-01T00:00:00Z"})
    await run.post({"item": ticket.id, "price": "1", "unknown_field": 1})
    await run.post({"item": ticket.id, "price": "1", "addons": [{"item": ticket.id, "price": "1"}]})


async def closed_unlimited_and_two_quotas(run: Run) -> None:
    closed = await run.item("Closed")
    await run.factory.quota(run.event, 10, items=[closed], name="Shut", closed=True)
    free = await run.item("Free")
    await h.quota(run.factory, run.event, None, [free], name="Unlimited")
    both = await run.item("Both")
    await h.quota(run.factory, run.event, 5, [both], name="Wide")
    await h.quota(run.factory, run.event, 1, [both], name="Narrow")
    await run.post({"item": closed.id, "price": "1"})
    await run.post({"item": free.id, "price": "1"})
    await run.post({"item": both.id, "price": "1"})
    await run.post({"item": both.id, "price": "1"})


async def special_quotas(run: Run) -> None:
    """Quotas that close when sold out or release after exit: the general path's."""
    closing = await run.item("Closing")
    await run.factory.quota(run.event, 1, items=[closing], name="C", close_when_sold_out=True)
    exits = await run.item("Exits")
    await run.factory.quota(run.event, 1, items=[exits], name="E", release_after_exit=True)
    for item in (closing, closing, exits, exits):
        await run.post({"item": item.id, "price": "1"})


async def blocking_voucher(run: Run) -> None:
    ticket = await run.item()
    await h.quota(run.factory, run.event, 2, [ticket], name="Held")
    voucher = Voucher(
        event_id=run.event.id, code=f"HOLD{run.event.id}", block_quota=True, item_id=ticket.id
    )
    await run.factory._add(voucher)
    await run.post({"item": ticket.id, "price": "1"})
    await run.post({"item": ticket.id, "price": "1"})


async def expired_carts_free_capacity(run: Run) -> None:
    ticket = await run.item()
    await h.quota(run.factory, run.event, 1, [ticket], name="One")
    first = await run.post({"item": ticket.id, "price": "1"})
    await run.post({"item": ticket.id, "price": "1"})
    await h.expire(run.factory, first["id"])
    await run.post({"item": ticket.id, "price": "1"})


async def dated_event(run: Run) -> None:
    async with run.factory.sessionmaker() as session:
        event = await session.get(Event, run.event.id)
        assert event is not None
        event.has_subevents = True
        await session.commit()
    run.event.has_subevents = True
    ticket = await run.item()
    date = await h.subevent(run.factory, run.event)
    await h.quota(run.factory, run.event, 1, [ticket], subevent_=date, name="Dated")
    await run.post({"item": ticket.id, "subevent": date.id, "price": "1"})
    await run.post({"item": ticket.id, "subevent": date.id, "price": "1"})
    await run.post({"item": ticket.id, "price": "1"})


SCENARIOS: dict[str, tuple[Scenario, set[str]]] = {
    "plain": (plain_until_sold_out, {"created", "sold_out"}),
    "fields": (every_plain_field, {"created"}),
    "variations": (variations, {"created", "sold_out", "declined"}),
    "references": (references_and_input, {"declined"}),
    "closed": (closed_unlimited_and_two_quotas, {"created", "sold_out"}),
    "special": (special_quotas, {"declined"}),
    "voucher": (blocking_voucher, {"created", "sold_out"}),
    "expired": (expired_carts_free_capacity, {"created", "sold_out"}),
    "dated": (dated_event, {"created", "sold_out"}),
}


@pytest.fixture
def lane_outcomes(clean_app, monkeypatch) -> list[str]:
    """What the fast path did for each request that reached it."""
    return record_outcomes(clean_app, monkeypatch, fastpath._sales)


@pytest.mark.parametrize("name", SCENARIOS)
async def test_lane_answers_as_the_general_path(
    name, client, world, factory, lane_outcomes, monkeypatch
):
    scenario, expected = SCENARIOS[name]
    lane = Run(client, world, factory, await factory.event(world.org))
    await scenario(lane)
    assert set(lane_outcomes) == expected, lane.answers
    monkeypatch.setattr(app_module.LANE, "routes", [])
    general = Run(client, world, factory, await factory.event(world.org))
    await scenario(general)
    assert lane.answers == general.answers


async def test_a_batch_sells_in_order_until_the_quota_runs_out(
    client, world, factory, lane_outcomes
):
    """What queued behind a call goes in one call: the first requests get the places left."""
    ticket = await h.item(factory, world.event)
    quota = await h.quota(factory, world.event, 3, [ticket], name="Three")
    db = client._transport.app.state.db
    pool = await db.fast.pool()
    product = (pool, world.event.id, ticket.id, None, None, False)
    now = dt.datetime.now(dt.UTC)
    rows = [h.lane_row(n, now) for n in range(5)]
    results = await fastpath._sell(product, rows)
    assert [kind for kind, _ in results] == ["created"] * 3 + ["sold_out"] * 2
    assert results[3] == ("sold_out", "Three")
    assert await h.available(factory, quota) == 0
    assert await h.cart_rows(factory) == 3
    async with db.sessionmaker() as session:
        assert await ledger.drift(session) == {}


async def test_concurrent_requests_share_calls_and_never_oversell(
    client, world, factory, lane_outcomes
):
    ticket = await h.item(factory, world.event)
    quota = await h.quota(factory, world.event, 25, [ticket], name="Rush")
    calls = 0
    flush = fastpath._sales._flush

    async def counting(product: Any, rows: list[Any]) -> Any:
        nonlocal calls
        calls += 1
        return await flush(product, rows)

    fastpath._sales._flush = counting
    body = {"item": ticket.id, "price": "1"}
    try:
        responses = await asyncio.gather(
            *(client.post(h.url(world), json=body, headers=auth(world.admin)) for _ in range(60))
        )
    finally:
        fastpath._sales._flush = flush
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [201] * 25 + [400] * 35
    assert calls < 60  # requests that queued behind a call went together
    assert await h.available(factory, quota) == 0
    assert await h.cart_rows(factory) == 25


async def test_a_quota_locked_past_the_lock_timeout_answers_409(
    client, world, factory, lane_outcomes
):
    ticket = await h.item(factory, world.event)
    quota = await h.quota(factory, world.event, 5, [ticket])
    async with factory.sessionmaker() as session:
        await session.execute(
            select(Quota.id).where(Quota.id == quota.id).with_for_update()
        )  # held by a long transaction elsewhere
        response = await h.post(client, world, {"item": ticket.id, "price": "1"})
        await session.rollback()
    assert response.status_code == 409, response.text
    assert response.headers["retry-after"] == "1"
    assert lane_outcomes == ["busy"]
    assert (await h.post(client, world, {"item": ticket.id, "price": "1"})).status_code == 201
