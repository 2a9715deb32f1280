"""check-in: lists, check-ins, auto check-in rules, revoked secrets, notification outbox

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import admit.db

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "notifications",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("organizer_id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=True),
        sa.Column("action", sa.String(length=190), nullable=False),
        sa.Column(
            "payload",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("created", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["events.id"],
            name=op.f("fk_notifications_event_id_events"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["organizer_id"],
            ["organizers.id"],
            name=op.f("fk_notifications_organizer_id_organizers"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_notifications")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("notifications", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_notifications_event_id"), ["event_id"], unique=False)
        batch_op.create_index(
            "ix_notifications_organizer_created", ["organizer_id", "created"], unique=False
        )

    op.create_table(
        "checkin_lists",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=190), nullable=False),
        sa.Column("all_products", sa.Boolean(), nullable=False),
        sa.Column("subevent_id", sa.Integer(), nullable=True),
        sa.Column("include_pending", sa.Boolean(), nullable=False),
        sa.Column("allow_multiple_entries", sa.Boolean(), nullable=False),
        sa.Column("allow_entry_after_exit", sa.Boolean(), nullable=False),
        sa.Column("exit_all_at", admit.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("addon_match", sa.Boolean(), nullable=False),
        sa.Column("ignore_in_statistics", sa.Boolean(), nullable=False),
        sa.Column("consider_tickets_used", sa.Boolean(), nullable=False),
        sa.Column(
            "rules",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("created", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["events.id"],
            name=op.f("fk_checkin_lists_event_id_events"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["subevent_id"],
            ["subevents.id"],
            name=op.f("fk_checkin_lists_subevent_id_subevents"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_checkin_lists")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("checkin_lists", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_checkin_lists_event_id"), ["event_id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_checkin_lists_exit_all_at"), ["exit_all_at"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_checkin_lists_subevent_id"), ["subevent_id"], unique=False
        )

    op.create_table(
        "auto_checkin_rules",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("list_id", sa.Integer(), nullable=True),
        sa.Column("mode", sa.String(length=16), nullable=False),
        sa.Column("all_sales_channels", sa.Boolean(), nullable=False),
        sa.Column(
            "limit_sales_channels",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("all_products", sa.Boolean(), nullable=False),
        sa.Column("all_payment_methods", sa.Boolean(), nullable=False),
        sa.Column(
            "limit_payment_methods",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["events.id"],
            name=op.f("fk_auto_checkin_rules_event_id_events"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["list_id"],
            ["checkin_lists.id"],
            name=op.f("fk_auto_checkin_rules_list_id_checkin_lists"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_auto_checkin_rules")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("auto_checkin_rules", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_auto_checkin_rules_event_id"), ["event_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_auto_checkin_rules_list_id"), ["list_id"], unique=False
        )

    op.create_table(
        "checkin_list_gates",
        sa.Column("list_id", sa.Integer(), nullable=False),
        sa.Column("gate_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["list_id"],
            ["checkin_lists.id"],
            name=op.f("fk_checkin_list_gates_list_id_checkin_lists"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("list_id", "gate_id", name=op.f("pk_checkin_list_gates")),
    )
    op.create_table(
        "checkin_list_items",
        sa.Column("list_id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["item_id"],
            ["items.id"],
            name=op.f("fk_checkin_list_items_item_id_items"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["list_id"],
            ["checkin_lists.id"],
            name=op.f("fk_checkin_list_items_list_id_checkin_lists"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("list_id", "item_id", name=op.f("pk_checkin_list_items")),
    )
    with op.batch_alter_table("checkin_list_items", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_checkin_list_items_item_id"), ["item_id"], unique=False
        )

    op.create_table(
        "auto_checkin_rule_items",
        sa.Column("rule_id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["item_id"],
            ["items.id"],
            name=op.f("fk_auto_checkin_rule_items_item_id_items"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["rule_id"],
            ["auto_checkin_rules.id"],
            name=op.f("fk_auto_checkin_rule_items_rule_id_auto_checkin_rules"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("rule_id", "item_id", name=op.f("pk_auto_checkin_rule_items")),
    )
    with op.batch_alter_table("auto_checkin_rule_items", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_auto_checkin_rule_items_item_id"), ["item_id"], unique=False
        )

    op.create_table(
        "auto_checkin_rule_variations",
        sa.Column("rule_id", sa.Integer(), nullable=False),
        sa.Column("variation_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["rule_id"],
            ["auto_checkin_rules.id"],
            name=op.f("fk_auto_checkin_rule_variations_rule_id_auto_checkin_rules"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["variation_id"],
            ["item_variations.id"],
            name=op.f("fk_auto_checkin_rule_variations_variation_id_item_variations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "rule_id", "variation_id", name=op.f("pk_auto_checkin_rule_variations")
        ),
    )
    with op.batch_alter_table("auto_checkin_rule_variations", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_auto_checkin_rule_variations_variation_id"),
            ["variation_id"],
            unique=False,
        )

    op.create_table(
        "checkins",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("list_id", sa.Integer(), nullable=False),
        sa.Column("position_id", sa.Integer(), nullable=True),
        sa.Column("seq", sa.Integer(), nullable=True),
        sa.Column("type", sa.String(length=8), nullable=False),
        sa.Column("datetime", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("created", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("successful", sa.Boolean(), nullable=False),
        sa.Column("error_reason", sa.String(length=32), nullable=True),
        sa.Column("error_explanation", sa.Text(), nullable=True),
        sa.Column("auto_checked_in", sa.Boolean(), nullable=False),
        sa.Column("forced", sa.Boolean(), nullable=False),
        sa.Column("nonce", sa.String(length=190), nullable=True),
        sa.Column("device_id", sa.Integer(), nullable=True),
        sa.Column("device_number", sa.Integer(), nullable=True),
        sa.Column("gate_id", sa.Integer(), nullable=True),
        sa.Column("raw_barcode", sa.Text(), nullable=True),
        sa.Column("raw_source_type", sa.String(length=32), nullable=True),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["events.id"],
            name=op.f("fk_checkins_event_id_events"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["list_id"],
            ["checkin_lists.id"],
            name=op.f("fk_checkins_list_id_checkin_lists"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["position_id"],
            ["order_positions.id"],
            name=op.f("fk_checkins_position_id_order_positions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_checkins")),
        sa.UniqueConstraint(
            "position_id", "list_id", "seq", name=op.f("uq_checkins_position_id_list_id_seq")
        ),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("checkins", schema=None) as batch_op:
        batch_op.create_index("ix_checkins_event_created", ["event_id", "created"], unique=False)
        batch_op.create_index("ix_checkins_event_datetime", ["event_id", "datetime"], unique=False)
        batch_op.create_index(
            "ix_checkins_event_exits",
            ["event_id", "position_id"],
            unique=False,
            postgresql_where=sa.text("type = 'exit'"),
            sqlite_where=sa.text("type = 'exit'"),
        )
        batch_op.create_index(batch_op.f("ix_checkins_nonce"), ["nonce"], unique=False)

    op.create_table(
        "revoked_ticket_secrets",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("position_id", sa.Integer(), nullable=False),
        sa.Column("secret", sa.String(length=255), nullable=False),
        sa.Column("created", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["events.id"],
            name=op.f("fk_revoked_ticket_secrets_event_id_events"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["position_id"],
            ["order_positions.id"],
            name=op.f("fk_revoked_ticket_secrets_position_id_order_positions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_revoked_ticket_secrets")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("revoked_ticket_secrets", schema=None) as batch_op:
        batch_op.create_index(
            "ix_revoked_ticket_secrets_event_secret", ["event_id", "secret"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_revoked_ticket_secrets_position_id"), ["position_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("revoked_ticket_secrets", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_revoked_ticket_secrets_position_id"))
        batch_op.drop_index("ix_revoked_ticket_secrets_event_secret")

    op.drop_table("revoked_ticket_secrets")
    with op.batch_alter_table("checkins", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_checkins_nonce"))
        batch_op.drop_index("ix_checkins_event_exits")
        batch_op.drop_index("ix_checkins_event_datetime")
        batch_op.drop_index("ix_checkins_event_created")

    op.drop_table("checkins")
    with op.batch_alter_table("auto_checkin_rule_variations", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_auto_checkin_rule_variations_variation_id"))

    op.drop_table("auto_checkin_rule_variations")
    with op.batch_alter_table("auto_checkin_rule_items", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_auto_checkin_rule_items_item_id"))

    op.drop_table("auto_checkin_rule_items")
    with op.batch_alter_table("checkin_list_items", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_checkin_list_items_item_id"))

    op.drop_table("checkin_list_items")
    op.drop_table("checkin_list_gates")
    with op.batch_alter_table("auto_checkin_rules", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_auto_checkin_rules_list_id"))
        batch_op.drop_index(batch_op.f("ix_auto_checkin_rules_event_id"))

    op.drop_table("auto_checkin_rules")
    with op.batch_alter_table("checkin_lists", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_checkin_lists_subevent_id"))
        batch_op.drop_index(batch_op.f("ix_checkin_lists_exit_all_at"))
        batch_op.drop_index(batch_op.f("ix_checkin_lists_event_id"))

    op.drop_table("checkin_lists")
    with op.batch_alter_table("notifications", schema=None) as batch_op:
        batch_op.drop_index("ix_notifications_organizer_created")
        batch_op.drop_index(batch_op.f("ix_notifications_event_id"))

    op.drop_table("notifications")
