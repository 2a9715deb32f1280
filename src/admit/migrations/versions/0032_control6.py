"""The order (and ticket) a queued mail is about (``outgoing_mails.order_id`` and
``position_id``), so an order's page in the back office lists the mails it was sent. Mails
queued before have neither; a deleted (test mode) order leaves its mails with NULL. And the
organizer's customers by the date they joined (the back office's list, newest first).

Revision ID: 0032_control6
Revises: 0031_invoices2
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0032_control6"
down_revision: str | None = "0031_invoices2"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("outgoing_mails", schema=None) as batch_op:
        batch_op.add_column(sa.Column("order_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("position_id", sa.Integer(), nullable=True))
        batch_op.create_index(batch_op.f("ix_outgoing_mails_order_id"), ["order_id"], unique=False)
        batch_op.create_foreign_key(
            batch_op.f("fk_outgoing_mails_order_id_orders"),
            "orders",
            ["order_id"],
            ["id"],
            ondelete="SET NULL",
        )
        batch_op.create_foreign_key(
            batch_op.f("fk_outgoing_mails_position_id_order_positions"),
            "order_positions",
            ["position_id"],
            ["id"],
            ondelete="SET NULL",
        )
    op.create_index(
        "ix_customers_organizer_joined", "customers", ["organizer_id", "date_joined", "id"]
    )


def downgrade() -> None:
    op.drop_index("ix_customers_organizer_joined", table_name="customers")
    with op.batch_alter_table("outgoing_mails", schema=None) as batch_op:
        batch_op.drop_constraint(
            batch_op.f("fk_outgoing_mails_position_id_order_positions"), type_="foreignkey"
        )
        batch_op.drop_constraint(
            batch_op.f("fk_outgoing_mails_order_id_orders"), type_="foreignkey"
        )
        batch_op.drop_index(batch_op.f("ix_outgoing_mails_order_id"))
        batch_op.drop_column("position_id")
        batch_op.drop_column("order_id")
