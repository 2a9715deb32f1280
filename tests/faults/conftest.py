"""Fault tests: real server processes against real PostgreSQL, broken on purpose.

Each test gets a database of its own, copied from one migrated template (a copy takes a
fraction of a second, migrating takes several): its server's background work must not meet
another test's jobs.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from tests.faults.site import NOT_ON_PG, PG_URL


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "slow: a live fault test (a server process, tens of seconds; PostgreSQL only)"
    )


async def _admin(sql: str) -> None:
    assert PG_URL
    admin = create_async_engine(
        make_url(PG_URL).set(database="postgres"), isolation_level="AUTOCOMMIT"
    )
    try:
        async with admin.connect() as conn:
            await conn.execute(text(sql))
    finally:
        await admin.dispose()


@pytest.fixture(scope="session")
async def fault_template() -> AsyncIterator[str]:
    if not PG_URL:
        pytest.skip(NOT_ON_PG)
    from admit.migrate import upgrade
    from tests.conftest import _create_pg_database, _drop_pg_database

    url = await _create_pg_database(PG_URL)
    await asyncio.to_thread(upgrade, url)
    yield make_url(url).database  # type: ignore[misc]
    await _drop_pg_database(url)


@pytest.fixture
async def fresh_database(fault_template: str) -> AsyncIterator[str]:
    """A migrated database for this test alone (a copy of the template)."""
    assert PG_URL
    name = f"{fault_template}_{uuid.uuid4().hex[:6]}"
    await _admin(f'CREATE DATABASE "{name}" TEMPLATE "{fault_template}"')
    yield make_url(PG_URL).set(database=name).render_as_string(hide_password=False)
    await _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
