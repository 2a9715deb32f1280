"""Order creation's fast lane (PostgreSQL): taken by ordinary orders, declined by all others,
and leaving exactly what the general path leaves either way.

Each scenario (``lane_scenarios.py``) runs twice on two fresh events of one organizer: once as
it comes, once with the lane switched off. The answers must agree (ids, codes, secrets and
times aside), every answer must equal the order's detail, the rows written must agree, and
the lane's database call must have done what the scenario expects of it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from sqlalchemy import func, select

from admit import app as app_module
from admit.models import Order, OrderPosition, Quota
from admit.orders import hooks, lane, lane_sql
from admit.quotas import availability, ledger
from tests.factories import auth
from tests.lane_spy import record_outcomes
from tests.orders import helpers as h
from tests.orders.lane_compare import Run, first_difference
from tests.orders.lane_scenarios import SCENARIOS


def test_every_counter_that_reduces_availability_is_covered_by_the_lane() -> None:
    assert set(availability.blocking_counters) <= lane_sql.COVERED_COUNTERS


def test_every_order_hook_says_when_it_is_idle() -> None:
    """A hook without ``idle`` or ``active_if`` sends every order the general way."""
    for hook in (*hooks.order_placed_hooks, *hooks.order_paid_hooks):
        assert hooks._idle.get(hook) is not None or hooks._active_if.get(hook) is not None, hook


@pytest.fixture
def lane_outcomes(clean_app, monkeypatch) -> list[str]:
    """What the lane's database call did for each order that reached it."""
    return record_outcomes(clean_app, monkeypatch, lane._orders)


@pytest.mark.parametrize("name", SCENARIOS)
async def test_lane_answers_and_writes_as_the_general_path(
    name, client, world, factory, lane_outcomes, monkeypatch
):
    scenario, expected = SCENARIOS[name]
    fast = Run(client, world, factory, await factory.event(world.org))
    await scenario(fast)
    assert set(lane_outcomes) == expected, fast.answers
    monkeypatch.setattr(app_module.LANE, "routes", [])
    general = Run(client, world, factory, await factory.event(world.org))
    await scenario(general)
    assert fast.answers == general.answers, first_difference(fast.answers, general.answers)
    fast_rows, general_rows = await fast.rows(), await general.rows()
    assert fast_rows == general_rows, first_difference(fast_rows, general_rows)


async def _place(event_id: int, bodies: list[dict[str, Any]], client, world) -> list[Any]:
    url = f"/api/v1/organizers/{world.org.slug}/events/{world.event.slug}/orders/"
    return await asyncio.gather(
        *(client.post(url, json=body, headers=auth(world.admin)) for body in bodies)
    )


async def test_concurrent_orders_share_calls_and_never_oversell(
    client, world, factory, lane_outcomes
):
    ticket = await h.item(factory, world.event, "5.00", quota=30)
    shirt = await h.item(factory, world.event, "2.00", quota=1000)
    calls = 0
    flush = lane._orders._flush

    async def counting(key: Any, batch: list[Any]) -> Any:
        nonlocal calls
        calls += 1
        return await flush(key, batch)

    lane._orders._flush = counting
    bodies = [
        {"positions": [{"item": ticket.id}, {"item": shirt.id, "addon_to": 1}]} for _ in range(45)
    ]
    try:
        responses = await _place(world.event.id, bodies, client, world)
    finally:
        lane._orders._flush = flush
    assert sorted(r.status_code for r in responses) == [201] * 30 + [400] * 15
    assert calls < 45  # orders that queued behind a call went together
    async with factory.sessionmaker() as session:
        sold = await session.scalar(select(func.count()).where(OrderPosition.item_id == ticket.id))
        assert sold == 30
        assert await ledger.drift(session) == {}
    assert (
        await h.availability(client, world, factory, (await h.quota_of(factory, ticket.id)).id) == 0
    )


async def test_a_batch_sells_in_order_until_a_quota_runs_out(client, world, factory, lane_outcomes):
    """The first orders of a call get what is left; the later ones hear which quota ran out,
    on the positions it concerns."""
    ticket = await h.item(factory, world.event, "5.00", quota=3)
    other = await h.item(factory, world.event, "5.00", quota=10)
    gate = asyncio.Event()
    flush = lane._orders._flush

    async def held(key: Any, batch: list[Any]) -> Any:
        await gate.wait()
        return await flush(key, batch)

    lane._orders._flush = held
    bodies = [{"positions": [{"item": other.id}, {"item": ticket.id}]} for _ in range(5)]
    try:
        pending = asyncio.ensure_future(_place(world.event.id, bodies, client, world))
        await asyncio.sleep(0.3)
        gate.set()
        responses = await pending
    finally:
        lane._orders._flush = flush
    statuses = [r.status_code for r in responses]
    assert sorted(statuses) == [201] * 3 + [400] * 2
    refused = [r.json() for r in responses if r.status_code == 400]
    quota = await h.quota_of(factory, ticket.id)
    message = (
        f'There is not enough quota available on quota "{quota.name}" to perform the operation.'
    )
    assert refused == [{"positions": [{}, {"item": [message]}]}] * 2
    assert set(lane_outcomes) == {"done", "sold_out"}


async def test_a_quota_locked_past_the_lock_timeout_answers_409(
    client, world, factory, lane_outcomes
):
    ticket = await h.item(factory, world.event, "5.00", quota=5)
    quota = await h.quota_of(factory, ticket.id)
    async with factory.sessionmaker() as session:
        await session.execute(select(Quota.id).where(Quota.id == quota.id).with_for_update())
        [response] = await _place(world.event.id, [h.body(ticket.id)], client, world)
        await session.rollback()
    assert response.status_code == 409, response.text
    assert response.headers["retry-after"] == "1"
    assert lane_outcomes == ["busy"]
    [again] = await _place(world.event.id, [h.body(ticket.id)], client, world)
    assert again.status_code == 201


async def test_keyed_orders_on_the_lane_replay_their_answers(client, world, factory, lane_outcomes):
    ticket = await h.item(factory, world.event, "5.00", quota=4)
    url = h.url(world)

    async def post(n: int) -> Any:
        headers = {**auth(world.admin), "X-Idempotency-Key": f"order-{n}"}
        return await client.post(url, json=h.body(ticket.id), headers=headers)

    first = await asyncio.gather(*(post(n) for n in range(6)))
    assert sorted(r.status_code for r in first) == [201] * 4 + [400] * 2
    again = await asyncio.gather(*(post(n) for n in range(6)))
    for a, b in zip(first, again, strict=True):
        assert (b.status_code, b.content) == (a.status_code, a.content)
        assert b.headers["idempotent-replayed"] == "true"
    async with factory.sessionmaker() as session:
        assert await session.scalar(select(func.count()).select_from(Order)) == 4
    assert "done" in lane_outcomes
