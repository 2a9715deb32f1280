"""gift cards: cards, their transactions, acceptance between organizers

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-28
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import admit.db

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "gift_card_acceptances",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("issuer_id", sa.Integer(), nullable=False),
        sa.Column("acceptor_id", sa.Integer(), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("created", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["acceptor_id"],
            ["organizers.id"],
            name=op.f("fk_gift_card_acceptances_acceptor_id_organizers"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["issuer_id"],
            ["organizers.id"],
            name=op.f("fk_gift_card_acceptances_issuer_id_organizers"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_gift_card_acceptances")),
        sa.UniqueConstraint(
            "issuer_id", "acceptor_id", name=op.f("uq_gift_card_acceptances_issuer_id_acceptor_id")
        ),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("gift_card_acceptances", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_gift_card_acceptances_acceptor_id"), ["acceptor_id"], unique=False
        )

    op.create_table(
        "gift_cards",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("issuer_id", sa.Integer(), nullable=False),
        sa.Column("secret", sa.String(length=190), nullable=False),
        sa.Column("issuance", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("currency", sa.String(length=10), nullable=False),
        sa.Column("testmode", sa.Boolean(), nullable=False),
        sa.Column("expires", admit.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("conditions", sa.Text(), nullable=True),
        sa.Column("value", sa.Numeric(precision=13, scale=2), nullable=False),
        sa.Column("owner_ticket_id", sa.Integer(), nullable=True),
        sa.Column("issued_in_id", sa.Integer(), nullable=True),
        sa.CheckConstraint("value >= 0", name=op.f("ck_gift_cards_value_not_negative")),
        sa.ForeignKeyConstraint(
            ["issued_in_id"],
            ["order_positions.id"],
            name=op.f("fk_gift_cards_issued_in_id_order_positions"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["issuer_id"],
            ["organizers.id"],
            name=op.f("fk_gift_cards_issuer_id_organizers"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["owner_ticket_id"],
            ["order_positions.id"],
            name=op.f("fk_gift_cards_owner_ticket_id_order_positions"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_gift_cards")),
        sqlite_autoincrement=True,
    )
    # Secrets are unique per issuer whatever their case (an expression index).
    op.create_index(
        "uq_gift_cards_issuer_secret_lower",
        "gift_cards",
        ["issuer_id", sa.text("lower(secret)")],
        unique=True,
    )
    with op.batch_alter_table("gift_cards", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_gift_cards_issued_in_id"), ["issued_in_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_gift_cards_owner_ticket_id"), ["owner_ticket_id"], unique=False
        )

    op.create_table(
        "gift_card_transactions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("card_id", sa.Integer(), nullable=False),
        sa.Column("datetime", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("value", sa.Numeric(precision=13, scale=2), nullable=False),
        sa.Column("order_id", sa.Integer(), nullable=True),
        sa.Column("payment_id", sa.Integer(), nullable=True),
        sa.Column("text", sa.Text(), nullable=True),
        sa.Column(
            "info",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column("acceptor_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["acceptor_id"],
            ["organizers.id"],
            name=op.f("fk_gift_card_transactions_acceptor_id_organizers"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["card_id"],
            ["gift_cards.id"],
            name=op.f("fk_gift_card_transactions_card_id_gift_cards"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["order_id"],
            ["orders.id"],
            name=op.f("fk_gift_card_transactions_order_id_orders"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["payment_id"],
            ["order_payments.id"],
            name=op.f("fk_gift_card_transactions_payment_id_order_payments"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_gift_card_transactions")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("gift_card_transactions", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_gift_card_transactions_card_id"), ["card_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_gift_card_transactions_order_id"), ["order_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("gift_card_transactions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_gift_card_transactions_order_id"))
        batch_op.drop_index(batch_op.f("ix_gift_card_transactions_card_id"))

    op.drop_table("gift_card_transactions")
    with op.batch_alter_table("gift_cards", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_gift_cards_owner_ticket_id"))
        batch_op.drop_index(batch_op.f("ix_gift_cards_issued_in_id"))
    op.drop_index("uq_gift_cards_issuer_secret_lower", table_name="gift_cards")

    op.drop_table("gift_cards")
    with op.batch_alter_table("gift_card_acceptances", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_gift_card_acceptances_acceptor_id"))

    op.drop_table("gift_card_acceptances")
