"""Sales ledger: running totals per product for availability (and a backfill from the data).

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sales_counts",
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("variation_id", sa.Integer(), nullable=False),
        sa.Column("subevent_id", sa.Integer(), nullable=False),
        sa.Column("pending", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("paid", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("carts", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.ForeignKeyConstraint(
            ["item_id"],
            ["items.id"],
            name=op.f("fk_sales_counts_item_id_items"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "item_id", "variation_id", "subevent_id", name=op.f("pk_sales_counts")
        ),
    )
    # Totals for what was sold before the ledger existed.
    op.execute(
        """
        INSERT INTO sales_counts (item_id, variation_id, subevent_id, pending, paid, carts)
        SELECT item_id, variation_id, subevent_id, sum(pending), sum(paid), sum(carts) FROM (
            SELECT p.item_id, coalesce(p.variation_id, 0) AS variation_id,
                   coalesce(p.subevent_id, 0) AS subevent_id,
                   CASE WHEN o.status = 'n' THEN 1 ELSE 0 END AS pending,
                   CASE WHEN o.status = 'p' THEN 1 ELSE 0 END AS paid, 0 AS carts
            FROM order_positions p JOIN orders o ON o.id = p.order_id
            WHERE o.status IN ('n', 'p') AND NOT p.canceled
            UNION ALL
            SELECT item_id, coalesce(variation_id, 0), coalesce(subevent_id, 0), 0, 0, 1
            FROM cart_positions
        ) AS taken
        GROUP BY item_id, variation_id, subevent_id
        """
    )


def downgrade() -> None:
    op.drop_table("sales_counts")
