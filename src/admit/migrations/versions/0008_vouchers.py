"""vouchers, waiting list entries, waiting list settings

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import admit.db

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "vouchers",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("created", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("code", sa.String(length=255), nullable=False),
        sa.Column("max_usages", sa.Integer(), nullable=False),
        sa.Column("redeemed", sa.Integer(), nullable=False),
        sa.Column("min_usages", sa.Integer(), nullable=False),
        sa.Column("valid_until", admit.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("block_quota", sa.Boolean(), nullable=False),
        sa.Column("allow_ignore_quota", sa.Boolean(), nullable=False),
        sa.Column("price_mode", sa.String(length=16), nullable=False),
        sa.Column("value", sa.Numeric(precision=13, scale=2), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=True),
        sa.Column("variation_id", sa.Integer(), nullable=True),
        sa.Column("quota_id", sa.Integer(), nullable=True),
        sa.Column("subevent_id", sa.Integer(), nullable=True),
        sa.Column("seat_id", sa.Integer(), nullable=True),
        sa.Column("tag", sa.String(length=255), nullable=False),
        sa.Column("comment", sa.Text(), nullable=False),
        sa.Column("show_hidden_items", sa.Boolean(), nullable=False),
        sa.Column("all_addons_included", sa.Boolean(), nullable=False),
        sa.Column("all_bundles_included", sa.Boolean(), nullable=False),
        sa.Column("budget", sa.Numeric(precision=13, scale=2), nullable=True),
        sa.Column("budget_used", sa.Numeric(precision=13, scale=2), nullable=False),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["events.id"],
            name=op.f("fk_vouchers_event_id_events"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["item_id"], ["items.id"], name=op.f("fk_vouchers_item_id_items"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["quota_id"],
            ["quotas.id"],
            name=op.f("fk_vouchers_quota_id_quotas"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["subevent_id"],
            ["subevents.id"],
            name=op.f("fk_vouchers_subevent_id_subevents"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["variation_id"],
            ["item_variations.id"],
            name=op.f("fk_vouchers_variation_id_item_variations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_vouchers")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("vouchers", schema=None) as batch_op:
        batch_op.create_index(
            "ix_vouchers_event_block_quota", ["event_id", "block_quota"], unique=False
        )
        batch_op.create_index("ix_vouchers_event_tag", ["event_id", "tag"], unique=False)
        batch_op.create_index(batch_op.f("ix_vouchers_item_id"), ["item_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_vouchers_quota_id"), ["quota_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_vouchers_seat_id"), ["seat_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_vouchers_subevent_id"), ["subevent_id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_vouchers_variation_id"), ["variation_id"], unique=False
        )
    # Case-insensitive uniqueness of codes per event (an expression index).
    op.create_index(
        "uq_vouchers_event_code_lower",
        "vouchers",
        ["event_id", sa.text("lower(code)")],
        unique=True,
    )

    op.create_table(
        "waiting_list_entries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("subevent_id", sa.Integer(), nullable=True),
        sa.Column("created", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column(
            "name_parts",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("name_cached", sa.String(length=255), nullable=True),
        sa.Column("email", sa.String(length=254), nullable=False),
        sa.Column("phone", sa.String(length=64), nullable=True),
        sa.Column("voucher_id", sa.Integer(), nullable=True),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("variation_id", sa.Integer(), nullable=True),
        sa.Column("locale", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["events.id"],
            name=op.f("fk_waiting_list_entries_event_id_events"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["item_id"],
            ["items.id"],
            name=op.f("fk_waiting_list_entries_item_id_items"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["subevent_id"],
            ["subevents.id"],
            name=op.f("fk_waiting_list_entries_subevent_id_subevents"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["variation_id"],
            ["item_variations.id"],
            name=op.f("fk_waiting_list_entries_variation_id_item_variations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["voucher_id"],
            ["vouchers.id"],
            name=op.f("fk_waiting_list_entries_voucher_id_vouchers"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_waiting_list_entries")),
        sa.UniqueConstraint("voucher_id", name=op.f("uq_waiting_list_entries_voucher_id")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("waiting_list_entries", schema=None) as batch_op:
        batch_op.create_index(
            "ix_waiting_list_entries_event_created", ["event_id", "created"], unique=False
        )
        batch_op.create_index(
            "ix_waiting_list_entries_event_item",
            ["event_id", "item_id", "variation_id", "subevent_id", "voucher_id"],
            unique=False,
        )
        batch_op.create_index(
            batch_op.f("ix_waiting_list_entries_subevent_id"), ["subevent_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_waiting_list_entries_variation_id"), ["variation_id"], unique=False
        )

    op.create_table(
        "waiting_list_settings",
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("auto_assign", sa.Boolean(), nullable=False),
        sa.Column("voucher_hours", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["events.id"],
            name=op.f("fk_waiting_list_settings_event_id_events"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("event_id", name=op.f("pk_waiting_list_settings")),
        sqlite_autoincrement=True,
    )


def downgrade() -> None:
    op.drop_table("waiting_list_settings")
    with op.batch_alter_table("waiting_list_entries", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_waiting_list_entries_variation_id"))
        batch_op.drop_index(batch_op.f("ix_waiting_list_entries_subevent_id"))
        batch_op.drop_index("ix_waiting_list_entries_event_item")
        batch_op.drop_index("ix_waiting_list_entries_event_created")
    op.drop_table("waiting_list_entries")
    op.drop_index("uq_vouchers_event_code_lower", table_name="vouchers")
    with op.batch_alter_table("vouchers", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_vouchers_variation_id"))
        batch_op.drop_index(batch_op.f("ix_vouchers_subevent_id"))
        batch_op.drop_index(batch_op.f("ix_vouchers_seat_id"))
        batch_op.drop_index(batch_op.f("ix_vouchers_quota_id"))
        batch_op.drop_index(batch_op.f("ix_vouchers_item_id"))
        batch_op.drop_index("ix_vouchers_event_tag")
        batch_op.drop_index("ix_vouchers_event_block_quota")
    op.drop_table("vouchers")
