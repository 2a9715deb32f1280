"""The lane functions keep their statements on indexes for the connection's whole life.

PL/pgSQL plans a statement once per connection and then reuses a generic plan, made without
the call's values. For the count of expired carts that plan assumed a third of all carts had
expired and scanned the whole table on every sale once it was big: a cart rush fell from
3,000 to 1,200 sales/s within a minute. The plans are read here with ``auto_explain`` on the
connection the lane uses.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from admit.carts import fastpath
from tests.carts import helpers as h


@pytest.fixture
async def lane_connection(clean_app) -> Any:
    db = clean_app.state.db
    if db.is_sqlite:
        pytest.skip("the lane functions exist on PostgreSQL only")
    pool = await db.fast.pool()
    conn = await pool.acquire()
    try:
        yield conn
    finally:
        conn.terminate()  # its session settings must not go back into the pool
        await pool.release(conn)


async def test_every_lane_function_runs_without_sequential_scans(lane_connection) -> None:
    rows = await lane_connection.fetch(
        "SELECT proname, proconfig FROM pg_proc WHERE pronamespace = pg_my_temp_schema()"
    )
    settings = {row["proname"]: row["proconfig"] for row in rows}
    assert {"admit_add_to_carts", "admit_place_orders"} <= settings.keys()
    assert all(config == ["enable_seqscan=off"] for config in settings.values()), settings


async def test_sales_on_a_big_cart_table_do_not_scan_it(lane_connection, world, factory) -> None:
    conn = lane_connection
    ticket = await h.item(factory, world.event)
    other = await h.item(factory, world.event, "Other")
    await h.quota(factory, world.event, 1000, [ticket])
    product = (conn, world.event.id, ticket.id, None, None, False)
    now = dt.datetime.now(dt.UTC)
    for n in range(8):  # the connection settles on its plans while the table is small
        assert await fastpath._sell(product, [h.lane_row(n, now)]) == [("created", _any_id())]
    await conn.execute(
        "INSERT INTO cart_positions (event_id, cart_id, datetime, expires, item_id, price, "
        "attendee_name_parts, is_bundled, sales_channel, includes_tax) "
        "SELECT $1, 'big' || n, now(), now() + interval '30 minutes', $2, 1, '{}', false, "
        "'web', true FROM generate_series(1, 20000) AS n",
        world.event.id,
        other.id,
    )
    # No ANALYZE: in a rush the table grows far faster than autovacuum looks at it.

    plans: list[str] = []
    conn.add_log_listener(lambda _conn, message: plans.append(message.message))
    await conn.execute(
        "LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0; "
        "SET auto_explain.log_nested_statements = on; SET client_min_messages = log"
    )
    for n in range(8, 16):
        assert await fastpath._sell(product, [h.lane_row(n, now)]) == [("created", _any_id())]
    counted = [plan for plan in plans if "expires <" in plan and "cart_positions" in plan]
    assert counted  # the expired carts' count was seen, so the check below can fail
    scans = [plan for plan in plans if "Seq Scan on cart_positions" in plan]
    assert scans == []


class _any_id:
    def __eq__(self, other: object) -> bool:
        return isinstance(other, int)
