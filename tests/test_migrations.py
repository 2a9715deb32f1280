"""Models and migrations must agree: a schema change without a migration fails here."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from admit.db import Base


async def test_models_match_migrations(app):
    def diff(connection):
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        return compare_metadata(context, Base.metadata)

    async with app.state.db.engine.connect() as conn:
        changes = await conn.run_sync(diff)
    assert changes == [], f"models and migrations disagree: {changes}"


@pytest.mark.parametrize(
    "name", ["ORDER_STAMP", "DELETION_STAMP", "VOUCHER_STAMP", "CHECKIN_STAMP"]
)
async def test_stamp_triggers_are_installed(app, name):
    """Triggers are no part of the metadata: the migrations must install every one declared
    (a SQLite batch migration that recreates a table drops its triggers)."""
    import admit.models

    declared = getattr(admit.models, name)
    async with app.state.db.engine.connect() as conn:
        installed = await conn.run_sync(declared.installed)
    assert installed == set(declared.triggers())


async def test_create_all_installs_the_order_stamp_triggers():
    """A schema made from the metadata (not the migrations) has them too."""
    from sqlalchemy.ext.asyncio import create_async_engine

    from admit.models import CHECKIN_STAMP, DELETION_STAMP, ORDER_STAMP, VOUCHER_STAMP

    engine = create_async_engine("sqlite+aiosqlite://")  # in memory, one connection
    async with engine.begin() as conn:
        await conn.run_sync(Base.metadata.create_all)
        for declared in (ORDER_STAMP, DELETION_STAMP, VOUCHER_STAMP, CHECKIN_STAMP):
            installed = await conn.run_sync(declared.installed)
            assert installed == set(declared.triggers())
    await engine.dispose()
