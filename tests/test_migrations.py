"""Models and migrations must agree: a schema change without a migration fails here."""

from __future__ import annotations

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
