"""Indexes for the counts of the order, position and check-in list pages: an event's live
positions by order (narrow enough to be counted alone, and joined with the orders for a
check-in list's count), and the orders' status index with ``valid_if_pending`` and the id (a
check-in list's count reads the orders' side from it alone). It replaces the index on
(event, status), whose uses it serves too.

Revision ID: 0035_render2
Revises: 0034_organizer_settings
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0035_render2"
down_revision: str | None = "0034_organizer_settings"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_order_positions_event_live",
        "order_positions",
        ["event_id", "order_id"],
        postgresql_where=sa.text("canceled IS false"),
        sqlite_where=sa.text("canceled IS 0"),
    )
    op.create_index(
        "ix_orders_event_status_valid",
        "orders",
        ["event_id", "status", "valid_if_pending", "id"],
    )
    op.drop_index("ix_orders_event_status", table_name="orders")


def downgrade() -> None:
    op.create_index("ix_orders_event_status", "orders", ["event_id", "status"])
    op.drop_index("ix_orders_event_status_valid", table_name="orders")
    op.drop_index("ix_order_positions_event_live", table_name="order_positions")
