"""Indexes for the order, position and check-in list pages: orders by event and datetime
(the reference's default order), live positions by event and attendee name (the check-in
lists' default order, and what counts an event's live positions).

Revision ID: 0019
Revises: 0018
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_orders_event_datetime", "orders", ["event_id", "datetime", "id"])
    op.create_index(
        "ix_order_positions_event_name",
        "order_positions",
        ["event_id", "attendee_name_cached", "positionid", "id"],
        postgresql_where=sa.text("canceled IS false"),
        sqlite_where=sa.text("canceled IS 0"),
    )


def downgrade() -> None:
    op.drop_index("ix_order_positions_event_name", table_name="order_positions")
    op.drop_index("ix_orders_event_datetime", table_name="orders")
