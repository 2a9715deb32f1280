"""Idempotency keys, order refunds, the events' catalog change stamp, orders' customer.

Revision ID: 0016
Revises: 0015
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import admit.db

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "idempotency_keys",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("credential", sa.String(length=64), nullable=False),
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("method", sa.String(length=8), nullable=False),
        sa.Column("path", sa.String(length=1000), nullable=False),
        sa.Column("body_hash", sa.String(length=64), nullable=False),
        sa.Column("status", sa.Integer(), nullable=True),
        sa.Column(
            "headers",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("body", sa.LargeBinary(), nullable=False),
        sa.Column("created", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("expires", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_idempotency_keys")),
        sa.UniqueConstraint("credential", "key", name=op.f("uq_idempotency_keys_credential_key")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("idempotency_keys", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_idempotency_keys_expires"), ["expires"], unique=False)

    op.create_table(
        "order_refunds",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("order_id", sa.Integer(), nullable=False),
        sa.Column("local_id", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("amount", sa.Numeric(precision=13, scale=2), nullable=False),
        sa.Column("payment_id", sa.Integer(), nullable=True),
        sa.Column("provider", sa.String(length=64), nullable=False),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.Column("created", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("execution_date", admit.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column(
            "info",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["order_id"],
            ["orders.id"],
            name=op.f("fk_order_refunds_order_id_orders"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["payment_id"],
            ["order_payments.id"],
            name=op.f("fk_order_refunds_payment_id_order_payments"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_order_refunds")),
        sa.UniqueConstraint(
            "order_id", "local_id", name=op.f("uq_order_refunds_order_id_local_id")
        ),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("order_refunds", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_order_refunds_order_id"), ["order_id"], unique=False)

    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "catalog_modified",
                admit.db.UTCDateTime(timezone=True),
                nullable=False,
                server_default=sa.text("CURRENT_TIMESTAMP"),
            )
        )
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.alter_column("catalog_modified", server_default=None)

    with op.batch_alter_table("orders", schema=None) as batch_op:
        batch_op.add_column(sa.Column("customer_id", sa.Integer(), nullable=True))
        batch_op.create_index(batch_op.f("ix_orders_customer_id"), ["customer_id"], unique=False)
        batch_op.create_foreign_key(
            batch_op.f("fk_orders_customer_id_customers"),
            "customers",
            ["customer_id"],
            ["id"],
            ondelete="SET NULL",
        )


def downgrade() -> None:
    with op.batch_alter_table("orders", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_orders_customer_id_customers"), type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_orders_customer_id"))
        batch_op.drop_column("customer_id")

    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.drop_column("catalog_modified")

    with op.batch_alter_table("order_refunds", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_order_refunds_order_id"))

    op.drop_table("order_refunds")
    with op.batch_alter_table("idempotency_keys", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_idempotency_keys_expires"))

    op.drop_table("idempotency_keys")
