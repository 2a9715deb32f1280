"""The native pool prepares its statements again after ``statement_lifetime``: a generic
plan made while a table was nearly empty does not outlive it (PostgreSQL only)."""

from __future__ import annotations

import asyncio

import pytest

from admit.kit.lanes.fastread import FastReader

PREPARED = "SELECT prepare_time FROM pg_prepared_statements WHERE statement = $1"
QUERY = "SELECT count(*) FROM checkins WHERE list_id = $1"


async def test_statements_are_prepared_again_after_their_lifetime(clean_app) -> None:
    fast: FastReader = clean_app.state.db.fast
    if not fast.native:
        pytest.skip("the native pool is PostgreSQL's")
    reader = FastReader(fast.engine, fast.url, pool_size=1, statement_lifetime=0.5)
    try:
        pool = await reader.pool()
        async with pool.acquire() as conn:  # the pool's only connection
            await conn.fetchval(QUERY, 1)
            first = await conn.fetchval(PREPARED, QUERY)
            await conn.fetchval(QUERY, 1)
            assert await conn.fetchval(PREPARED, QUERY) == first  # cached
            await asyncio.sleep(1.0)
            await conn.fetchval(QUERY, 1)
            again = await conn.fetchval(PREPARED, QUERY)
        assert first is not None and again is not None and again > first
    finally:
        await reader.close()
