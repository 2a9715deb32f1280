"""Event settings and waiting list priority.

``events.settings`` holds the event's settings that were set (key -> JSON value; the keys and
their defaults are declared in ``admit.events.settings``). Events that had a payment plugin
enabled keep being able to go live: the plugin's method is switched on in their settings
(``payment_banktransfer__enabled`` / ``payment_manual__enabled``), which the reference asks
for besides the plugin. ``waiting_list_entries.priority`` orders who gets a voucher first.

Revision ID: 0027
Revises: 0026
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0027"
down_revision: str | None = "0026"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
_METHODS = {
    "banktransfer": "payment_banktransfer__enabled",
    "manualpayment": "payment_manual__enabled",
}


def upgrade() -> None:
    # Plain ADD COLUMN (also on SQLite): a batch copy of ``events`` would drop its triggers.
    op.add_column(
        "events", sa.Column("settings", JSON, nullable=False, server_default=sa.text("'{}'"))
    )
    op.add_column(
        "waiting_list_entries",
        sa.Column("priority", sa.Integer(), nullable=False, server_default=sa.text("0")),
    )
    events = sa.table(
        "events",
        sa.column("id", sa.Integer()),
        sa.column("plugins", JSON),
        sa.column("settings", JSON),
    )
    bind = op.get_bind()
    for event_id, plugins in bind.execute(sa.select(events.c.id, events.c.plugins)).all():
        enabled = {key: True for name, key in _METHODS.items() if name in (plugins or [])}
        if enabled:
            bind.execute(events.update().where(events.c.id == event_id).values(settings=enabled))


def downgrade() -> None:
    op.drop_column("waiting_list_entries", "priority")
    op.drop_column("events", "settings")
