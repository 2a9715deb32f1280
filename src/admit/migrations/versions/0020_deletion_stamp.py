"""Deletion stamp, row stamps of vouchers and check-ins, and the orders' (event,
last_modified) index, for the kept list pages.

``events.rows_deleted`` is moved by triggers whenever one of the event's orders, check-ins or
vouchers is deleted (DDL from ``admit.models.deletion_stamp.DELETION_STAMP``, the one
definition ``metadata.create_all`` uses as well). The orders' ``last_modified`` index becomes
(event, last_modified): polling with ``modified_since`` and the pages' probe for orders
changed since a bound both ask within one event. ``vouchers.last_modified`` and
``checkins.last_modified`` are moved by row triggers on every insert and update
(``admit.models.row_stamps``), each with its (event, last_modified) index; older rows keep NULL.

Revision ID: 0020
Revises: 0019
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import admit.db
from admit.models.deletion_stamp import DELETION_STAMP
from admit.models.order_stamp import ORDER_STAMP
from admit.models.row_stamps import ROW_STAMPS

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "rows_deleted",
                admit.db.UTCDateTime(timezone=True),
                nullable=False,
                server_default=sa.text("CURRENT_TIMESTAMP"),
            )
        )
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.alter_column("rows_deleted", server_default=None)
    op.drop_index("ix_orders_last_modified", table_name="orders")
    op.create_index("ix_orders_event_last_modified", "orders", ["event_id", "last_modified"])
    for table in ("vouchers", "checkins"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(
                sa.Column("last_modified", admit.db.UTCDateTime(timezone=True), nullable=True)
            )
        op.create_index(f"ix_{table}_event_last_modified", table, ["event_id", "last_modified"])
    for stamp in (DELETION_STAMP, *ROW_STAMPS):
        stamp.install(op.get_bind())


def downgrade() -> None:
    for stamp in ROW_STAMPS:
        stamp.uninstall(op.get_bind())
    for table in ("vouchers", "checkins"):
        op.drop_index(f"ix_{table}_event_last_modified", table_name=table)
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_column("last_modified")  # SQLite: the table is made anew
    DELETION_STAMP.uninstall(op.get_bind())
    ORDER_STAMP.install(op.get_bind())  # its check-in triggers went with the old table
    op.drop_index("ix_orders_event_last_modified", table_name="orders")
    op.create_index("ix_orders_last_modified", "orders", ["last_modified"])
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.drop_column("rows_deleted")
